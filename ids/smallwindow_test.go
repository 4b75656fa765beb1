package ids_test

import (
	"context"
	"testing"
	"time"

	"github.com/firn-id/firn/ids"
	"github.com/firn-id/firn/nodeid"
	"github.com/firn-id/firn/nodeid/nodeidtest"
)

// slowRenew answers every Renew after d: a healthy store a few
// milliseconds away (a database across a zone, an fsync on a busy disk).
type slowRenew struct {
	*nodeidtest.MemStore
	d time.Duration
}

func (s slowRenew) Renew(ctx context.Context, c nodeid.Claim, hwm int64) (int64, error) {
	select {
	case <-time.After(s.d):
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	return s.MemStore.Renew(ctx, c, hwm)
}

// TestSmallWindowOverASlowStore: a window of 30 ms (valid: at least
// 10 ms) over a store that answers every write in 25 ms keeps the source
// issuing: a renewal is given at least 100 ms to answer, not a third of
// the window, which no answer would meet.
func TestSmallWindowOverASlowStore(t *testing.T) {
	log, buf := quiet()
	store := slowRenew{nodeidtest.NewMemStore(), 25 * time.Millisecond}
	src, err := ids.New(store, ids.Options{Window: 30 * time.Millisecond, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close(context.Background())
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	if _, err := src.Next(ctx); err != nil {
		t.Fatalf("first ID: %v", err)
	}
	var failed, ok int
	var last error
	end := time.Now().Add(3 * time.Second)
	for time.Now().Before(end) {
		cctx, ccancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
		_, err := src.Next(cctx)
		ccancel()
		if err != nil {
			failed++
			last = err
		} else {
			ok++
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("store writes confirmed: %d", store.Writes())
	if failed > 0 {
		t.Fatalf("store answering every renewal in 25 ms, Window=30ms: %d of %d calls failed; last: %v\nlog tail: %s", failed, ok+failed, last, tail(buf.String(), 400))
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
