package server

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/firn-id/firn/internal/secret"
)

// TestRateRing: IDs are counted in the second they were issued, a bucket
// from an older lap of the ring is not read as recent, seconds before the
// ring began read 0, and concurrent adds lose nothing.
func TestRateRing(t *testing.T) {
	r := newThroughputRing(time.Now())
	r.addAt(modeSnowflake, 5, 1000)
	r.addAt(modeSnowflake, 7, 1000)
	r.addAt(modeSegment, 3, 1001)
	got := r.perSecond(modeSnowflake, 1002)
	if got[RateSeconds-2] != 12 || got[RateSeconds-1] != 0 {
		t.Errorf("snowflake %v, want 12 two seconds back", got[RateSeconds-3:])
	}
	if seg := r.perSecond(modeSegment, 1002); seg[RateSeconds-1] != 3 {
		t.Errorf("segment %v, want 3 a second back", seg[RateSeconds-3:])
	}
	// One lap later the same bucket holds an old second: not counted.
	for _, v := range r.perSecond(modeSnowflake, 1000+RateSeconds+2) {
		if v != 0 {
			t.Fatalf("a count from %d s ago is read as recent", RateSeconds+1)
		}
	}
	fresh := newThroughputRing(time.Now())
	fresh.addAt(modeSnowflake, 4, 0)
	if got := fresh.perSecond(modeSnowflake, 1); got[RateSeconds-1] != 4 || got[0] != 0 {
		t.Errorf("the first second: %v", got[RateSeconds-3:])
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 1000 {
				r.addAt(modeSegment, 1, 5000)
			}
		})
	}
	wg.Wait()
	if got := r.perSecond(modeSegment, 5001)[RateSeconds-1]; got != 8000 {
		t.Errorf("concurrent adds: %d, want 8000", got)
	}
}

// TestRecentErrors: the ring keeps the latest RecentErrors, newest first,
// counts repeats, and redacts secrets.
func TestRecentErrors(t *testing.T) {
	var r recentErrors
	now := time.Unix(1_800_000_000, 0)
	failure := func(i int) error { return fmt.Errorf("failure %s", strings.Repeat("x", i)) }
	for i := range RecentErrors + 5 {
		r.note("request", failure(i), now)
	}
	list := r.list()
	if len(list) != RecentErrors || list[0].Message != failure(RecentErrors+4).Error() || list[len(list)-1].Message != failure(5).Error() {
		t.Fatalf("%d errors, newest %q, oldest %q", len(list), list[0].Message, list[len(list)-1].Message)
	}
	r.note("request", failure(RecentErrors+4), now)
	r.seen("request", failure(RecentErrors+4), now)
	if got := r.list(); len(got) != RecentErrors || got[0].Count != 2 {
		t.Errorf("a repeat: %d errors, count %d, want %d and 2", len(got), got[0].Count, RecentErrors)
	}
	// The same words with other times or durations repeat too, and the
	// latest text is kept; other words, or other numbers, do not.
	var n recentErrors
	n.note("request", errors.New("node 7: not serving: tick ends 2026-11-26T07:27:42.482Z, HWM 2026-11-26T07:27:42.4Z"), now)
	n.note("request", errors.New("node 7: not serving: tick ends 2026-11-26T07:27:43.019Z, HWM 2026-11-26T07:27:43Z"), now.Add(time.Second))
	n.note("request", errors.New("node 7: not serving: tick ended 2026-11-26T07:27:43.019Z, HWM 2026-11-26T07:27:43Z"), now.Add(2*time.Second))
	if got := n.list(); len(got) != 2 || got[1].Count != 2 || !strings.Contains(got[1].Message, "07:27:43.019Z") {
		t.Errorf("errors %+v: want two, the first counted twice with its latest times", got)
	}
	for _, tc := range []struct {
		a, b string
		same bool
	}{
		{"no renewal confirmed for 9.001s", "no renewal confirmed for 10s", true},
		{"limit 1795678062482 reached", "limit 1795678063000 reached", true},
		{"took 250ms", "took 1.5s", true},
		{"node 3: lease lost", "node 12: lease lost", false},
		{"store 0: dial 10.0.0.1:5432", "store 1: dial 10.0.0.2:5432", false},
		{"status 500", "status 503", false},
		{"etcd1:2379 down", "etcd2:2379 down", false},
	} {
		if got := shapeOf(tc.a) == shapeOf(tc.b); got != tc.same {
			t.Errorf("shapeOf(%q) == shapeOf(%q): %v", tc.a, tc.b, got)
		}
	}
	tests := []struct{ name, in, secret string }{
		{"URL password", "dial postgres://firn:hunter2@db:5432/x: refused", "hunter2"},
		{"MySQL DSN", "open root:hunter2@tcp(127.0.0.1:3306)/test: refused", "hunter2"},
		{"key=value password", "connect host=db password=hunter2 user=firn", "hunter2"},
		{"quoted password", `connect password='hunter 2' user=firn`, "hunter 2"},
		{"bearer token", "upstream said Authorization: Bearer abc.def.ghi", "abc.def.ghi"},
		{"token=", "lease lost: token=s3cret", "s3cret"},
		{"MySQL ?password=", "open root@tcp(127.0.0.1:3306)/test?password=hunter2&parseTime=true: refused", "hunter2"},
		{"sslpassword and passwd", "connect host=db sslpassword=hunter2 passwd='hunter 3'", "hunter"},
		{"remembered, quoted by a driver", "Error 1064 (42000): syntax error near 'pa55-remembered' at line 1", "pa55-remembered"},
	}
	secret.Remember("pa55-remembered")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r.note("test", errors.New(tt.in), now)
			if got := r.list()[0].Message; strings.Contains(got, tt.secret) || !strings.Contains(got, "REDACTED") {
				t.Errorf("%q shown as %q", tt.in, got)
			}
		})
	}
}

// BenchmarkRateAdd is what counting IDs for /v1/status adds to a request
// that issues them: a monotonic clock read and a compare-and-swap, from
// every core at once.
func BenchmarkRateAdd(b *testing.B) {
	r := newThroughputRing(time.Now())
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			r.add(modeSnowflake, 1)
		}
	})
}
