package nodeidtest

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/firn-id/firn/nodeid"
)

// RunReserverTests runs the conformance suite of nodeid.Reserver.
// newStore returns an empty store in a namespace of its own; the suite
// calls it once per subtest.
func RunReserverTests(t *testing.T, newStore func(t *testing.T) nodeid.Reserver) {
	tests := []struct {
		name string
		run  func(t *testing.T, s nodeid.Reserver)
	}{
		{name: "claims pass reserved nodes over", run: reservedPassedOver},
		{name: "a reserved node claimed by number is refused", run: reservedByNumber},
		{name: "every claim starts at the floor or its HWM", run: floorUnderClaims},
		{name: "reserve merges and never lowers", run: reserveMerges},
		{name: "unreserve lets one node out for good", run: unreserveOne},
		{name: "a held node cannot be reserved", run: reserveHeld},
		{name: "another layout is refused", run: reserveOtherLayout},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.run(t, newStore(t)) })
	}
}

func mustReserve(t *testing.T, s nodeid.Reserver, r nodeid.Reservation) nodeid.Reservation {
	t.Helper()
	r.Layout = Layout
	got, err := s.Reserve(ctx(t), r)
	if err != nil {
		t.Fatalf("reserve: %v", err)
	}
	return got
}

func reservedPassedOver(t *testing.T, s nodeid.Reserver) {
	mustReserve(t, s, nodeid.Reservation{Nodes: []uint64{0, 2}, Note: "suite"})
	a := mustClaim(t, s, anyNode(4, time.Minute))
	b := mustClaim(t, s, anyNode(4, time.Minute))
	if a.Node != 1 || b.Node != 3 {
		t.Fatalf("nodes %d, %d; want 1, 3 (0 and 2 reserved)", a.Node, b.Node)
	}
	_, err := s.Claim(ctx(t), anyNode(4, time.Minute))
	if !errors.Is(err, nodeid.ErrPoolFull) {
		t.Fatalf("third claim: %v, want ErrPoolFull", err)
	}
}

func reservedByNumber(t *testing.T, s nodeid.Reserver) {
	mustReserve(t, s, nodeid.Reservation{Nodes: []uint64{5}, Note: "suite"})
	_, err := s.Claim(ctx(t), oneNode(5, 8, time.Minute))
	var re *nodeid.ReservedError
	if !errors.As(err, &re) || re.Node != 5 || !errors.Is(err, nodeid.ErrNodeReserved) {
		t.Fatalf("claim of node 5: %v, want *ReservedError for node 5", err)
	}
	mustClaim(t, s, oneNode(4, 8, time.Minute))
}

func floorUnderClaims(t *testing.T, s nodeid.Reserver) {
	c := mustClaim(t, s, oneNode(1, 8, time.Minute))
	mustRenew(t, s, c, 9_000)
	mustRelease(t, s, c)
	mustReserve(t, s, nodeid.Reservation{Floor: 5_000, Note: "suite"})
	if got := mustClaim(t, s, oneNode(0, 8, time.Minute)).HWM; got != 5_000 {
		t.Fatalf("node 0 claimed at HWM %d, want the floor 5000", got)
	}
	if got := mustClaim(t, s, oneNode(1, 8, time.Minute)).HWM; got != 9_000 {
		t.Fatalf("node 1 claimed at HWM %d, want its own 9000 (above the floor)", got)
	}
}

func reserveMerges(t *testing.T, s nodeid.Reserver) {
	mustReserve(t, s, nodeid.Reservation{Nodes: []uint64{3, 1}, Floor: 7_000, Note: "first"})
	got := mustReserve(t, s, nodeid.Reservation{Nodes: []uint64{2, 3}, Floor: 6_000, Note: "second"})
	want := nodeid.Reservation{Nodes: []uint64{1, 2, 3}, Floor: 7_000, Note: "first"}
	read, err := s.Reservation(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []nodeid.Reservation{got, read} {
		if !slices.Equal(r.Nodes, want.Nodes) || r.Floor != want.Floor || r.Note != want.Note {
			t.Fatalf("reservation %+v, want %+v", r, want)
		}
	}
}

func unreserveOne(t *testing.T, s nodeid.Reserver) {
	mustReserve(t, s, nodeid.Reservation{Nodes: []uint64{1, 2}, Floor: 4_000, Note: "suite"})
	if _, err := s.Unreserve(ctx(t), 1, ""); err == nil {
		t.Fatal("unreserve with no note: nil error")
	}
	if _, err := s.Unreserve(ctx(t), 6, "checked"); !errors.Is(err, nodeid.ErrNotReserved) {
		t.Fatalf("unreserve of node 6: %v, want ErrNotReserved", err)
	}
	r, err := s.Unreserve(ctx(t), 1, "checked")
	if err != nil || !slices.Equal(r.Nodes, []uint64{2}) || len(r.Unreserved) != 1 || r.Unreserved[0].Note != "checked" {
		t.Fatalf("unreserve node 1: %+v, %v", r, err)
	}
	r = mustReserve(t, s, nodeid.Reservation{Nodes: []uint64{1, 2}})
	if r.Holds(1) {
		t.Fatalf("a second reserve put node 1 back: %+v", r)
	}
	if got := mustClaim(t, s, oneNode(1, 8, time.Minute)).HWM; got != 4_000 {
		t.Fatalf("node 1 claimed at HWM %d, want the floor 4000", got)
	}
}

func reserveHeld(t *testing.T, s nodeid.Reserver) {
	mustClaim(t, s, oneNode(2, 8, time.Minute))
	_, err := s.Reserve(ctx(t), nodeid.Reservation{Nodes: []uint64{2}, Layout: Layout})
	if !errors.Is(err, nodeid.ErrNodeHeld) {
		t.Fatalf("reserve a held node: %v, want ErrNodeHeld", err)
	}
	if r, err := s.Reservation(ctx(t)); err != nil || r.Holds(2) {
		t.Fatalf("after the refusal: %+v, %v; want nothing reserved", r, err)
	}
}

func reserveOtherLayout(t *testing.T, s nodeid.Reserver) {
	mustClaim(t, s, oneNode(0, 8, time.Minute))
	other := nodeid.LayoutID{Fingerprint: "v1:other", Description: "other"}
	_, err := s.Reserve(ctx(t), nodeid.Reservation{Nodes: []uint64{3}, Layout: other})
	if !errors.Is(err, nodeid.ErrLayoutMismatch) {
		t.Fatalf("reserve under another layout: %v, want ErrLayoutMismatch", err)
	}
}
