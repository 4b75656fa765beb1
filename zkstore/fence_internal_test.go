package zkstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/firn-id/firn/internal/faultproxy"
	"github.com/firn-id/firn/internal/testserver"
	"github.com/firn-id/firn/nodeid"
	"github.com/firn-id/firn/snowflake"
)

var layout = nodeid.LayoutID{Fingerprint: "v1:fence", Description: "fence test"}

func testNamespace() string {
	b := make([]byte, 6)
	rand.Read(b)
	return "/firn-test/" + hex.EncodeToString(b)
}

func mustNew(t *testing.T, servers []string, ns string) *Store {
	t.Helper()
	s, err := New(Config{Servers: servers, Namespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// extendHWMVersionOnly is the mutant extension: a compare-and-set on
// hwm/N's own version, with no check of who owns the node.
func extendHWMVersionOnly(ctx context.Context, s *Store, c *claim, hwm int64) (int64, error) {
	_, st, err := s.readHWM(ctx, c.conn, c.node)
	if err != nil {
		return 0, err
	}
	if _, err := multi(ctx, c.conn, &zk.SetDataRequest{Path: s.hwmPath(c.node), Data: []byte(strconv.FormatInt(hwm, 10)), Version: st.Version}); err != nil {
		return 0, err
	}
	return hwm, nil
}

// TestStaleOwnerAfterTakeover pauses an owner (its watchdog and session
// watch do not run: the claim is made without them, as in a stopped
// process) behind a proxy cut past its session timeout. The server
// expires the session, a second store takes the node, the cut ends and
// the paused owner's client opens a new session on its own. Then the
// paused owner extends: the real extension is refused by owner/N's
// version; the mutant, a compare-and-set on the HWM's own version, is
// not — it confirms an HWM past the one the new owner started from, and
// generators running on what each owner was confirmed issue the same IDs.
func TestStaleOwnerAfterTakeover(t *testing.T) {
	zks := testserver.ZooKeeper(t)
	for _, tt := range []struct {
		name   string
		extend func(ctx context.Context, s *Store, c *claim, hwm int64) (int64, error)
		mutant bool
	}{
		{name: "fenced by owner version", extend: func(ctx context.Context, s *Store, c *claim, hwm int64) (int64, error) {
			return s.extend(ctx, c, hwm)
		}},
		{name: "mutant: HWM version only", extend: extendHWMVersionOnly, mutant: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := testCtx(t)
			ns := testNamespace()
			proxy := faultproxy.New(t, zks.Servers()[0])
			old := mustNew(t, []string{proxy.Addr()}, ns)
			next := mustNew(t, zks.Servers(), ns)

			sess, err := old.open(ctx, time.Second)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(sess.conn.Close)
			version, err := old.prepare(ctx, sess.conn, layout)
			if err != nil {
				t.Fatal(err)
			}
			paused, held, err := old.tryNode(ctx, sess, 0, "paused-owner", time.Second, version)
			if err != nil || held {
				t.Fatalf("claim: held %v, %v", held, err)
			}
			// The paused owner's last confirmed HWM: now. Its clock runs on
			// past it during the pause, so whatever it issues after the
			// pause needs a later HWM.
			before := time.Now().UnixMilli()
			confirmed, err := old.extend(ctx, paused, before)
			if err != nil || confirmed != before {
				t.Fatalf("extend before the pause = %d, %v; want %d", confirmed, err, before)
			}

			proxy.Cut()
			// The server expires the session: the node is free.
			var taken nodeid.Claim
			for {
				taken, err = next.Claim(ctx, nodeid.ClaimRequest{Node: 0, Pool: 1, Layout: layout, TTL: time.Minute})
				if err == nil {
					break
				}
				if !errors.Is(err, nodeid.ErrNodeHeld) {
					t.Fatalf("takeover: %v", err)
				}
				time.Sleep(50 * time.Millisecond)
			}
			if taken.HWM != before {
				t.Fatalf("takeover starts at %d, want the paused owner's %d", taken.HWM, before)
			}
			// The new owner keeps its HWM ahead of its clock, as a lease does.
			newLimit := mustRenew(t, next, taken, time.Now().Add(5*time.Second).UnixMilli())

			proxy.Restore()
			for paused.conn.SessionID() == paused.id || paused.conn.State() != zk.StateHasSession {
				if ctx.Err() != nil {
					t.Fatal("the paused owner's client never opened a new session")
				}
				time.Sleep(20 * time.Millisecond)
			}

			// A session on a loaded machine may flap: an error that is
			// neither a success nor a refusal says nothing yet.
			var got int64
			for {
				got, err = tt.extend(ctx, old, paused, time.Now().Add(5*time.Second).UnixMilli())
				if err == nil || errors.Is(err, nodeid.ErrLeaseLost) || definite(err) || ctx.Err() != nil {
					break
				}
				t.Logf("extension: %v; again", err)
				time.Sleep(100 * time.Millisecond)
			}
			oldLimit := confirmed
			if err == nil {
				oldLimit = got
			}
			// Both owners issue from node 0 for a moment, each up to the
			// HWM the store confirmed to it.
			dups := issueBoth(t, reservation{limit: oldLimit}, reservation{start: taken.HWM, limit: newLimit})
			if tt.mutant {
				if err != nil || dups == 0 {
					t.Fatalf("mutant extension = %d, %v, %d duplicate IDs: the test no longer shows the duplicate it exists to catch", got, err, dups)
				}
				t.Logf("mutant: the paused owner was confirmed HWM %d, the new owner started at %d: %d IDs issued by both", got, taken.HWM, dups)
				return
			}
			if !errors.Is(err, nodeid.ErrLeaseLost) {
				t.Fatalf("the paused owner's extension after the takeover = %d, %v; want ErrLeaseLost", got, err)
			}
			if dups != 0 {
				t.Fatalf("%d IDs issued by both owners", dups)
			}
			if hwm := mustRenew(t, next, taken, 0); hwm != newLimit {
				t.Fatalf("stored HWM %d after the refused extension, want the new owner's %d", hwm, newLimit)
			}
		})
	}
}

// reservation is a fixed permit for a generator: from start (or its
// clock, if later) up to limit.
type reservation struct{ start, limit int64 }

func (reservation) BindGenerator(func() int64) error { return nil }
func (r reservation) Start() int64                   { return r.start }
func (r reservation) Limit() int64                   { return r.limit }

// issueBoth runs a generator of node 0 on each reservation side by side,
// one ID a millisecond for half a second, and returns how many IDs both
// issued.
func issueBoth(t *testing.T, a, b reservation) int {
	t.Helper()
	lay := snowflake.DefaultLayout()
	ids := make([]map[int64]bool, 2)
	var wg sync.WaitGroup
	for i, r := range []reservation{a, b} {
		g, err := snowflake.New(snowflake.Config{Layout: lay, Node: 0, Reservation: r})
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = map[int64]bool{}
		wg.Go(func() {
			for end := time.Now().Add(500 * time.Millisecond); time.Now().Before(end); time.Sleep(time.Millisecond) {
				if id, err := g.Next(context.Background()); err == nil {
					ids[i][id] = true
				}
			}
		})
	}
	wg.Wait()
	dups := 0
	for id := range ids[0] {
		if ids[1][id] {
			dups++
		}
	}
	t.Logf("the paused owner issued %d IDs, the new owner %d", len(ids[0]), len(ids[1]))
	return dups
}

func mustRenew(t *testing.T, s *Store, c nodeid.Claim, hwm int64) int64 {
	t.Helper()
	got, err := s.Renew(testCtx(t), c, hwm)
	if err != nil {
		t.Fatalf("renew: %v", err)
	}
	return got
}
