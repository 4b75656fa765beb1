// Package peers benchmarks firn's generator against the Go ID generators
// teams choose today, in one run on one machine, so the README can quote
// ratios rather than absolute figures:
//
//   - github.com/sony/sonyflake/v2, configured with 1 ms ticks, 10 machine
//     bits and 12 sequence bits (Twitter's widths; its default is 10 ms
//     ticks and 8 sequence bits, 25,600 IDs/s per machine);
//   - github.com/bwmarrin/snowflake, Twitter's layout as it ships;
//   - github.com/yitter/idgenerator-go, with 10 worker bits and 12 sequence
//     bits; its default "drift" method borrows future milliseconds without
//     bound when a millisecond fills up, so its sustained rate is not capped
//     by the layout. It keeps one global generator.
//
// firn runs twice: with the twitter layout (saturates at 4,096 IDs per ms,
// like the peers) and with a 22-bit sequence that never saturates, which
// shows the cost of one call.
//
// Run with `make bench` at the repository root, or
//
//	cd bench/peers && go test -run '^$' -bench . -count 6
//
// This module has its own go.mod so that the peers never enter firn's.
package peers
