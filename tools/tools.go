//go:build tools

// Package tools pins the development tools, so library users of firn do not
// inherit them.
package tools

import _ "github.com/golangci/golangci-lint/v2/cmd/golangci-lint"
