package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/firn-id/firn/idtext"
	"github.com/firn-id/firn/opaque"
	"github.com/firn-id/firn/segment"
	"github.com/firn-id/firn/segment/segmenttest"
	"github.com/firn-id/firn/server"
	"github.com/firn-id/firn/snowflake"
)

// detailLease is a held lease with what /v1/status shows of nodeid.Lease.
type detailLease struct {
	node     uint64
	limit    int64
	renewed  time.Time
	err      error
	renewErr error
}

func (l detailLease) Node() uint64        { return l.node }
func (l detailLease) Limit() int64        { return l.limit }
func (l detailLease) Err() error          { return l.err }
func (detailLease) Token() string         { return "694d7a1b2c3d4e5f" }
func (detailLease) TTL() time.Duration    { return 9 * time.Second }
func (detailLease) Renewals() int64       { return 42 }
func (l detailLease) Renewed() time.Time  { return l.renewed }
func (detailLease) Start() int64          { return 1_700_000_000_000 }
func (l detailLease) RenewalError() error { return l.renewErr }

// nodeStatus is the part of /v1/status the tests read.
type nodeStatus struct {
	UptimeMS  int64  `json:"uptime_ms"`
	NowMS     int64  `json:"now_ms"`
	Ready     bool   `json:"ready"`
	NotReady  string `json:"not_ready"`
	Snowflake *struct {
		Node   uint64
		Layout string
		Bits   []struct {
			Part, Name string
			Bits       int
		}
		RemainingMS int64 `json:"remaining_ms"`
	}
	Lease *struct {
		Store        string
		Held         bool
		Error        string
		RenewalError string `json:"renewal_error"`
		LeaseID      string `json:"lease_id"`
		TTLMS        int64  `json:"ttl_granted_ms"`
		ExpiresInMS  int64  `json:"expires_in_ms"`
		Renewals     int64
		HWMMS        int64 `json:"hwm_ms"`
		HeadroomMS   int64 `json:"headroom_ms"`
	}
	Rate struct {
		PerSecond map[string][]uint64 `json:"per_second"`
	}
	Tags []struct {
		Tag     string
		Left    int64
		Step    int64
		Healthy bool
		Current struct{ Start, End, Delta int64 }
	}
	Errors []struct{ Source, Message string }
}

func readStatus(t *testing.T, h http.Handler, header ...string) nodeStatus {
	t.Helper()
	w := get(h, "GET", "/v1/status", header...)
	if w.Code != http.StatusOK {
		t.Fatalf("/v1/status = %d %s", w.Code, w.Body)
	}
	var st nodeStatus
	if err := json.Unmarshal(w.Body.Bytes(), &st); err != nil {
		t.Fatalf("/v1/status: %v: %s", err, w.Body)
	}
	return st
}

// statusServer serves snowflake IDs on node 7 with a lease whose HWM is
// ahead by 5 s, and the tags of store.
func statusServer(t testing.TB, store segment.Store, lease server.Lease, auth *server.Auth) http.Handler {
	t.Helper()
	g, err := snowflake.New(snowflake.Config{Layout: snowflake.DefaultLayout(), Node: 7, Reservation: snowflake.Unreserved()})
	if err != nil {
		t.Fatal(err)
	}
	a, err := segment.NewAllocator(store, segment.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close(context.Background()) })
	return handlerOf(t, &server.Config{Snowflake: g, Lease: lease, Store: `etcd namespace "/firn/test/"`, Segments: a, SegmentStore: store, Auth: auth})
}

// TestStatus: /v1/status shows the node, its layout's bits, the lease,
// the IDs just issued in its per-second counts, and the tags.
func TestStatus(t *testing.T) {
	store := segmenttest.NewMemStore()
	for _, tag := range []string{"order", "user"} {
		if err := store.CreateTag(context.Background(), tag, 1, 1000, ""); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Now()
	h := statusServer(t, store, detailLease{node: 7, limit: now.Add(5 * time.Second).UnixMilli(), renewed: now}, nil)
	for range 3 {
		if w := get(h, "GET", "/v1/snowflake/batch?count=100"); w.Code != 200 {
			t.Fatalf("batch: %d", w.Code)
		}
	}
	if w := get(h, "GET", "/v1/segments/order/batch?count=250"); w.Code != 200 {
		t.Fatalf("segment batch: %d %s", w.Code, w.Body)
	}
	// The counts cover the seconds before the one in progress.
	time.Sleep(time.Second + 10*time.Millisecond)
	st := readStatus(t, h)
	if !st.Ready || st.Snowflake == nil || st.Snowflake.Node != 7 || st.Snowflake.Layout != snowflake.DefaultLayout().String() {
		t.Fatalf("status = %+v", st)
	}
	bits := 0
	for _, b := range st.Snowflake.Bits {
		bits += b.Bits
	}
	if bits != 64 || st.Snowflake.Bits[0].Part != "sign" || st.Snowflake.RemainingMS <= 0 {
		t.Errorf("bits = %+v (sum %d), remaining %d ms", st.Snowflake.Bits, bits, st.Snowflake.RemainingMS)
	}
	l := st.Lease
	if l == nil || !l.Held || l.LeaseID != "694d7a1b2c3d4e5f" || l.TTLMS != 9000 || l.Renewals != 42 || l.Store != `etcd namespace "/firn/test/"` {
		t.Fatalf("lease = %+v", l)
	}
	if l.HeadroomMS <= 0 || l.HeadroomMS > 5000 || l.ExpiresInMS <= 0 || l.ExpiresInMS > 9000 {
		t.Errorf("headroom %d ms, expires in %d ms: want within (0, 5000] and (0, 9000]", l.HeadroomMS, l.ExpiresInMS)
	}
	sum := func(xs []uint64) (n uint64) {
		for _, x := range xs {
			n += x
		}
		return n
	}
	if got := sum(st.Rate.PerSecond["snowflake"]); got != 300 {
		t.Errorf("snowflake IDs counted per second: %d, want 300", got)
	}
	if got := sum(st.Rate.PerSecond["segment"]); got != 250 {
		t.Errorf("segment IDs counted per second: %d, want 250", got)
	}
	if n := len(st.Rate.PerSecond["snowflake"]); n != server.RateSeconds {
		t.Errorf("%d seconds, want %d", n, server.RateSeconds)
	}
	if len(st.Tags) != 1 || st.Tags[0].Tag != "order" || st.Tags[0].Left != 750 || !st.Tags[0].Healthy || st.Tags[0].Current.End != 1001 {
		t.Errorf("tags = %+v, want order with 750 left of [1, 1001)", st.Tags)
	}
}

// failingStore fails every fetch with an error that names a DSN.
type failingStore struct{ segment.Store }

var errDSN = errors.New(`dial postgres://firn:hunter2@db.example:5432/firn: password=hunter2 refused`)

func (failingStore) Reserve(context.Context, string, int64) (segment.Range, error) {
	return segment.Range{}, errDSN
}

// TestStatusErrors: a lost lease, a failing tag and a request that failed
// show in the recent errors, with no password in any of them.
func TestStatusErrors(t *testing.T) {
	store := segmenttest.NewMemStore()
	if err := store.CreateTag(context.Background(), "order", 1, 10, ""); err != nil {
		t.Fatal(err)
	}
	lost := errors.New("nodeid: lease lost: token=s3cret-token was revoked")
	h := statusServer(t, failingStore{store}, detailLease{node: 7, limit: time.Now().Add(time.Hour).UnixMilli(), err: lost}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	r := httptest.NewRequestWithContext(ctx, "GET", "/v1/segments/order/next", nil)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != http.StatusServiceUnavailable {
		t.Fatalf("segment next on a failing store: %d %s", w.Code, w.Body)
	}
	raw := get(h, "GET", "/v1/status").Body.String()
	for _, secret := range []string{"hunter2", "s3cret-token"} {
		if strings.Contains(raw, secret) {
			t.Errorf("/v1/status shows %q: %s", secret, raw)
		}
	}
	st := readStatus(t, h)
	if st.Ready || st.Lease.Held || !strings.Contains(st.Lease.Error, "lease lost") || !strings.Contains(st.NotReady, "lease lost") {
		t.Errorf("ready %v (%q), lease %+v: want not ready, lease lost", st.Ready, st.NotReady, st.Lease)
	}
	sources := map[string]bool{}
	for _, e := range st.Errors {
		sources[e.Source] = true
	}
	for _, want := range []string{"lease", "readiness", "request"} {
		if !sources[want] {
			t.Errorf("no error from %s in %+v", want, st.Errors)
		}
	}
}

// TestStatusRenewalError: a lease that still holds while its renewals
// fail says why, in the lease and in the recent errors, and stays ready
// while its HWM is ahead.
func TestStatusRenewalError(t *testing.T) {
	down := errors.New("etcd http://root:hunter2@127.0.0.1:2379: context deadline exceeded")
	h := statusServer(t, segmenttest.NewMemStore(), detailLease{node: 7, limit: time.Now().Add(time.Hour).UnixMilli(), renewed: time.Now(), renewErr: down}, nil)
	st := readStatus(t, h)
	if !st.Ready || !st.Lease.Held || !strings.Contains(st.Lease.RenewalError, "deadline exceeded") || strings.Contains(st.Lease.RenewalError, "hunter2") {
		t.Fatalf("ready %v, lease %+v: want ready, held, the renewal error without its password", st.Ready, st.Lease)
	}
	found := false
	for _, e := range st.Errors {
		found = found || e.Source == "lease renewal" && strings.Contains(e.Message, "deadline exceeded")
	}
	if !found {
		t.Fatalf("errors %+v: want the renewal error", st.Errors)
	}
}

// TestStatusScope: status needs the scope status, which grants decoding
// too and nothing else; auth.status_anonymous_on_loopback grants it, and
// only it, to requests without credentials from loopback.
func TestStatusScope(t *testing.T) {
	auth, err := server.NewAuth([]server.Token{
		{Name: "status", Secret: "status-secret-01", Scopes: []string{"status"}},
		{Name: "snow", Secret: "snow-secret-0123", Scopes: []string{"snowflake"}},
		{Name: "admin", Secret: "admin-secret-012", Scopes: []string{"admin"}},
	}, server.Anonymous{StatusOnLoopback: true})
	if err != nil {
		t.Fatal(err)
	}
	h := statusServer(t, segmenttest.NewMemStore(), nil, auth)
	tests := []struct {
		name, target, remote, token string
		want                        int
	}{
		{"status with status", "/v1/status", "10.0.0.1:1", "status-secret-01", 200},
		{"status with snowflake", "/v1/status", "10.0.0.1:1", "snow-secret-0123", 403},
		{"status from afar without a token", "/v1/status", "10.0.0.1:1", "", 401},
		{"status from loopback without a token", "/v1/status", "127.0.0.1:1", "", 200},
		{"status from IPv6 loopback without a token", "/v1/status", "[::1]:1", "", 200},
		{"decode with status", "/v1/snowflake/decode/1", "10.0.0.1:1", "status-secret-01", 200},
		{"decode with snowflake", "/v1/snowflake/decode/1", "10.0.0.1:1", "snow-secret-0123", 200},
		{"decode from loopback without a token", "/v1/snowflake/decode/1", "127.0.0.1:1", "", 200},
		{"IDs with status", "/v1/snowflake/next", "10.0.0.1:1", "status-secret-01", 403},
		{"IDs from loopback without a token", "/v1/snowflake/next", "127.0.0.1:1", "", 401},
		{"info from loopback without a token", "/v1/snowflake/info", "127.0.0.1:1", "", 401},
		{"admin from loopback without a token", "/v1/segments", "127.0.0.1:1", "", 401},
		{"admin with status", "/v1/segments", "10.0.0.1:1", "status-secret-01", 403},
		{"the page without a token", "/", "10.0.0.1:1", "", 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", tt.target, nil)
			r.RemoteAddr = tt.remote
			if tt.token != "" {
				r.Header.Set("Authorization", "Bearer "+tt.token)
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != tt.want {
				t.Errorf("%s = %d %s, want %d", tt.target, w.Code, w.Body, tt.want)
			}
		})
	}
	if _, err := server.NewAuth(nil, server.Anonymous{Scopes: []string{"status"}}); err == nil {
		t.Error("status accepted as an anonymous scope off loopback")
	}
}

// TestDecodeEncodings: the decode and guess routes read base62 and base32
// IDs with ?encoding=, and a decimal ID that is not says how to name one.
func TestDecodeEncodings(t *testing.T) {
	h := newHandler(t, nil)
	tests := []struct {
		name, target string
		want         int
		body         string
	}{
		{"decimal", "/v1/snowflake/decode/4194305", 200, `"sequence":1`},
		{"base62", "/v1/snowflake/decode/" + string(idtext.Base62.Append(nil, 4194305)) + "?encoding=base62", 200, `"id":"4194305"`},
		{"base32", "/v1/snowflake/decode/" + string(idtext.Base32.Append(nil, 4194305)) + "?encoding=base32", 200, `"id":"4194305"`},
		{"base62 that is not", "/v1/snowflake/decode/!!?encoding=base62", 400, "base62"},
		{"unknown encoding", "/v1/snowflake/decode/1?encoding=roman", 400, "roman"},
		{"base62 without its name", "/v1/snowflake/decode/" + string(idtext.Base62.Append(nil, 4194305)), 400, "add ?encoding=base62 or ?encoding=base32"},
		{"guess, base62", "/v1/snowflake/guess/" + string(idtext.Base62.Append(nil, 4194305)) + "?encoding=base62", 200, `"id":"4194305"`},
		{"guess, base32 without its name", "/v1/snowflake/guess/" + string(idtext.Base32.Append(nil, 1<<62-1)), 400, "add ?encoding=base62"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := get(h, "GET", tt.target)
			if w.Code != tt.want || !strings.Contains(w.Body.String(), tt.body) {
				t.Errorf("%s = %d %s, want %d with %s", tt.target, w.Code, w.Body, tt.want, tt.body)
			}
		})
	}
}

// BenchmarkStatus is the cost of one /v1/status answer with 50 tags
// loaded: well under the 1 ms bar (docs/performance.md).
func BenchmarkStatus(b *testing.B) {
	store := segmenttest.NewMemStore()
	g, err := snowflake.New(snowflake.Config{Node: 7, Reservation: snowflake.Unreserved()})
	if err != nil {
		b.Fatal(err)
	}
	a, err := segment.NewAllocator(store, segment.Config{})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = a.Close(context.Background()) }()
	for i := range 50 {
		tag := "tag" + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + string(rune('a'+i/26))
		if err := store.CreateTag(context.Background(), tag, 1, 1000, ""); err != nil {
			b.Fatal(err)
		}
		if _, err := a.Next(context.Background(), tag); err != nil {
			b.Fatal(err)
		}
	}
	h := handlerOf(b, &server.Config{Snowflake: g, Lease: detailLease{node: 7, limit: time.Now().Add(time.Hour).UnixMilli(), renewed: time.Now()},
		Segments: a, SegmentStore: store})
	r := httptest.NewRequest("GET", "/v1/status", nil)
	b.ReportAllocs()
	for b.Loop() {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != 200 {
			b.Fatal(w.Code)
		}
	}
}

// BenchmarkPolledThroughput is the cost to ID throughput of a status page
// open on the node: snowflake IDs requested from every core, without
// and with /v1/status read every 2 s (the page's refresh). Run it
// several times with -count 1 so the two alternate, and compare their
// medians (docs/performance.md). One
// ID per request, so the cores, not the layout's 4,096 IDs per tick, are
// the limit.
func BenchmarkPolledThroughput(b *testing.B) {
	for _, polled := range []bool{false, true} {
		b.Run(map[bool]string{false: "unpolled", true: "polled"}[polled], func(b *testing.B) {
			store := segmenttest.NewMemStore()
			if err := store.CreateTag(context.Background(), "order", 1, 1000, ""); err != nil {
				b.Fatal(err)
			}
			h := statusServer(b, store, detailLease{node: 7, limit: 1 << 62, renewed: time.Now()}, nil)
			stop := make(chan struct{})
			done := make(chan int)
			go func() {
				polls := 0
				tick := time.NewTicker(2 * time.Second)
				defer tick.Stop()
				for {
					select {
					case <-stop:
						done <- polls
						return
					case <-tick.C:
						if polled {
							get(h, "GET", "/v1/status")
							polls++
						}
					}
				}
			}()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				r := httptest.NewRequest("GET", "/v1/snowflake/next", nil)
				for pb.Next() {
					w := httptest.NewRecorder()
					h.ServeHTTP(w, r)
				}
			})
			b.StopTimer()
			close(stop)
			b.ReportMetric(float64(<-done), "polls")
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "IDs/s")
		})
	}
}

// TestStatusOpaque: in opaque mode /v1/status leaves out how many
// snowflake IDs were issued, as /metrics does without scope metrics.
func TestStatusOpaque(t *testing.T) {
	g := unreservedGenerator(t)
	perm, err := opaque.New(bytes.Repeat([]byte{7}, 32), nil, g.Layout().Bits())
	if err != nil {
		t.Fatal(err)
	}
	h := handlerOf(t, &server.Config{Snowflake: g, Opaque: perm})
	if w := get(h, "GET", "/v1/snowflake/next"); w.Code != 200 {
		t.Fatalf("next: %d", w.Code)
	}
	st := readStatus(t, h)
	if _, shown := st.Rate.PerSecond["snowflake"]; shown {
		t.Error("opaque mode: /v1/status shows snowflake IDs per second")
	}
	if _, shown := st.Rate.PerSecond["segment"]; !shown {
		t.Error("opaque mode: segment IDs per second left out too")
	}
}

// TestStatusTagSteps: a tag's row holds its configured step (the store's,
// as firn tag list shows it) beside the adaptive step of the next fetch,
// and the IDs held in memory: the current range's and the prefetched.
func TestStatusTagSteps(t *testing.T) {
	store := segmenttest.NewMemStore()
	if err := store.CreateTag(context.Background(), "order", 1, 1000, ""); err != nil {
		t.Fatal(err)
	}
	h := statusServer(t, store, nil, nil)
	// Ranges used up at once: the adaptive step grows past the tag's.
	for range 4 {
		if w := get(h, "GET", "/v1/segments/order/batch?count=1000"); w.Code != 200 {
			t.Fatalf("segment batch: %d %s", w.Code, w.Body)
		}
	}
	var doc struct {
		Tags []struct {
			Tag                    string
			InMemory               int64 `json:"in_memory"`
			Left, Prefetched, Step int64
			ConfiguredStep         int64 `json:"configured_step"`
		}
	}
	if err := json.Unmarshal(get(h, "GET", "/v1/status").Body.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Tags) != 1 {
		t.Fatalf("tags = %+v, want order", doc.Tags)
	}
	tag := doc.Tags[0]
	if tag.ConfiguredStep != 1000 || tag.Step <= 1000 {
		t.Errorf("configured step %d, step %d: want the tag's 1000 and an adaptive step above it", tag.ConfiguredStep, tag.Step)
	}
	if tag.InMemory != tag.Left+tag.Prefetched {
		t.Errorf("in memory %d, want left %d + prefetched %d", tag.InMemory, tag.Left, tag.Prefetched)
	}
}

// TestStatusUnknownTags: a request for a tag the store does not have, on
// firn's, Leaf's and Tinyid's routes, is a caller's error the page shows
// (source caller); a client asking for one unknown tag after another
// keeps at most server.RecentCallerErrors of them and never pushes out
// the node's own errors.
func TestStatusUnknownTags(t *testing.T) {
	store := segmenttest.NewMemStore()
	lost := errors.New("nodeid: lease lost")
	h := statusServer(t, store, detailLease{node: 7, limit: time.Now().Add(time.Hour).UnixMilli(), err: lost}, nil)
	readStatus(t, h) // the node's errors: lease, readiness
	for _, path := range []string{"/v1/segments/ordr/next", "/api/segment/get/leafy", "/tinyid/id/nextIdSimple?bizType=tiny"} {
		if w := get(h, "GET", path); w.Code != http.StatusNotFound {
			t.Fatalf("%s: %d %s, want 404", path, w.Code, w.Body)
		}
	}
	callers := func(st nodeStatus) (msgs []string) {
		for _, e := range st.Errors {
			if e.Source == "caller" {
				msgs = append(msgs, e.Message)
			}
		}
		return msgs
	}
	got := strings.Join(callers(readStatus(t, h)), "\n")
	for _, tag := range []string{`"ordr"`, `"leafy"`, `"tiny"`} {
		if !strings.Contains(got, tag) || !strings.Contains(got, "unknown tag") {
			t.Errorf("caller errors %q lack the unknown tag %s", got, tag)
		}
	}
	for i := range server.RecentErrors + 10 {
		get(h, "GET", fmt.Sprintf("/v1/segments/t%d/next", i))
	}
	st := readStatus(t, h)
	if n := len(callers(st)); n != server.RecentCallerErrors {
		t.Errorf("%d caller errors kept, want %d", n, server.RecentCallerErrors)
	}
	sources := map[string]bool{}
	for _, e := range st.Errors {
		sources[e.Source] = true
	}
	if !sources["lease"] || !sources["readiness"] {
		t.Errorf("the node's errors were pushed out by callers': %+v", st.Errors)
	}
	// A caller's other mistakes are not the node's to show.
	before := len(st.Errors)
	get(h, "GET", "/v1/snowflake/batch?count=0")
	if n := len(readStatus(t, h).Errors); n != before {
		t.Errorf("a bad count added an error: %d, want %d", n, before)
	}
}
