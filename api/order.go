package api

// Order is the header every batch answer of snowflake or segment IDs
// carries (GET /v1/snowflake/batch, /v1/segments/{tag}/batch), and the
// response header metadata (key in lower case, as gRPC has it) of Batch,
// SegmentBatch and Stream: how the batch's IDs are ordered, OrderIncreasing
// or OrderUnordered. A server computes it from its configuration, not
// from the IDs. A client that reads anything else, or nothing (a server
// from before the header, a proxy that drops it), takes a snowflake batch
// to be OrderIncreasing and refuses one that is not: it never trusts
// less than it is told.
const Order = "Firn-Order"

const (
	// OrderIncreasing says the IDs strictly increase: a snowflake batch
	// of a layout whose generator issues increasing IDs
	// (snowflake.Layout.Increasing), not in opaque mode.
	OrderIncreasing = "increasing"
	// OrderUnordered says the IDs are distinct and in no order a client
	// may rely on: a snowflake batch of a layout with the sequence above
	// time, whose first ID of a tick is below the last of the tick
	// before, or in opaque mode (permuted); and every segment batch (an
	// opaque tag's IDs are permuted, and a range fetched after a store
	// failed over may be lower).
	OrderUnordered = "unordered"
)
