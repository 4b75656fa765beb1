package zkstore

import (
	"context"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/firn-id/firn/internal/faultproxy"
	"github.com/firn-id/firn/internal/testserver"
	"github.com/firn-id/firn/nodeid"
)

// TestCloseWhileReconnecting: the server drops a claim's connection; the
// store's calls queue up while no server answers (the host provider never
// tells the client a pass ended, so nothing flushes them); the client
// reconnects to a server slow to answer the connect; the store is closed
// while the client waits for that answer. The client's Close could not
// queue its close request (the queue was full) and gave up; the answer
// then re-attached the session. The closed store's session must not live
// on: held/N must go once the session times out.
func TestCloseWhileReconnecting(t *testing.T) {
	zks := testserver.ZooKeeper(t)
	ctx := testCtx(t)
	ns := testNamespace()
	proxy := faultproxy.New(t, zks.Servers()[0])
	s, err := New(Config{Servers: []string{proxy.Addr()}, Namespace: ns, RetryPause: MinRetryPause})
	if err != nil {
		t.Fatal(err)
	}
	const ttl = 20 * testserver.ZooKeeperTick // the longest session the test server grants
	nc, err := s.Claim(ctx, nodeid.ClaimRequest{Node: 3, Pool: 4, Layout: layout, TTL: ttl})
	if err != nil {
		t.Fatal(err)
	}
	before := runtime.NumGoroutine()
	proxy.Cut()
	// Calls made while no server answers; each gives up at its deadline,
	// its request left queued in the client.
	for i := range 20 {
		c, cancel := context.WithTimeout(ctx, 5*time.Millisecond)
		s.Renew(c, nc, int64(i+1))
		cancel()
	}
	proxy.Delay(2500 * time.Millisecond) // the connect's answer, held
	proxy.Restore()
	time.Sleep(200 * time.Millisecond) // the client dials and sends its connect
	go func() { time.Sleep(time.Second); proxy.Delay(0) }()
	start := time.Now()
	s.Close()
	t.Logf("Close took %s", time.Since(start))

	conn, _, err := zk.Connect(zks.Servers(), 4*time.Second, zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	held := ns + "/held/" + strconv.Itoa(3)
	deadline := time.Now().Add(3 * ttl)
	for {
		conn.Sync(ns)
		ok, _, err := conn.Exists(held)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s still held %s after the store was closed (over twice the session timeout %s): the closed store's session lives on", held, time.Since(start), ttl)
		}
		time.Sleep(100 * time.Millisecond)
	}
	// And nothing of the closed store's client runs on.
	for time.Now().Before(deadline) && runtime.NumGoroutine() > before {
		time.Sleep(50 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		buf := make([]byte, 1<<20)
		t.Fatalf("%d goroutines after Close, %d before the cut:\n%s", n, before, buf[:runtime.Stack(buf, true)])
	}
}
