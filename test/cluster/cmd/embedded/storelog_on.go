//go:build firn_clockhook

package main

import (
	"fmt"
	"os"

	"github.com/firn-id/firn/internal/storelog"
	"github.com/firn-id/firn/nodeid"
)

// recordNodes, in a binary built with the firn_clockhook tag and only when
// FIRN_TEST_STORE_LOG names a file, records every operation on the node
// store to that file (package storelog), as firn serve's test build does
// (cmd/firn/storelog_on.go), for the harness's linearizability check. A
// log it cannot write ends the process: a history missing an operation
// could pass where the store broke a rule.
func recordNodes(s nodeid.Store) (nodeid.Store, error) {
	path := os.Getenv("FIRN_TEST_STORE_LOG")
	if path == "" {
		return s, nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("FIRN_TEST_STORE_LOG: %w", err)
	}
	fmt.Fprintf(os.Stderr, "embedded: TEST BUILD: every node-store operation is recorded to %s\n", path)
	return storelog.Wrap(s, f, func(err error) {
		fmt.Fprintf(os.Stderr, "embedded: TEST BUILD: write the store log %s: %v\n", path, err)
		os.Exit(1)
	}), nil
}
