package zkstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/firn-id/firn/internal/faultproxy"
	"github.com/firn-id/firn/internal/zktest"
	"github.com/firn-id/firn/nodeid"
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
// the ticks between the two would be issued by both: duplicate IDs.
func TestStaleOwnerAfterTakeover(t *testing.T) {
	zks := zktest.Start(t)
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
			if err := old.prepare(ctx, sess.conn, layout); err != nil {
				t.Fatal(err)
			}
			paused, held, err := old.tryNode(ctx, sess, 0, "paused-owner", time.Second)
			if err != nil || held {
				t.Fatalf("claim: held %v, %v", held, err)
			}
			confirmed, err := old.extend(ctx, paused, 1000)
			if err != nil || confirmed != 1000 {
				t.Fatalf("extend before the pause = %d, %v; want 1000", confirmed, err)
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
			if taken.HWM != 1000 {
				t.Fatalf("takeover starts at %d, want the paused owner's 1000", taken.HWM)
			}

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
				got, err = tt.extend(ctx, old, paused, 5000)
				if err == nil || errors.Is(err, nodeid.ErrLeaseLost) || definite(err) || ctx.Err() != nil {
					break
				}
				t.Logf("extension: %v; again", err)
				time.Sleep(100 * time.Millisecond)
			}
			if tt.mutant {
				if err != nil || got <= taken.HWM {
					t.Fatalf("mutant extension = %d, %v: the test no longer shows the duplicate it exists to catch", got, err)
				}
				t.Logf("mutant: the paused owner was confirmed HWM %d, the new owner starts at %d: ticks [%d, %d) issued twice", got, taken.HWM, taken.HWM, got)
				return
			}
			if !errors.Is(err, nodeid.ErrLeaseLost) {
				t.Fatalf("the paused owner's extension after the takeover = %d, %v; want ErrLeaseLost", got, err)
			}
			if hwm := mustRenew(t, next, taken, 0); hwm != 1000 {
				t.Fatalf("stored HWM %d after the refused extension, want 1000", hwm)
			}
		})
	}
}

func mustRenew(t *testing.T, s *Store, c nodeid.Claim, hwm int64) int64 {
	t.Helper()
	got, err := s.Renew(testCtx(t), c, hwm)
	if err != nil {
		t.Fatalf("renew: %v", err)
	}
	return got
}
