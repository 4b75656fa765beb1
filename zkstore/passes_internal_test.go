package zkstore

import (
	"testing"
	"testing/synctest"
	"time"
)

// TestPassesPause: the host provider pauses the configured time at the
// end of each pass over the servers, never at its start or between two
// servers, and never tells the client a pass ended (which would add the
// client's own second); once stopped, it ends a pause at once and tells
// the client, which then sees it was closed.
func TestPassesPause(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const pause = 250 * time.Millisecond
		p := newPasses(pause)
		if err := p.Init([]string{"127.0.0.1:1", "127.0.0.1:2"}); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		seen := map[string]bool{}
		for pass := range 3 {
			for range 2 {
				server, ended := p.Next()
				if ended {
					t.Fatalf("pass %d: Next told the client a pass ended", pass)
				}
				seen[server] = true
			}
			if got := time.Since(start); got != time.Duration(pass)*pause {
				t.Fatalf("after pass %d: %s paused, want %s", pass, got, time.Duration(pass)*pause)
			}
		}
		if len(seen) != 2 {
			t.Fatalf("servers dialed: %v, want both", seen)
		}
		p.Connected() // a connection resets the pass
		if _, ended := p.Next(); ended || time.Since(start) != 2*pause {
			t.Fatalf("after a connection the next server came after %s (ended %t)", time.Since(start)-2*pause, ended)
		}
		go func() {
			time.Sleep(pause / 5)
			p.stop()
		}()
		_, ended := p.Next() // the end of the pass (the other server, then the one connected to): the pause, cut short
		if !ended || time.Since(start) != 2*pause+pause/5 {
			t.Fatalf("stopped: ended %t after %s, want true after %s", ended, time.Since(start), 2*pause+pause/5)
		}
	})
}
