package zkstore

import (
	"fmt"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
)

// The bounds of Config.RetryPause. Below 10 ms a pass over servers that
// all refuse at once would spin; past 10 s (the default session timeout)
// a session would expire waiting for the next pass.
const (
	DefaultRetryPause = time.Second
	MinRetryPause     = 10 * time.Millisecond
	MaxRetryPause     = 10 * time.Second
)

// CheckRetryPause refuses a retry pause out of bounds: New calls it, and
// so does every check of a configuration before it opens a store.
func CheckRetryPause(d time.Duration) error {
	if d < MinRetryPause || d > MaxRetryPause {
		return &ConfigError{Words: "retry pause", Reason: fmt.Sprintf("%s: want %s to %s", d, MinRetryPause, MaxRetryPause)}
	}
	return nil
}

// passes is a session's zk.HostProvider: the client's own
// (zk.DNSHostProvider: the servers resolved once and shuffled), with the
// store's pause between passes over them. The client pauses a fixed
// second when Next says a pass ended without a connection (retryStart)
// and only then looks whether it was closed (conn.go, connect). passes
// takes the pause itself and never says a pass ended while the session
// is open; once stopped, it says so at the end of the pass under way, so
// the client ends as soon as it would have. One difference remains: the
// client fails the requests queued while it found no server
// (ErrNoServer) only when a pass ends, so they wait for their caller's
// deadline instead, as every call of the store has one.
type passes struct {
	*zk.DNSHostProvider
	pause time.Duration
	quit  chan struct{}
	once  sync.Once
}

func newPasses(pause time.Duration) *passes {
	return &passes{DNSHostProvider: zk.NewDNSHostProvider(), pause: pause, quit: make(chan struct{})}
}

// Next returns the next server to dial, after the pause when the last
// pass found none.
func (p *passes) Next() (server string, retryStart bool) {
	server, ended := p.DNSHostProvider.Next()
	if !ended {
		return server, false
	}
	t := time.NewTimer(p.pause)
	defer t.Stop()
	select {
	case <-p.quit:
		return server, true
	case <-t.C:
		return server, false
	}
}

// stop lets the client's connection loop end: a session closes with it.
func (p *passes) stop() { p.once.Do(func() { close(p.quit) }) }
