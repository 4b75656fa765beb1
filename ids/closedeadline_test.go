package ids_test

import (
	"context"
	"testing"
	"time"

	"github.com/firn-id/firn/ids"
	"github.com/firn-id/firn/nodeid/nodeidtest"
)

// TestCloseKeepsItsDeadline: Close with a 1 s deadline, while the first
// acquisition waits on a store that stopped answering after the claim,
// returns by its deadline, saying a release is still in flight, rather
// than wait out the release of the claim (a third of the TTL: 20 s here).
func TestCloseKeepsItsDeadline(t *testing.T) {
	log, _ := quiet()
	store := nodeidtest.NewHungStore()
	src, err := ids.New(store, ids.Options{TTL: time.Minute, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // the claim is taken, the first extension waits
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	start := time.Now()
	done := make(chan error, 1)
	go func() { done <- src.Close(ctx) }()
	select {
	case err := <-done:
		if err == nil {
			t.Fatalf("Close returned nil after %s with its release still in flight", time.Since(start).Round(time.Millisecond))
		}
	case <-time.After(5 * time.Second):
		<-done
		t.Fatalf("Close(ctx with a 1 s deadline) returned after %s: it waited out acquireOnce's release (TTL/3 = 20 s) on a context that ignores Close's", time.Since(start).Round(time.Millisecond))
	}
}
