package snowflake

import (
	"slices"
	"time"
)

// presets maps a name to a constructor, so every caller gets its own copy.
var presets = map[string]func() Layout{
	// The firn default: Twitter's proven widths (1,024 nodes, 4,096 IDs
	// per millisecond per node) on an epoch of 2026-01-01, good until
	// 2095. IDs fit a signed BIGINT.
	"firn": func() Layout {
		return Layout{Name: "firn", Epoch: time.UnixMilli(1767225600000), Tick: time.Millisecond,
			TimeBits: 41, Node: []Field{{"node", 10}}, SequenceBits: 12}
	},
	// IDs JavaScript holds exactly: 53 bits, below Number.MAX_SAFE_INTEGER
	// (2^53−1), so a browser never rounds one. 38 bits of 10 ms ticks from
	// firn's 2026 epoch last until 2113; 7 node bits give 128 nodes (leased
	// node IDs are recycled, so this is 128 live processes, not 128 ever);
	// 8 sequence bits give 25,600 IDs/s per node, more with borrowing.
	// Milliseconds would leave 41 bits to time and 12 to node and sequence
	// together; 10 ms ticks buy 87 years and a useful rate in 53 bits.
	"js53": func() Layout {
		return Layout{Name: "js53", Epoch: time.UnixMilli(1767225600000), Tick: 10 * time.Millisecond,
			TimeBits: 38, Node: []Field{{"node", 7}}, SequenceBits: 8}
	},
	// Twitter Snowflake, and Leaf's snowflake mode.
	"twitter": func() Layout {
		return Layout{Name: "twitter", Epoch: time.UnixMilli(1288834974657), Tick: time.Millisecond,
			TimeBits: 41, Node: []Field{{"datacenter", 5}, {"worker", 5}}, SequenceBits: 12}
	},
	// Discord: 42 bits of milliseconds since 2015; all 64 bits, decode-only.
	"discord": func() Layout {
		return Layout{Name: "discord", Epoch: time.UnixMilli(1420070400000), Tick: time.Millisecond,
			TimeBits: 42, Node: []Field{{"worker", 5}, {"process", 5}}, SequenceBits: 12}
	},
	// Instagram's sharded PostgreSQL IDs: 41 bits of milliseconds since
	// its 2011 epoch, 13 shard bits, 10 sequence bits; 64 bits, decode-only.
	"instagram": func() Layout {
		return Layout{Name: "instagram", Epoch: time.UnixMilli(1314220021721), Tick: time.Millisecond,
			TimeBits: 41, Node: []Field{{"shard", 13}}, SequenceBits: 10}
	},
	// Sonyflake v1: 10 ms ticks since 2014-09-01, time|sequence|machine.
	"sonyflake": func() Layout {
		return Layout{Name: "sonyflake", Epoch: time.UnixMilli(1409529600000), Tick: 10 * time.Millisecond,
			TimeBits: 39, Node: []Field{{"machine", 16}}, SequenceBits: 8,
			Order: []Part{PartTime, PartSequence, PartNode}}
	},
	// Sonyflake v2 defaults: as v1, with an epoch of 2025-01-01.
	"sonyflake-v2": func() Layout {
		return Layout{Name: "sonyflake-v2", Epoch: time.UnixMilli(1735689600000), Tick: 10 * time.Millisecond,
			TimeBits: 39, Node: []Field{{"machine", 16}}, SequenceBits: 8,
			Order: []Part{PartTime, PartSequence, PartNode}}
	},
	// Baidu uid-generator's DefaultUidGenerator: 28 bits of seconds,
	// 22 worker bits, 13 sequence bits. Its epoch "2016-05-20" is parsed
	// in the JVM's zone; this preset takes China Standard Time (UTC+8),
	// where it is deployed. For a JVM in UTC use --epoch 1463702400000.
	"baidu": func() Layout {
		return Layout{Name: "baidu", Epoch: time.UnixMilli(1463673600000), Tick: time.Second,
			TimeBits: 28, Node: []Field{{"worker", 22}}, SequenceBits: 13}
	},
}

// DefaultLayout returns the "firn" preset: 41 bits of milliseconds since
// 2026-01-01, 10 node bits, 12 sequence bits.
func DefaultLayout() Layout { return presets["firn"]() }

// Preset returns the named built-in layout and whether it exists.
func Preset(name string) (Layout, bool) {
	f, ok := presets[name]
	if !ok {
		return Layout{}, false
	}
	return f(), true
}

// PresetNames returns the names of the built-in layouts, sorted.
func PresetNames() []string {
	names := make([]string, 0, len(presets))
	for n := range presets {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}
