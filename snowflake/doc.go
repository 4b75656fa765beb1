// Package snowflake composes, generates and decomposes time-ordered 64-bit
// IDs.
//
// An ID is three parts in a configurable order: time (ticks since an
// epoch), node (which generator made it, optionally split into named
// fields such as datacenter and worker) and sequence (a counter within one
// tick). A Layout describes the widths, the epoch and the tick as data;
// presets cover Twitter, Discord, Instagram, Sonyflake, Baidu's
// uid-generator and firn's own default.
//
// A Generator issues IDs for one node. Its clock is the wall clock at
// start plus monotonic elapsed time, so a wall clock stepped backwards
// cannot reach it; it never issues a tick below the last one, and it
// issues no tick past the high-water mark its Reservation holds in durable
// storage, so a restart or a second owner of the node cannot repeat its
// IDs. See Reservation, and package nodeid for leases.
//
// Layouts of 64 bits (Discord, Instagram) decode other systems' IDs;
// generated IDs always fit a signed BIGINT.
package snowflake
