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

// TestClaimRacingRerecord: a Rerecord lands between a claim's read of
// the namespace's record and the claim's Multi. The Multi checks the
// layout znode at the version read, so it is refused whole, and the
// claim compares the new record: another layout's refuses the claim (it
// is neither taken under a record that no longer holds nor reported as a
// full pool); one of the same layout is taken under the new record,
// which then fences the claim's renewals, while a claim taken before the
// Rerecord renews no more.
func TestClaimRacingRerecord(t *testing.T) {
	zks := testserver.ZooKeeper(t)
	req := nodeid.ClaimRequest{AnyNode: true, Pool: 4, Layout: layout, TTL: time.Minute}
	for _, tc := range []struct {
		name string
		next nodeid.LayoutID
		want error // nil: the claim is taken under next
	}{
		{"to another layout", nodeid.LayoutID{Fingerprint: "v1:other", Description: "another layout"}, nodeid.ErrLayoutMismatch},
		{"to the same layout", nodeid.LayoutID{Fingerprint: layout.Fingerprint, Description: layout.Description + ", described again"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns := testNamespace()
			s, admin := mustNew(t, zks.Servers(), ns), mustNew(t, zks.Servers(), ns)
			before, err := admin.Claim(testCtx(t), req) // records the layout
			if err != nil {
				t.Fatal(err)
			}
			multis := 0
			s.multi = func(ctx context.Context, conn *zk.Conn, ops ...any) ([]zk.MultiResponse, error) {
				if multis++; multis == 1 {
					if err := admin.Rerecord(ctx, layout, tc.next); err != nil {
						t.Errorf("Rerecord: %v", err)
					}
				}
				return multi(ctx, conn, ops...)
			}
			c, err := s.Claim(testCtx(t), req)
			if tc.want != nil {
				if !errors.Is(err, tc.want) {
					t.Fatalf("claim whose Multi followed a Rerecord = node %d, %v; want %v", c.Node, err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatalf("claim whose Multi followed a Rerecord of the same layout: %v", err)
			}
			if c.Fence != 1 {
				t.Errorf("claim's fence = %d; want 1, the layout znode's version after the Rerecord", c.Fence)
			}
			if got, err := s.Renew(testCtx(t), c, 1000); err != nil || got != 1000 {
				t.Errorf("renew of the claim taken under the new record = %d, %v; want 1000", got, err)
			}
			if _, err := admin.Renew(testCtx(t), before, 1000); !errors.Is(err, nodeid.ErrLeaseLost) {
				t.Errorf("renew of the claim taken under the old record = %v; want ErrLeaseLost", err)
			}
		})
	}
}

// TestRerecordLostAnswer loses the answer of a Rerecord's write, after it
// landed or before it was sent. The store reads back after a Sync and
// decides from what it finds: the record is new either way (the write
// landed, or was sent again), and never a *RecordChangedError naming the
// record the Rerecord wrote itself.
func TestRerecordLostAnswer(t *testing.T) {
	zks := testserver.ZooKeeper(t)
	next := nodeid.LayoutID{Fingerprint: "v1:next", Description: "the next record"}
	for _, tc := range []struct {
		name   string
		old    nodeid.LayoutID // zero: none recorded, the write creates
		landed bool
	}{
		{"create landed", nodeid.LayoutID{}, true},
		{"create not sent", nodeid.LayoutID{}, false},
		{"set landed", layout, true},
		{"set not sent", layout, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := mustNew(t, zks.Servers(), testNamespace())
			if tc.old.Fingerprint != "" {
				if err := s.Rerecord(testCtx(t), nodeid.LayoutID{}, tc.old); err != nil {
					t.Fatal(err)
				}
			}
			loseNext(s, tc.landed)
			if err := s.Rerecord(testCtx(t), tc.old, next); err != nil {
				t.Fatalf("Rerecord whose answer was lost: %v; want the record written", err)
			}
			if got, err := s.Record(testCtx(t)); err != nil || got.Fingerprint != next.Fingerprint || got.Description != next.Description {
				t.Fatalf("Record = %+v, %v; want %+v", got, err, next)
			}
		})
	}
}
