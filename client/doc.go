// Package client is the Go SDK of a firn service: it fetches snowflake and
// segment IDs from one or more `firn serve` processes, keeps a local buffer
// of them per mode and tag, refills it in the background before it runs
// dry, and fails over between servers.
//
//	c, err := client.New(client.Config{Endpoints: []string{"10.0.0.1:9090", "10.0.0.2:9090"}})
//	id, err := c.Next(ctx)                    // a snowflake ID
//	order, err := c.Tag("order").Next(ctx)    // a segment ID of the tag "order"
//
// New does no I/O: the first call of a mode or tag dials and fills its
// buffer. Afterwards callers take IDs from memory and never wait on the
// network while the buffer holds IDs; a refill runs in the background once
// what is left falls below Config.Refill of the buffer's size, and the size
// follows the observed rate.
//
// Every ID the client hands out was issued by a server for this client
// alone, so IDs are unique across clients and servers. They are not
// ordered across refills: two refills may come back in either order, and
// from different servers.
//
// A snowflake ID fetched ahead of time is still unique, but its timestamp
// is as old as the fetch. Buffered snowflake IDs therefore have a maximum
// age (Config.MaxAge, default 1 s, counted from when the request that
// fetched them was sent), after which they are dropped unused. Segment IDs
// do not age; the ones still buffered at Close are lost (never reissued).
//
// Errors callers branch on are the sentinels in errors.go, wrapped in an
// *Error that names the server and its answer; never a raw gRPC status.
package client
