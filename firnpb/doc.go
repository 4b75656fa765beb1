// Package firnpb holds firn's gRPC service definition (firn.proto) and the
// code generated from it, committed so that building never needs protoc.
// Regenerate with `make proto`.
package firnpb
