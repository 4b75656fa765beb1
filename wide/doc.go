// Package wide issues firn IDs in 128-bit forms — UUIDv7 (RFC 9562) and
// ULID — and takes apart the 128-bit and 96/160-bit IDs of other systems:
// UUIDs, ULIDs, MongoDB ObjectIds, KSUIDs and xids.
//
// A wide ID is one slot of a snowflake.Generator — a (tick, node,
// sequence) triple that the generator hands out once, bounded by its HWM
// like every firn ID — packed into 128 bits:
//
//	UUIDv7: unix_ts_ms (48) | ver 7 (4) | sequence | node | random | (the 2 variant bits sit after the first 12 bits of the tail)
//	ULID:   unix_ts_ms (48) | sequence | node | random            (80 bits of tail)
//
// unix_ts_ms is the start of the tick: layout epoch + tick × tick length,
// in Unix milliseconds. The sequence comes right after the timestamp
// (RFC 9562 §6.2, Method 1: a fixed-length counter in the most significant
// bits after the time) and the node after it (§6.4: a node ID in the
// bits the format leaves to the implementation); what remains — at least
// 11 bits, 52 for the twitter layout — is random, from ChaCha8 seeded
// from crypto/rand (a crypto/rand read per ID costs more than the rest). The
// random bits carry no part of the guarantee: the map from (tick, node,
// sequence) to 128 bits is injective for every layout, whatever they hold,
// so two slots never give one ID, and one generator serves int64 IDs,
// UUIDs and ULIDs from one sequence of slots without a collision between
// forms.
//
// The IDs of one generator are strictly increasing, as bytes and as
// strings, for every layout: the timestamp grows with the tick, and within
// a tick the sequence, which sits above the node whatever the layout's own
// order, grows with each slot. Across nodes, within one millisecond, wide
// IDs sort by sequence first, then node — not in the 64-bit layout's order
// when it puts the node above the sequence (twitter).
//
// The libraries' own generators (uuid.NewV7, ulid.Make) are not used:
// their uniqueness rests on per-process randomness that no node ID or HWM
// protects. google/uuid and oklog/ulid/v2 supply the types, the string
// forms and the parsing.
package wide
