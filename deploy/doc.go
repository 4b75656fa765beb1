// Package deploy holds no code: its test checks the deployment files
// beside it — every firn configuration with `firn config check` and for
// secrets written in it or a wildcard listener, every Kubernetes manifest
// decoded strictly into the k8s.io/api types, and the systemd unit;
// cmd/image builds firn's container image (make image). It is a module
// of its own so that users of firn's packages inherit neither k8s.io/api
// nor go-containerregistry.
package deploy
