// Package server serves firn's generators over HTTP and gRPC: snowflake
// IDs, segment IDs per tag, decoding, and health. New builds a Server from
// a Config of the generators; it imports no store, and cmd/firn composes
// the Config from the stores it configures.
//
// Before a Server exists — while a process waits for its stores and a
// node — Starting answers on both ports, saying why nothing is served yet,
// and Handoff passes the gRPC port from Starting's server to the
// Server's. Replace installs the generator of a node acquired again after
// a lost lease (node.Holder's Watch calls it).
//
// Every route and gRPC method declares the scope a token needs where it
// is registered (open, snowflake, admin, or the tag the request names);
// a route without one keeps the server from being built, and the open
// routes are an explicit list: health, readiness, metrics, the API
// document.
//
// IDs travel as JSON strings by default, since JavaScript rounds integers
// above 2^53; ?format=number gives numbers, and Accept: text/plain one ID
// per line. Every failure is a 4xx or 503 with a JSON body
// {"error":{"code":"…","message":"…"}}; a 500 is a bug (a panic, logged with its stack).
package server
