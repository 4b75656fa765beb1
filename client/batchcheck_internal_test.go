package client

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/firn-id/firn/internal/idtest"
)

// mangledServer answers batches of IDs it issued, mangled as a broken
// server or a proxy might, and records every ID of a mangled batch. A
// batch of one ID, which no mangling makes bad, is answered as it is.
type mangledServer struct {
	*fakeServer
	mangle func([]int64)

	mu   sync.Mutex
	sent map[int64]bool
	n    int // batches answered
}

func (m *mangledServer) batch(ctx context.Context, tag string, n int) ([]int64, bool, error) {
	ids, unordered, err := m.fakeServer.batch(ctx, tag, n)
	if err != nil || len(ids) < 2 {
		return ids, unordered, err
	}
	m.mangle(ids)
	m.mu.Lock()
	defer m.mu.Unlock()
	m.n++
	for _, id := range ids {
		m.sent[id] = true
	}
	return ids, unordered, nil
}

func (m *mangledServer) answered() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.n
}

// TestBadBatchFailsOverAndIsNeverServed: one of two servers answers
// snowflake batches out of order, or segment batches with an ID twice.
// Callers see no error, get no ID of a bad batch, and no ID twice; each
// bad batch counts as a failure of its server, and the refill fails over
// to the other.
func TestBadBatchFailsOverAndIsNeverServed(t *testing.T) {
	for _, tc := range []struct {
		name   string
		tag    string
		mangle func([]int64)
	}{
		{name: "snowflake out of order", mangle: func(ids []int64) { ids[0], ids[1] = ids[1], ids[0] }},
		{name: "snowflake with an ID twice", mangle: func(ids []int64) { ids[len(ids)-1] = ids[len(ids)-2] }},
		{name: "segment with an ID twice", tag: "order", mangle: func(ids []int64) { ids[len(ids)-1] = ids[0] }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, fakes := fakeClient(t, 2, Config{Buffer: 10, MaxBuffer: 10, MaxBatch: 10, Parallel: 1,
				HealthInterval: time.Millisecond, Backoff: time.Millisecond})
			bad := &mangledServer{fakeServer: fakes[0], mangle: tc.mangle, sent: map[int64]bool{}}
			c.pool.eps[0].t = bad
			next := c.Next
			if tc.tag != "" {
				next = c.Tag(tc.tag).Next
			}
			rec := idtest.NewRecorder(t)
			var got []int64
			ctx := context.Background()
			for i := 0; bad.answered() < 3; i++ {
				if i == 1_000_000 {
					t.Fatalf("the bad server answered %d batches in %d IDs", bad.answered(), i)
				}
				id, err := next(ctx)
				if err != nil {
					t.Fatalf("Next: %v", err)
				}
				got = append(got, id)
			}
			rec.AddUnordered(got...)
			bad.mu.Lock()
			defer bad.mu.Unlock()
			for _, id := range got {
				if bad.sent[id] {
					t.Fatalf("ID %d of a bad batch was handed out", id)
				}
			}
			s := c.Stats()
			if s.Endpoints[0].Failures == 0 || s.Failovers == 0 {
				t.Errorf("bad server's failures %d, failovers %d: want both above 0", s.Endpoints[0].Failures, s.Failovers)
			}
			if s.Endpoints[1].Failures != 0 {
				t.Errorf("the good server counted %d failures", s.Endpoints[1].Failures)
			}
		})
	}
}

// TestFetchRefusesABadBatch: Fetch, which asks the servers for the call
// alone, fails over from a server whose batch repeats an ID and writes
// only the other server's IDs.
func TestFetchRefusesABadBatch(t *testing.T) {
	c, fakes := fakeClient(t, 2, Config{MaxBatch: 10})
	bad := &mangledServer{fakeServer: fakes[0], mangle: func(ids []int64) { ids[1] = ids[0] }, sent: map[int64]bool{}}
	c.pool.eps[0].t = bad
	for range 20 {
		dst := make([]int64, 10)
		n, err := c.Tag("order").Fetch(context.Background(), dst)
		if err != nil || n != 10 {
			t.Fatalf("Fetch: %d, %v", n, err)
		}
		bad.mu.Lock()
		for _, id := range dst {
			if bad.sent[id] {
				t.Fatalf("ID %d of a bad batch was written", id)
			}
		}
		bad.mu.Unlock()
		if !slices.IsSorted(dst) {
			t.Fatalf("Fetch: %v", dst)
		}
	}
	if bad.answered() == 0 || c.Stats().Endpoints[0].Failures == 0 {
		t.Errorf("the bad server answered %d batches, counted %d failures: want both above 0", bad.answered(), c.Stats().Endpoints[0].Failures)
	}
}
