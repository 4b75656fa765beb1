package node_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/firn-id/firn/node"
	"github.com/firn-id/firn/nodeid"
	"github.com/firn-id/firn/nodeid/nodeidtest"
	"github.com/firn-id/firn/snowflake"
)

// TestOnceReleases: Once builds its generator on the lease's node, and
// releases the node when f returns, with f's error or without; a
// layout the store does not hold is Acquire's error, and f does not run.
func TestOnceReleases(t *testing.T) {
	store := nodeidtest.NewMemStore()
	cfg := config(store)
	boom := errors.New("boom")
	for _, want := range []error{nil, boom, nil} {
		err := node.Once(t.Context(), store, cfg.Lease, cfg.Generator, func(g *snowflake.Generator, lease *nodeid.Lease) error {
			if g.Node() != lease.Node() || lease.Node() != 0 {
				t.Errorf("generator on node %d, lease on node %d; want node 0 each time (released)", g.Node(), lease.Node())
			}
			if _, err := g.Next(t.Context()); node.Waiting(err, lease) || err != nil {
				t.Errorf("Next: %v", err)
			}
			return want
		})
		if !errors.Is(err, want) || (want == nil && err != nil) {
			t.Fatalf("Once: %v, want %v", err, want)
		}
	}
	other := cfg.Lease
	other.Layout = nodeid.LayoutID{Fingerprint: "other", Description: "another layout"}
	err := node.Once(t.Context(), store, other, cfg.Generator, func(*snowflake.Generator, *nodeid.Lease) error {
		t.Error("f ran without a lease")
		return nil
	})
	if !errors.Is(err, nodeid.ErrLayoutMismatch) {
		t.Fatalf("Once with another layout: %v, want nodeid.ErrLayoutMismatch", err)
	}
}

// A one-shot job takes a node, draws its IDs, and gives the node back.
func ExampleOnce() {
	store := nodeidtest.NewMemStore() // or a store of localstore, etcdstore, sqlstore
	l := snowflake.DefaultLayout()
	lc := nodeid.Config{NodeBits: l.NodeBits(), Layout: nodeid.LayoutID{Fingerprint: l.Fingerprint(), Description: l.String()}}
	err := node.Once(context.Background(), store, lc, snowflake.Config{Layout: l}, func(g *snowflake.Generator, lease *nodeid.Lease) error {
		ids := make([]int64, 3)
		n, err := g.NextN(context.Background(), ids)
		fmt.Println("node", lease.Node(), "drew", n, "IDs")
		return err
	})
	fmt.Println(err)
	// Output:
	// node 0 drew 3 IDs
	// <nil>
}
