package snowflake_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/firn-id/firn/idtext"
	"github.com/firn-id/firn/snowflake"
)

// vector is an ID of another system as its own documentation or source
// shows it, with what that source says it decodes to. A source that
// states the time to the millisecond gives earliest == latest; one that
// only bounds it (a log line written after the ID, an issue filed after
// it) gives a window. Fields and sequence are checked only where the
// source states them.
type vector struct {
	name     string
	layout   string
	id       uint64
	earliest string // RFC 3339
	latest   string
	fields   map[string]uint64
	sequence *uint64
	// ahead: the source's time lies after guessNow, so Guess must rule
	// the layout out.
	ahead bool
}

func seq(n uint64) *uint64 { return &n }

// guessNow is the instant the vectors are judged at.
var guessNow = time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)

func vectors(t *testing.T) []vector {
	t.Helper()
	// f4b6a3/tsid-creator README.md: Tsid.from("0123456789ABC"), and of that
	// TSID "tsid.getInstant(); // 2020-04-15T22:31:02.458Z". A TSID's
	// canonical string is Crockford's base32 of its 64 bits.
	tsid, err := idtext.ParseBase32("0123456789ABC")
	if err != nil {
		t.Fatal(err)
	}
	return []vector{
		// https://discord.com/developers/docs/reference#snowflakes:
		// 175928847299117063, 2016-04-30 11:18:25.796 UTC, internal worker
		// 1, internal process 0, increment 7.
		{name: "discord docs", layout: "discord", id: 175928847299117063,
			earliest: "2016-04-30T11:18:25.796Z", latest: "2016-04-30T11:18:25.796Z",
			fields: map[string]uint64{"worker": 1, "process": 0}, sequence: seq(7)},
		// Twitter API v1.1 docs, "Tweet object" example: id 1050118621198921728,
		// created_at "Wed Oct 10 20:19:24 +0000 2018" (whole seconds).
		{name: "twitter docs tweet", layout: "twitter", id: 1050118621198921728,
			earliest: "2018-10-10T20:19:24Z", latest: "2018-10-10T20:19:24.999Z"},
		// https://instagram-engineering.com/sharding-ids-at-instagram-1cf5a71e5a5c
		// worked example: 1387263000 ms since the epoch, shard 31341 % 2000 =
		// 1341, sequence 5001 % 1024 = 905, placed by the post's own shifts
		// (<<(64-41), <<(64-41-13)). It calls the moment "September 9th,
		// 2011"; with the epoch of the post's next_id() that is 22:28 UTC.
		{name: "instagram blog", layout: "instagram", id: 1387263000<<23 | 1341<<10 | 905,
			earliest: "2011-09-09T00:00:00Z", latest: "2011-09-09T23:59:59.999Z",
			fields: map[string]uint64{"shard": 1341}, sequence: seq(905)},
		// baidu/uid-generator issue #100: the default 28 bits of seconds
		// since 2016-05-20 "support about 8.7 years until to 2024-11-20
		// 21:24:16" (UTC+8): the last representable second starts one
		// second earlier.
		{name: "baidu last second", layout: "baidu", id: (1<<28 - 1) << 35,
			earliest: "2024-11-20T21:24:15+08:00", latest: "2024-11-20T21:24:15+08:00",
			fields: map[string]uint64{"worker": 0}, sequence: seq(0)},
		// docs.joinmastodon.org/entities/Status (mastodon/documentation
		// content/en/entities/Status.md) example: id 103270115826048975,
		// created_at 2019-12-08T03:48:33.901Z. PostgreSQL's timestamp_id()
		// takes its time at insert and Rails its created_at, so they agree
		// within a second, not to the millisecond.
		{name: "mastodon docs status", layout: "mastodon", id: 103270115826048975,
			earliest: "2019-12-08T03:48:32.901Z", latest: "2019-12-08T03:48:34.901Z"},
		// cockroachdb/docs issue #9811 (2021-02-16), "SERIAL - explain
		// rowid": unique_rowid() values 0x7e39c56700c0001 and 0x7e3a035f75f8001
		// from node 1, made before the issue was filed.
		{name: "cockroachdb docs issue first", layout: "cockroachdb", id: 0x7e39c56700c0001,
			earliest: "2015-01-01T00:00:00Z", latest: "2021-02-16T00:00:00Z",
			fields: map[string]uint64{"node": 1}},
		{name: "cockroachdb docs issue last", layout: "cockroachdb", id: 0x7e3a035f75f8001,
			earliest: "2015-01-01T00:00:00Z", latest: "2021-02-16T00:00:00Z",
			fields: map[string]uint64{"node": 1}},
		{name: "tsid readme", layout: "tsid", id: tsid,
			earliest: "2020-04-15T22:31:02.458Z", latest: "2020-04-15T22:31:02.458Z"},
		// apache/incubator-seata issue #7204 (Seata 2.2.0): the TC logs
		// "2025-03-11 15:03:31.147 … GlobalBeginResponse{xid='172.25.26.210:8091:2207391485099498761'"
		// (logged in UTC+8). IdWorker's time part starts when the worker
		// does and moves on only as its sequence overflows, so it lies
		// before the log line: within a day, for a server started that day.
		{name: "seata issue 7204", layout: "seata", id: 2207391485099498761,
			earliest: "2025-03-10T15:03:31.147+08:00", latest: "2025-03-11T15:03:31.147+08:00",
			fields: map[string]uint64{"worker": 245}},
		// pgEdge/snowflake docs/snowflake_functions.md:
		// snowflake.format(136169504773242881) gives "ts": "2024-01-11
		// 13:08:59.845-05". The same example labels the node "id": 1 and
		// "count": 0, which is the field order before snowflake.c's commit
		// d30fbc3 (2023-10-31, "millis,node,counter"); the preset follows
		// the source, so only the time is checked.
		{name: "pgedge docs format", layout: "pgedge", id: 136169504773242881,
			earliest: "2024-01-11T13:08:59.845-05:00", latest: "2024-01-11T13:08:59.845-05:00"},
		// pgEdge/snowflake docs/converting.md: 135824181823537153 |
		// {"ts": "2024-01-10 14:16:48.438-05", …}.
		{name: "pgedge docs converting", layout: "pgedge", id: 135824181823537153,
			earliest: "2024-01-10T14:16:48.438-05:00", latest: "2024-01-10T14:16:48.438-05:00"},
		// hazelcast/hazelcast
		// hazelcast/src/test/java/com/hazelcast/flakeidgen/impl/FlakeIdGeneratorProxyTest.java,
		// test_timeMiddle: newIdBaseLocal(1516028439000L, 1234, 10) has base
		// 5300086112257234: the first ID of the batch, sequence 0.
		{name: "hazelcast test_timeMiddle", layout: "hazelcast", id: 5300086112257234,
			earliest: "2018-01-15T15:00:39Z", latest: "2018-01-15T15:00:39Z",
			fields: map[string]uint64{"node": 1234}, sequence: seq(0)},
		// yitter/IdGenerator README.md, "ID示例", IDs "基于默认配置生成"
		// (made with the default options): 129053495681099 "运行1年" (after
		// one year) and 1292658282840139 "运行10年" (after ten years) from
		// BaseTime 1582136402000.
		{name: "yitter readme 1 year", layout: "yitter", id: 129053495681099,
			earliest: "2021-02-12T18:20:02Z", latest: "2021-02-26T18:20:02Z"},
		{name: "yitter readme 10 years", layout: "yitter", id: 1292658282840139,
			earliest: "2030-02-12T18:20:02Z", latest: "2030-02-26T18:20:02Z", ahead: true},
	}
}

func within(t *testing.T, got time.Time, earliest, latest string) {
	t.Helper()
	lo, err := time.Parse(time.RFC3339Nano, earliest)
	if err != nil {
		t.Fatal(err)
	}
	hi, err := time.Parse(time.RFC3339Nano, latest)
	if err != nil {
		t.Fatal(err)
	}
	if got.Before(lo) || got.After(hi) {
		t.Errorf("time %s, want %s..%s", got.Format(time.RFC3339Nano), lo.UTC().Format(time.RFC3339Nano), hi.UTC().Format(time.RFC3339Nano))
	}
}

func checkParts(t *testing.T, v vector, p snowflake.Parts) {
	t.Helper()
	within(t, p.Time, v.earliest, v.latest)
	for _, f := range p.Fields {
		if want, ok := v.fields[f.Name]; ok && f.Value != want {
			t.Errorf("field %s = %d, want %d", f.Name, f.Value, want)
		}
	}
	if v.sequence != nil && p.Sequence != *v.sequence {
		t.Errorf("sequence %d, want %d", p.Sequence, *v.sequence)
	}
}

// TestPresetVectors decodes each vector with its own preset.
func TestPresetVectors(t *testing.T) {
	for _, v := range vectors(t) {
		t.Run(v.name, func(t *testing.T) {
			p, err := preset(t, v.layout).Decompose(v.id)
			if err != nil {
				t.Fatal(err)
			}
			checkParts(t, v, p)
		})
	}
}

// TestBaiduReadmeVector decodes uid-generator's README example with the
// README's own configuration (timeBits 29, workerBits 21, seqBits 13,
// epochStr 2016-09-20): {"UID":"180363646902239241","parsed":{
// "timestamp":"2017-01-19 12:15:46", "workerId":"4", "sequence":"9"}}. The
// timestamp is formatted in the JVM's zone; read in UTC+8, as the baidu
// preset's epoch is, it matches to the second.
func TestBaiduReadmeVector(t *testing.T) {
	l := preset(t, "baidu")
	l.Epoch = time.Date(2016, 9, 20, 0, 0, 0, 0, time.FixedZone("UTC+8", 8*3600))
	l.TimeBits, l.Node[0].Bits = 29, 21
	p, err := l.Decompose(180363646902239241)
	if err != nil {
		t.Fatal(err)
	}
	checkParts(t, vector{earliest: "2017-01-19T12:15:46+08:00", latest: "2017-01-19T12:15:46+08:00",
		fields: map[string]uint64{"worker": 4}, sequence: seq(9)}, p)
}

// TestGuessVectors: --guess on every vector names its own layout among
// the plausible ones, with the same parts; a vector from after guessNow
// is ruled out as being in the future.
func TestGuessVectors(t *testing.T) {
	for _, v := range vectors(t) {
		t.Run(v.name, func(t *testing.T) {
			if v.ahead {
				c := find(t, snowflake.Guess(v.id, guessNow), v.layout)
				if c.Plausible || !contains(c.Reason, "after now") {
					t.Fatalf("%s at %s: plausible %v, reason %q", v.layout, v.earliest, c.Plausible, c.Reason)
				}
				checkParts(t, v, c.Parts)
				return
			}
			plausible := snowflake.Plausible(snowflake.Guess(v.id, guessNow))
			i := slices.IndexFunc(plausible, func(c snowflake.Candidate) bool { return c.Layout.Name == v.layout })
			if i < 0 {
				t.Fatalf("%s is not among the plausible layouts %v", v.layout, names(plausible))
			}
			checkParts(t, v, plausible[i].Parts)
		})
	}
}

func names(cs []snowflake.Candidate) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Layout.Name
	}
	return out
}

func find(t *testing.T, cs []snowflake.Candidate, name string) snowflake.Candidate {
	t.Helper()
	i := slices.IndexFunc(cs, func(c snowflake.Candidate) bool { return c.Layout.Name == name })
	if i < 0 {
		t.Fatalf("no candidate %s", name)
	}
	return cs[i]
}

// TestGuessMastodonDiscordOverlap: a Mastodon ID is also a plausible
// Discord ID from 2015, so the answer is ambiguous and names both; a
// Discord ID of 2016 reads as a Mastodon ID from the 2050s and is not.
func TestGuessMastodonDiscordOverlap(t *testing.T) {
	plausible := names(snowflake.Plausible(snowflake.Guess(103270115826048975, guessNow)))
	if len(plausible) < 2 || plausible[0] != "mastodon" || !slices.Contains(plausible, "discord") {
		t.Fatalf("Mastodon docs ID: plausible %v, want mastodon first and discord among them", plausible)
	}
	all := snowflake.Guess(175928847299117063, guessNow)
	if m := find(t, all, "mastodon"); m.Plausible || !contains(m.Reason, "after now") {
		t.Fatalf("Discord docs ID as mastodon: plausible %v, reason %q", m.Plausible, m.Reason)
	}
	if d := find(t, all, "discord"); !d.Plausible {
		t.Fatalf("Discord docs ID as discord: %q", d.Reason)
	}
}

func TestGuessRules(t *testing.T) {
	discord := preset(t, "discord")
	at := func(d time.Duration) uint64 {
		id, err := discord.Compose(uint64(guessNow.Add(d).Sub(discord.Epoch)/time.Millisecond), 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	tests := []struct {
		name      string
		id        uint64
		layout    string
		plausible bool
		reason    string
	}{
		{name: "a small counter is no snowflake", id: 5, layout: "discord", reason: "time part is 0"},
		{name: "one tick after the epoch", id: 1 << 22, layout: "discord", plausible: true},
		{name: "within the skew", id: at(snowflake.GuessSkew - time.Second), layout: "discord", plausible: true},
		{name: "past the skew", id: at(snowflake.GuessSkew + time.Second), layout: "discord", reason: "after now"},
		{name: "top bit on a 63-bit layout", id: 1<<63 | 1<<22, layout: "twitter", reason: "above the layout's 63"},
		{name: "top bit on a 64-bit layout", id: 1<<63 | 1<<22, layout: "tsid", reason: "after now"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := find(t, snowflake.Guess(tt.id, guessNow), tt.layout)
			if c.Plausible != tt.plausible || !contains(c.Reason, tt.reason) {
				t.Fatalf("%s: plausible %v, reason %q; want %v, %q", tt.layout, c.Plausible, c.Reason, tt.plausible, tt.reason)
			}
			if c.Plausible != (c.Chance > 0) {
				t.Fatalf("plausible %v with chance %g", c.Plausible, c.Chance)
			}
		})
	}
}

// TestGuessOrder: every preset is read once; plausible candidates lead,
// in increasing chance.
func TestGuessOrder(t *testing.T) {
	for _, id := range []uint64{1, 103270115826048975, 1050118621198921728, 1<<64 - 1} {
		all := snowflake.Guess(id, guessNow)
		got := names(all)
		slices.Sort(got)
		if !slices.Equal(got, snowflake.PresetNames()) {
			t.Fatalf("Guess(%d) read %v, want every preset once", id, got)
		}
		plausible := snowflake.Plausible(all)
		for i := range all {
			if all[i].Plausible != (i < len(plausible)) {
				t.Fatalf("Guess(%d): %s at %d out of order", id, all[i].Layout.Name, i)
			}
			if i > 0 && i < len(plausible) && all[i].Chance < all[i-1].Chance {
				t.Fatalf("Guess(%d): %s (%g) after %s (%g)", id, all[i].Layout.Name, all[i].Chance, all[i-1].Layout.Name, all[i-1].Chance)
			}
		}
	}
	if p := snowflake.Plausible(snowflake.Guess(1, guessNow)); len(p) != 0 {
		t.Fatalf("ID 1 read as plausible by %v", names(p))
	}
}

// TestDecodeOnlyPresets: presets of other systems that firn must not make
// are refused by the generator, each with its reason.
func TestDecodeOnlyPresets(t *testing.T) {
	tests := []struct{ layout, reason string }{
		{"mastodon", "64 bits"},
		{"tsid", "64 bits"},
		{"cockroachdb", "tick 10µs is not a whole number of milliseconds"},
	}
	for _, tt := range tests {
		t.Run(tt.layout, func(t *testing.T) {
			l := preset(t, tt.layout)
			if !l.DecodeOnly() {
				t.Fatal("not decode-only")
			}
			_, err := snowflake.New(snowflake.Config{Layout: l, Reservation: snowflake.Unreserved()})
			var le *snowflake.LayoutError
			if !errors.As(err, &le) || !contains(err.Error(), tt.reason) || !contains(err.Error(), "decode-only") {
				t.Fatalf("New = %v, want a *LayoutError naming %q", err, tt.reason)
			}
		})
	}
}

// TestMicrosecondTick: a 10 µs tick decodes to the microsecond, and its
// fingerprint differs from every millisecond layout's.
func TestMicrosecondTick(t *testing.T) {
	l := preset(t, "cockroachdb")
	id, err := l.Compose(123_456_789, 7, 0)
	if err != nil {
		t.Fatal(err)
	}
	p, err := l.Decompose(id)
	if err != nil {
		t.Fatal(err)
	}
	want := time.Date(2015, 1, 1, 0, 0, 0, 0, time.UTC).Add(123_456_789 * 10 * time.Microsecond)
	if !p.Time.Equal(want) || p.Node != 7 {
		t.Fatalf("Decompose: %s node %d, want %s node 7", p.Time, p.Node, want)
	}
	ms := l
	ms.Tick = 10 * time.Millisecond
	if l.Fingerprint() == ms.Fingerprint() {
		t.Fatal("10µs and 10ms ticks share a fingerprint")
	}
	// The last tick ends at 2104-03-13T02:56:07.10656Z; ExhaustedAt counts
	// whole milliseconds and rounds up.
	since, _ := l.ExhaustedAt(guessNow)
	if wantEnd := time.Date(2104, 3, 13, 2, 56, 7, 107e6, time.UTC); !since.Equal(wantEnd) {
		t.Fatalf("ExhaustedAt = %s, want %s", since, wantEnd)
	}
}
