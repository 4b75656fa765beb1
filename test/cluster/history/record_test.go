package history_test

import (
	"bytes"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/firn-id/firn/test/cluster/history"
)

// gateWriter blocks every Write until released: a disk the kernel holds
// back.
type gateWriter struct {
	release chan struct{}
	mu      sync.Mutex
	buf     bytes.Buffer
}

func (g *gateWriter) Write(p []byte) (int, error) {
	<-g.release
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.buf.Write(p)
}

// A caller recording a request never waits for the file: with the file's
// writes held back, callers record megabytes; once released, Flush writes
// every record, each caller's in the order it recorded them.
func TestWriteNeverWaitsForTheFile(t *testing.T) {
	g := &gateWriter{release: make(chan struct{})}
	w := history.NewWriter(g)
	const callers, each = 4, 3000
	ids := make([]int64, 100) // about 2 MB of records in all
	for i := range ids {
		ids[i] = 1 << 40
	}
	done := make(chan struct{})
	go func() {
		var wg sync.WaitGroup
		for c := range callers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range each {
					if err := w.Write(history.Record{Kind: history.KindRequest, Caller: fmt.Sprint("c", c), Invoke: int64(i), IDs: ids}); err != nil {
						t.Error(err)
						return
					}
				}
			}()
		}
		wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("callers blocked while the file's writes were held back")
	}
	close(g.release)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	next := map[string]int64{}
	n := 0
	if err := history.Scan(&g.buf, func(r history.Record) error {
		if r.Invoke != next[r.Caller] {
			return fmt.Errorf("caller %s: record %d after %d", r.Caller, r.Invoke, next[r.Caller]-1)
		}
		next[r.Caller]++
		n++
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if n != callers*each {
		t.Fatalf("%d records written, want %d", n, callers*each)
	}
}
