// Package server serves firn's generators over HTTP: snowflake IDs,
// segment IDs per tag, decoding, and health. It speaks to the generators
// through Service and imports no store; cmd/firn composes a Service from
// the stores it configures.
//
// IDs travel as JSON strings by default, since JavaScript rounds integers
// above 2^53; ?format=number gives numbers, and Accept: text/plain one ID
// per line. Every failure is a 4xx or 503 with a JSON body
// {"error":{"code":"…","message":"…"}}, never a 500.
package server
