package zkstore

import (
	"context"
	"testing"
	"time"

	"github.com/firn-id/firn/internal/testserver"
	"github.com/firn-id/firn/nodeid"
)

// TestHugeTTL asks for TTLs past nodeid.MaxTTL, the second past what the
// protocol's int32 milliseconds hold: each claim is refused at once, not
// left to its deadline, and never granted.
func TestHugeTTL(t *testing.T) {
	zks := testserver.ZooKeeper(t)
	s := mustNew(t, zks.Servers(), testNamespace())
	for _, ttl := range []time.Duration{30 * 24 * time.Hour, 1<<63 - 1} {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		start := time.Now()
		c, err := s.Claim(ctx, nodeid.ClaimRequest{Node: 0, Pool: 1, Layout: layout, TTL: ttl})
		cancel()
		t.Logf("TTL %s: %v, %v after %s", ttl, c, err, time.Since(start).Round(time.Millisecond))
		if err != nil && time.Since(start) > 2*time.Second {
			t.Errorf("claim with TTL %s ran into its deadline: %v", ttl, err)
		}
		if err == nil {
			t.Errorf("claim with TTL %s past nodeid.MaxTTL granted", ttl)
			s.Release(context.Background(), c)
		}
	}
}

// TestHugeSessionTimeout: a session timeout past the protocol's int32
// milliseconds is refused by New.
func TestHugeSessionTimeout(t *testing.T) {
	_, err := New(Config{Servers: []string{"127.0.0.1:2181"}, Namespace: "/firn/orders", SessionTimeout: 30 * 24 * time.Hour})
	if err == nil {
		t.Fatal("New with a session timeout of 720h: nil error, want a refusal")
	}
}
