package zkstore

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/firn-id/firn/internal/testserver"
	"github.com/firn-id/firn/nodeid"
)

// TestRenewEndingWithTheLease ends a claim while its extension is in
// flight, as when a holder is paused (SIGSTOP) just after its Multi
// reached the server and its watchdog fires on waking, or its held/N is
// gone by the time it reads back. ErrLeaseLost is a refusal: it tells
// the caller, and the store-history checker, that nothing was written.
// So Renew may answer it only when its write did not land; a write that
// landed, or may have, is reported as such (ErrLateWrite,
// ErrOutcomeUnknown), and the next owner reads its HWM.
func TestRenewEndingWithTheLease(t *testing.T) {
	zks := testserver.ZooKeeper(t)
	req := nodeid.ClaimRequest{Node: 0, Pool: 1, Layout: layout, TTL: time.Minute}
	admin, _, err := zk.Connect(zks.Servers(), 4*time.Second, zk.WithLogger(quiet{}), zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(admin.Close)
	cases := []struct {
		name string
		// landed: the Multi reaches the server; then end ends the claim
		// before the store sees the answer; lostAnswer: the answer is lost.
		landed, lostAnswer bool
		end                func(s *Store, c *claim)
		want               error // nil: no refusal, the HWM landed
	}{
		{"landed, then the watchdog", true, false, func(s *Store, c *claim) { s.lose(c) }, ErrLateWrite},
		{"landed, answer lost, then the watchdog", true, true, func(s *Store, c *claim) { s.lose(c) }, ErrOutcomeUnknown},
		{"landed, answer lost, held/N gone", true, true, func(s *Store, c *claim) { deleteHeld(t, admin, s, c) }, ErrOutcomeUnknown},
		{"not sent, held/N gone", false, true, func(s *Store, c *claim) { deleteHeld(t, admin, s, c) }, nodeid.ErrLeaseLost},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ns := testNamespace()
			s, other := mustNew(t, zks.Servers(), ns), mustNew(t, zks.Servers(), ns)
			nc, err := s.Claim(testCtx(t), req)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.Renew(testCtx(t), nc, 1000); err != nil {
				t.Fatal(err)
			}
			c := s.lookup(nc)
			var once bool
			s.multi = func(ctx context.Context, conn *zk.Conn, ops ...any) ([]zk.MultiResponse, error) {
				if once {
					return multi(ctx, conn, ops...)
				}
				once = true
				var resp []zk.MultiResponse
				if tc.landed {
					if resp, err = multi(ctx, conn, ops...); err != nil {
						return nil, err
					}
				}
				tc.end(s, c)
				if tc.lostAnswer {
					return nil, zk.ErrConnectionClosed
				}
				return resp, nil
			}
			_, err = s.Renew(testCtx(t), nc, 3000)
			if !errors.Is(err, tc.want) {
				t.Errorf("renew = %v; want %v", err, tc.want)
			}
			if tc.landed && errors.Is(err, nodeid.ErrLeaseLost) {
				t.Errorf("renew whose write landed answers ErrLeaseLost, a refusal: %v", err)
			}
			wantHWM := map[bool]int64{true: 3000, false: 1000}[tc.landed]
			next, err := other.Claim(testCtx(t), req)
			if err != nil || next.HWM != wantHWM {
				t.Fatalf("next claim = HWM %d, %v; want %d", next.HWM, err, wantHWM)
			}
			if _, err := s.Renew(testCtx(t), nc, 4000); !errors.Is(err, nodeid.ErrLeaseLost) {
				t.Errorf("renew after the lease ended = %v; want ErrLeaseLost", err)
			}
		})
	}
}

// deleteHeld deletes c's held/N as an administrator would, leaving its
// session open.
func deleteHeld(t *testing.T, admin *zk.Conn, s *Store, c *claim) {
	t.Helper()
	if err := admin.Delete(s.heldPath(c.node), -1); err != nil {
		t.Fatalf("delete held/%d: %v", c.node, err)
	}
}
