// Package client is the Go SDK of a firn service: it fetches snowflake and
// segment IDs from one or more `firn serve` processes, keeps a local buffer
// of them per mode and tag, refills it in the background before it runs
// dry, and hides a server that is down, paused or slow.
//
//	c, err := client.New(client.Config{Endpoints: []string{"10.0.0.1:9090", "10.0.0.2:9090"}})
//	id, err := c.Next(ctx)                    // a snowflake ID
//	order, err := c.Tag("order").Next(ctx)    // a segment ID of the tag "order"
//
// New checks every endpoint (a host, a port from 1 to 65535; with HTTP an
// http or https base URL with no path, query, fragment or credentials; no
// server twice) and does no I/O: the first call of a mode or tag dials and
// fills its buffer. Afterwards callers take IDs from memory and never wait
// on the network while the buffer holds IDs; a refill runs in the
// background once what is left falls below Config.Refill of the buffer's
// size, and the size follows the observed rate.
//
// A refill goes to the server with the better score of two picked at
// random, its score being its smoothed latency times its requests in
// flight, so the load follows observed latency. A request not answered
// within a budget — four times that server's latency, from 5 ms up to
// min(Timeout/8, MaxAge/4) — is hedged: an independent request goes to
// another healthy server, and the first good answer wins. The other
// request's IDs, when they come, are kept if fresh (a snowflake answer
// younger than MaxAge, counted from that request's own sending) or
// dropped; a server issues every ID for one request only, so neither way
// repeats an ID. A failed request, or a snowflake answer as old as
// MaxAge, counts against its server: it is marked down and the refill
// moves on to another at once. A server's first answer for a tag, which
// may wait for its store's first range, is not counted as slowness. A
// down server is checked every HealthInterval (gRPC health, or /readyz),
// each check dialling anew and bounded by the interval, so a server that
// is ready again is back within one interval however long it was away.
// Callers see ErrUnavailable only when no server answers in time; the
// *Error then names every server tried and why each failed (Error.Tried).
// A server that refuses the connection fails its try at once, said as
// refused, never as a timeout: over gRPC a connection whose last dial
// failed is replaced by a new one before a request, which waits for its
// own dial only. With every server refusing, a refill fails after
// Config.Attempts tries and their backoff, not after Config.Timeout.
// A call whose context ends while it waits for a refill returns the
// context's error, joined, when a request of its buffer's refills failed
// since they last brought IDs, with that failure (errors.Is holds for
// both): a deadline still names the server and why.
//
// Every ID the client hands out was issued by a server for this client
// alone, so IDs are unique across clients and servers. They are not
// ordered across refills: two refills may come back in either order, and
// from different servers.
//
// A batch a server never sends is a bad answer (Error.Code "bad_answer",
// of kind ErrUnavailable): any batch with an ID twice — a broken server,
// or a proxy mixing answers, would otherwise hand one ID to several
// callers — and a snowflake batch whose IDs do not strictly increase
// unless its answer says they are unordered. None of its IDs is served;
// it counts as a failure of its server, which is marked down, and the
// refill moves on to another. Every batch answer says how its IDs are
// ordered, in the header Firn-Order over HTTP and the response header
// metadata firn-order over gRPC (api.Order): "increasing", or
// "unordered" for a server whose layout puts the sequence above time
// (its batches drop at every tick; snowflake.Layout.Increasing) or that
// runs in opaque mode (its IDs are permuted). An answer that says
// nothing, or anything else, is held to increasing order, so a header
// lost on the way costs availability, never a check. Segment batches are
// checked for distinct IDs only, whatever they say (an opaque tag's IDs
// are permuted, and a range fetched after a store failed over may be
// lower), and so are UUID and ULID batches (NextUUIDs, NextULIDs), as the
// 128-bit values they parse to: a UUID in upper case, in braces, as a URN
// or without dashes, or a ULID in lower case, is the same ID. Only each
// batch is checked, never its order against earlier
// ones: two requests to one server may answer in either order, and one
// address may be several servers behind a load balancer. A cache
// replaying a whole answer is therefore not caught here; servers mark the
// answers of their ID routes Cache-Control: no-store so that no cache
// keeps them.
//
// A snowflake ID fetched ahead of time is still unique, but its timestamp
// is as old as the fetch. Buffered snowflake IDs therefore have a maximum
// age (Config.MaxAge, default 1 s, counted from when the request that
// fetched them was sent), after which they are dropped unused. Segment IDs
// do not age; the ones still buffered at Close are lost (never reissued).
//
// Over HTTP the client also speaks the rest of the API, unbuffered, with
// the bodies of package api: Fetch and Tag.Fetch (IDs asked for the call,
// in the order issued), Info, Decode, Reveal, Guess, and the segment admin
// calls (Tags, CreateTag, SetStep, Advance). Every answer is read by one
// rule: a text answer of IDs must end each line with a newline and hold
// as many IDs as asked (AppendText), a JSON answer must be whole; anything
// else is an error and nothing of it is returned. The batch rules above
// apply to Fetch too. firn next, firn tag and firn bench talk to a server
// through this package.
//
// Errors callers branch on are the sentinels in errors.go, wrapped in an
// *Error that names the server and its answer; never a raw gRPC status.
// Stats gives the client's figures; package client/clientprom exposes them
// as Prometheus metrics without making this package import Prometheus.
package client
