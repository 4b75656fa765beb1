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
	// Mastodon: 48 bits of milliseconds since the Unix epoch and 16 bits
	// that are a hash of the table name, a secret and the time plus the
	// table's sequence (mastodon/mastodon lib/mastodon/snowflake.rb,
	// timestamp_id). No node part; all 64 bits, decode-only.
	"mastodon": func() Layout {
		return Layout{Name: "mastodon", Epoch: time.UnixMilli(0), Tick: time.Millisecond,
			TimeBits: 48, SequenceBits: 16}
	},
	// CockroachDB's unique_rowid(): 48 bits of 10 µs units since
	// 2015-01-01 and a 15-bit node (instance) ID, XORed in
	// (cockroachdb/cockroach pkg/util/unique/unique.go, GenerateUniqueInt;
	// pkg/sql/sem/builtins/builtins.go before 2022). The tick is not a
	// whole millisecond, so the layout is decode-only.
	"cockroachdb": func() Layout {
		return Layout{Name: "cockroachdb", Epoch: time.UnixMilli(1420070400000), Tick: 10 * time.Microsecond,
			TimeBits: 48, Node: []Field{{"node", 15}}}
	},
	// TSID (f4b6a3/tsid-creator): 42 bits of milliseconds since
	// 2020-01-01 and 22 random bits, which TsidFactory splits by default
	// into a 10-bit node and a 12-bit counter (README, "TSID Structure");
	// all 64 bits, decode-only.
	"tsid": func() Layout {
		return Layout{Name: "tsid", Epoch: time.UnixMilli(1577836800000), Tick: time.Millisecond,
			TimeBits: 42, Node: []Field{{"node", 10}}, SequenceBits: 12}
	},
	// Seata 1.5+ IdWorker: the worker ID in the 10 bits below the sign,
	// then 41 bits of milliseconds since twepoch 1588435200000 (2020-05-03
	// in UTC+8) and a 12-bit sequence (apache/incubator-seata
	// common/src/main/java/org/apache/seata/common/util/IdWorker.java).
	// Its time part starts at the worker's start and moves on only as the
	// sequence overflows into it, so it lags the wall clock.
	"seata": func() Layout {
		return Layout{Name: "seata", Epoch: time.UnixMilli(1588435200000), Tick: time.Millisecond,
			TimeBits: 41, Node: []Field{{"worker", 10}}, SequenceBits: 12,
			Order: []Part{PartNode, PartTime, PartSequence}}
	},
	// pgEdge's snowflake extension: 41 bits of milliseconds since
	// 2023-01-01, then the 10-bit node, then a 12-bit counter
	// (pgEdge/snowflake snowflake.c, SNOWFLAKE_*_SHIFT).
	"pgedge": func() Layout {
		return Layout{Name: "pgedge", Epoch: time.UnixMilli(1672531200000), Tick: time.Millisecond,
			TimeBits: 41, Node: []Field{{"node", 10}}, SequenceBits: 12}
	},
	// Hazelcast's FlakeIdGenerator defaults: 41 bits of milliseconds since
	// 2018-01-01, a 6-bit sequence, then a 16-bit member node ID
	// (hazelcast/hazelcast FlakeIdGeneratorProxy.newIdBaseLocal). Its
	// sequence may run up to 15 s ahead of the clock under load.
	"hazelcast": func() Layout {
		return Layout{Name: "hazelcast", Epoch: time.UnixMilli(1514764800000), Tick: time.Millisecond,
			TimeBits: 41, Node: []Field{{"node", 16}}, SequenceBits: 6,
			Order: []Part{PartTime, PartSequence, PartNode}}
	},
	// yitter/IdGenerator's defaults in its Go and Java editions: BaseTime
	// 1582136402000 (2020-02-20 02:20:02 in UTC+8), WorkerIdBitLength 6,
	// SeqBitLength 6, and the milliseconds in the 51 bits above them
	// (Go/source/idgen/IdGeneratorOptions.go). Its C# edition's default
	// BaseTime is 2020-02-20 02:20:02.020 UTC: use --epoch for those.
	"yitter": func() Layout {
		return Layout{Name: "yitter", Epoch: time.UnixMilli(1582136402000), Tick: time.Millisecond,
			TimeBits: 51, Node: []Field{{"worker", 6}}, SequenceBits: 6}
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
