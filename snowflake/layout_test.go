package snowflake_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/firn-id/firn/snowflake"
)

func TestValidate(t *testing.T) {
	base := func() snowflake.Layout { return preset(t, "twitter") }
	tests := []struct {
		name    string
		edit    func(l *snowflake.Layout)
		wantMsg string // empty: valid
	}{
		{name: "twitter", edit: func(*snowflake.Layout) {}},
		{name: "no node part", edit: func(l *snowflake.Layout) { l.Node = nil }},
		{name: "game server 73 bits", edit: func(l *snowflake.Layout) {
			l.TimeBits, l.Node, l.SequenceBits = 37, []snowflake.Field{{Name: "server", Bits: 20}}, 16
		}, wantMsg: "37 time + 20 node + 16 sequence = 73 bits, over 64"},
		{name: "tick of microseconds, to decode", edit: func(l *snowflake.Layout) { l.Tick = 1500 * time.Microsecond }},
		{name: "fractional tick", edit: func(l *snowflake.Layout) { l.Tick = 1500 * time.Nanosecond }, wantMsg: "tick 1.5µs is not a positive whole number of milliseconds (or, to decode only, of microseconds)"},
		{name: "zero tick", edit: func(l *snowflake.Layout) { l.Tick = 0 }, wantMsg: "tick 0s"},
		{name: "sub-ms epoch", edit: func(l *snowflake.Layout) { l.Epoch = l.Epoch.Add(time.Microsecond) }, wantMsg: "not a whole millisecond"},
		{name: "epoch before 1970", edit: func(l *snowflake.Layout) { l.Epoch = time.Date(1969, 1, 1, 0, 0, 0, 0, time.UTC) }, wantMsg: "before the Unix epoch"},
		{name: "no time bits", edit: func(l *snowflake.Layout) { l.TimeBits = 0 }, wantMsg: "time bits 0 outside 1..63"},
		{name: "negative sequence", edit: func(l *snowflake.Layout) { l.SequenceBits = -1 }, wantMsg: "sequence bits -1"},
		{name: "unnamed field", edit: func(l *snowflake.Layout) { l.Node[0].Name = "" }, wantMsg: "has no name"},
		{name: "field name with a colon", edit: func(l *snowflake.Layout) { l.Node[0].Name = "data:center" }, wantMsg: `node field name "data:center"`},
		{name: "field name with a comma", edit: func(l *snowflake.Layout) { l.Node[0].Name = "a,b" }, wantMsg: `node field name "a,b"`},
		{name: "field name with a space", edit: func(l *snowflake.Layout) { l.Node[0].Name = "data center" }, wantMsg: "letters, digits"},
		{name: "field names of letters, digits, _ and -", edit: func(l *snowflake.Layout) { l.Node[0].Name, l.Node[1].Name = "dc_1", "Worker-2" }},
		{name: "field twice", edit: func(l *snowflake.Layout) { l.Node[1].Name = l.Node[0].Name }, wantMsg: `"datacenter" appears twice`},
		{name: "zero-bit field", edit: func(l *snowflake.Layout) { l.Node[1].Bits = 0 }, wantMsg: `"worker" has 0 bits`},
		{name: "order twice", edit: func(l *snowflake.Layout) {
			l.Order = []snowflake.Part{snowflake.PartTime, snowflake.PartTime, snowflake.PartSequence}
		}, wantMsg: `names "time" twice`},
		{name: "order short", edit: func(l *snowflake.Layout) { l.Order = []snowflake.Part{snowflake.PartTime} }, wantMsg: "once each"},
		{name: "order unknown", edit: func(l *snowflake.Layout) {
			l.Order = []snowflake.Part{snowflake.PartTime, "shard", snowflake.PartSequence}
		}, wantMsg: `unknown part "shard"`},
		{name: "time overflows milliseconds", edit: func(l *snowflake.Layout) {
			l.TimeBits, l.Tick, l.Node, l.SequenceBits = 63, time.Hour, nil, 0
		}, wantMsg: "overflow"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := base()
			tt.edit(&l)
			err := l.Validate()
			if tt.wantMsg == "" {
				if err != nil {
					t.Fatalf("Validate = %v, want nil", err)
				}
				return
			}
			var le *snowflake.LayoutError
			if !errors.As(err, &le) {
				t.Fatalf("Validate = %v, want *LayoutError", err)
			}
			if !contains(err.Error(), tt.wantMsg) {
				t.Fatalf("Validate = %q, want it to contain %q", err, tt.wantMsg)
			}
		})
	}
}

func TestPresets(t *testing.T) {
	decodeOnly := map[string]bool{"discord": true, "instagram": true, "mastodon": true, "tsid": true, "cockroachdb": true}
	for _, name := range snowflake.PresetNames() {
		l := preset(t, name)
		if err := l.Validate(); err != nil {
			t.Errorf("preset %s: %v", name, err)
		}
		if l.DecodeOnly() != decodeOnly[name] {
			t.Errorf("preset %s: DecodeOnly = %v", name, l.DecodeOnly())
		}
		if l.JavaScriptSafe() != (name == "js53") {
			t.Errorf("preset %s: JavaScriptSafe = %v (%d bits)", name, l.JavaScriptSafe(), l.Bits())
		}
		if l.Name != name {
			t.Errorf("preset %s has Name %q", name, l.Name)
		}
	}
	if _, ok := snowflake.Preset("nope"); ok {
		t.Error(`Preset("nope") found a layout`)
	}
	// Presets are copies: editing one leaves the next lookup alone.
	a := preset(t, "twitter")
	a.Node[0].Bits = 9
	if b := preset(t, "twitter"); b.Node[0].Bits != 5 {
		t.Fatal("editing a preset changed the built-in")
	}
}

// Decode vectors from public documentation.
func TestDecodeVectors(t *testing.T) {
	tests := []struct {
		name     string
		layout   string
		id       uint64
		time     string
		fields   map[string]uint64
		sequence uint64
	}{
		// Discord developer docs, "Snowflakes": 175928847299117063.
		{name: "discord docs", layout: "discord", id: 175928847299117063, time: "2016-04-30T11:18:25.796Z",
			fields: map[string]uint64{"worker": 1, "process": 0}, sequence: 7},
		// Twitter API docs' example Tweet, created_at "Wed Oct 10 20:19:24 +0000 2018".
		{name: "tweet 1050118621198921728", layout: "twitter", id: 1050118621198921728, time: "2018-10-10T20:19:24.211Z",
			fields: map[string]uint64{"datacenter": 10, "worker": 27}, sequence: 0},
		// Sonyflake's first ID after its epoch on machine 1.
		{name: "sonyflake", layout: "sonyflake", id: 1, time: "2014-09-01T00:00:00.000Z",
			fields: map[string]uint64{"machine": 1}, sequence: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := preset(t, tt.layout).Decompose(tt.id)
			if err != nil {
				t.Fatal(err)
			}
			if got := p.Time.Format("2006-01-02T15:04:05.000Z"); got != tt.time {
				t.Errorf("time %s, want %s", got, tt.time)
			}
			for _, f := range p.Fields {
				if f.Value != tt.fields[f.Name] {
					t.Errorf("field %s = %d, want %d", f.Name, f.Value, tt.fields[f.Name])
				}
			}
			if p.Sequence != tt.sequence {
				t.Errorf("sequence %d, want %d", p.Sequence, tt.sequence)
			}
		})
	}
}

func TestDecomposeOutsideLayout(t *testing.T) {
	_, err := preset(t, "twitter").Decompose(1 << 63)
	var re *snowflake.RangeError
	if !errors.As(err, &re) || re.What != "ID" {
		t.Fatalf("Decompose(1<<63) on a 63-bit layout: %v, want *RangeError for the ID", err)
	}
}

func TestNodeFieldsMasked(t *testing.T) {
	l := preset(t, "twitter")
	node, err := l.NodeValue(31, 1)
	if err != nil {
		t.Fatal(err)
	}
	id, err := l.Compose(l.MaxTick(), node, 0)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := l.Decompose(id)
	if p.Tick != l.MaxTick() || p.Sequence != 0 || p.Fields[0].Value != 31 || p.Fields[1].Value != 1 {
		t.Fatalf("round trip of max tick, node (31,1): %+v", p)
	}
	if _, err := l.NodeValue(32, 0); err == nil {
		t.Fatal("datacenter 32 fits 5 bits?")
	}
	if _, err := l.NodeValue(1); err == nil {
		t.Fatal("one value for two fields accepted")
	}
	for _, c := range []struct{ tick, node, seq uint64 }{{l.MaxTick() + 1, 0, 0}, {0, 1024, 0}, {0, 0, 4096}} {
		if _, err := l.Compose(c.tick, c.node, c.seq); err == nil {
			t.Errorf("Compose(%d, %d, %d) accepted an out-of-range part", c.tick, c.node, c.seq)
		}
	}
}

func TestFingerprint(t *testing.T) {
	a, b := preset(t, "twitter"), preset(t, "twitter")
	b.Name = "renamed"
	if a.Fingerprint() != b.Fingerprint() {
		t.Fatal("the name changed the fingerprint")
	}
	b.Node[1].Name = "machine"
	if a.Fingerprint() == b.Fingerprint() {
		t.Fatal("a different field name kept the fingerprint")
	}
	if preset(t, "sonyflake").Fingerprint() == preset(t, "sonyflake-v2").Fingerprint() {
		t.Fatal("different epochs share a fingerprint")
	}
}

func FuzzComposeDecompose(f *testing.F) {
	f.Add(41, 5, 5, 12, uint8(0), uint64(1), uint64(2), uint64(3))
	f.Add(39, 16, 0, 8, uint8(1), uint64(1<<39-1), uint64(65535), uint64(255))
	f.Add(42, 5, 5, 12, uint8(2), uint64(7), uint64(0), uint64(4095))
	f.Fuzz(func(t *testing.T, timeBits, nodeA, nodeB, seqBits int, order uint8, tick, node, seq uint64) {
		orders := [][]snowflake.Part{
			{snowflake.PartTime, snowflake.PartNode, snowflake.PartSequence},
			{snowflake.PartTime, snowflake.PartSequence, snowflake.PartNode},
			{snowflake.PartNode, snowflake.PartTime, snowflake.PartSequence},
		}
		l := snowflake.Layout{Epoch: time.UnixMilli(1288834974657), Tick: time.Millisecond, TimeBits: timeBits,
			Node: []snowflake.Field{{Name: "a", Bits: nodeA}, {Name: "b", Bits: nodeB}}, SequenceBits: seqBits,
			Order: orders[int(order)%len(orders)]}
		if l.Validate() != nil {
			return
		}
		tick, node, seq = tick&l.MaxTick(), node&l.MaxNode(), seq&l.MaxSequence()
		id, err := l.Compose(tick, node, seq)
		if err != nil {
			t.Fatalf("Compose(%d, %d, %d) on %s: %v", tick, node, seq, l, err)
		}
		p, err := l.Decompose(id)
		if err != nil {
			t.Fatalf("Decompose(%d) on %s: %v", id, l, err)
		}
		if p.Tick != tick || p.Node != node || p.Sequence != seq {
			t.Fatalf("%s: (%d, %d, %d) -> %d -> (%d, %d, %d)", l, tick, node, seq, id, p.Tick, p.Node, p.Sequence)
		}
		if back, _ := l.NodeValue(p.Fields[0].Value, p.Fields[1].Value); back != node {
			t.Fatalf("%s: node fields %+v recompose to %d, want %d", l, p.Fields, back, node)
		}
	})
}

func TestExhaustedAtLastTickEnd(t *testing.T) {
	l := snowflake.Layout{Name: "tiny", Epoch: time.UnixMilli(1_000_000).UTC(), Tick: time.Second, TimeBits: 4, SequenceBits: 8}
	end := time.UnixMilli(1_000_000 + 16_000).UTC() // 16 ticks of 1 s
	tests := []struct {
		name string
		now  time.Time
		want bool
	}{
		{name: "before the epoch", now: l.Epoch.Add(-time.Hour), want: false},
		{name: "inside the last tick", now: end.Add(-time.Millisecond), want: false},
		{name: "at the end of the last tick", now: end, want: true},
		{name: "long after", now: end.AddDate(10, 0, 0), want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			since, got := l.ExhaustedAt(tt.now)
			if got != tt.want || !since.Equal(end) {
				t.Fatalf("ExhaustedAt(%s) = %s, %v; want %s, %v", tt.now, since, got, end, tt.want)
			}
		})
	}
}

func TestTimeFirst(t *testing.T) {
	tw, _ := snowflake.Preset("twitter")
	seata, _ := snowflake.Preset("seata")
	tests := []struct {
		name  string
		order []snowflake.Part
		base  snowflake.Layout
		want  bool
	}{
		{"the default order", nil, tw, true},
		{"time, sequence, node", []snowflake.Part{snowflake.PartTime, snowflake.PartSequence, snowflake.PartNode}, tw, true},
		{"node first", []snowflake.Part{snowflake.PartNode, snowflake.PartTime, snowflake.PartSequence}, tw, false},
		{"the seata preset (worker above time)", seata.Order, seata, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := tt.base
			l.Order = tt.order
			if got := l.TimeFirst(); got != tt.want {
				t.Errorf("TimeFirst() = %v with order %v, want %v", got, tt.order, tt.want)
			}
		})
	}
}

// TestIncreasing: a layout's IDs from one generator increase exactly when
// time lies above the sequence, wherever the node is; and a batch of
// Generator.NextN crossing ticks increases or not as it says.
func TestIncreasing(t *testing.T) {
	const (
		tm  = snowflake.PartTime
		nd  = snowflake.PartNode
		seq = snowflake.PartSequence
	)
	tests := []struct {
		name  string
		order []snowflake.Part
		seq   int
		want  bool
	}{
		{"the default order", nil, 8, true},
		{"time, node, sequence", []snowflake.Part{tm, nd, seq}, 8, true},
		{"time, sequence, node", []snowflake.Part{tm, seq, nd}, 8, true},
		{"node, time, sequence", []snowflake.Part{nd, tm, seq}, 8, true},
		{"sequence, time, node", []snowflake.Part{seq, tm, nd}, 8, false},
		{"sequence, node, time", []snowflake.Part{seq, nd, tm}, 8, false},
		{"node, sequence, time", []snowflake.Part{nd, seq, tm}, 8, false},
		{"sequence first with no sequence bits", []snowflake.Part{seq, tm, nd}, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := snowflake.Layout{Name: "t", Epoch: time.UnixMilli(time.Now().Add(-time.Hour).UnixMilli()), Tick: time.Millisecond,
				TimeBits: 41, Node: []snowflake.Field{{Name: "worker", Bits: 10}}, SequenceBits: tt.seq, Order: tt.order}
			if got := l.Increasing(); got != tt.want {
				t.Fatalf("Increasing() = %v, want %v", got, tt.want)
			}
			g, err := snowflake.New(snowflake.Config{Layout: l, Node: 5, Reservation: snowflake.Unreserved()})
			if err != nil {
				t.Fatal(err)
			}
			// 1,000 IDs of at most 256 a tick cross at least three ticks.
			ids := make([]int64, 1000)
			if _, err := g.NextN(context.Background(), ids); err != nil {
				t.Fatal(err)
			}
			increasing := true
			for i := 1; i < len(ids); i++ {
				increasing = increasing && ids[i-1] < ids[i]
			}
			if increasing != tt.want {
				t.Errorf("a batch across ticks increasing: %v, want %v", increasing, tt.want)
			}
		})
	}
	seata, _ := snowflake.Preset("seata")
	if !seata.Increasing() || seata.TimeFirst() {
		t.Errorf("seata: Increasing %v, TimeFirst %v; want true, false", seata.Increasing(), seata.TimeFirst())
	}
}

// TestFingerprintSeparatorsInNames: Fingerprint joins field names with
// ':' and ','; were such names valid, [a:1,b:2] as one field name and
// two fields would share a fingerprint. Validate refuses them.
func TestFingerprintSeparatorsInNames(t *testing.T) {
	l := preset(t, "firn")
	l.Node = []snowflake.Field{{Name: "a:5,b", Bits: 5}, {Name: "c", Bits: 5}}
	if err := l.Validate(); err == nil {
		t.Fatalf("a field name holding ':' and ',' passed Validate: fingerprint %s", l.Fingerprint())
	}
}

// TestPresetFieldNamesAreValid: every preset's field names pass the name
// rule Validate applies.
func TestPresetFieldNamesAreValid(t *testing.T) {
	for _, name := range snowflake.PresetNames() {
		if err := preset(t, name).Validate(); err != nil {
			t.Errorf("preset %s: %v", name, err)
		}
	}
}
