package server_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/firn-id/firn/firnpb"
	"github.com/firn-id/firn/segment"
	"github.com/firn-id/firn/segment/segmenttest"
	"github.com/firn-id/firn/server"
)

// TestRevokedSiteStreamStops: a gRPC Stream of a tag's IDs opened before
// the site's process stopped issuing for good (its value released or
// taken: node.Holder.Revoke) stops with it, as every unary call and HTTP
// route does (service.modeOff, checked before every batch): it never
// reserves another range from the segment store.
func TestRevokedSiteStreamStops(t *testing.T) {
	var revoked atomic.Pointer[error]
	auth, err := server.NewAuth(nil, server.Anonymous{})
	if err != nil {
		t.Fatal(err)
	}
	store := segmenttest.NewMemStore()
	if err := store.CreateTag(context.Background(), "order", 1, 100, ""); err != nil {
		t.Fatal(err)
	}
	a, err := segment.NewAllocator(store, segment.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close(context.Background()) })
	cfg := &server.Config{Snowflake: unreservedGenerator(t), Segments: a, SegmentStore: store, Auth: auth}
	cfg.Site = "eu"
	cfg.Revoked = func() error {
		if err := revoked.Load(); err != nil {
			return *err
		}
		return nil
	}
	c := firnpb.NewFirnClient(serveGRPC(t, cfg))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	stream, err := c.Stream(ctx, &firnpb.StreamRequest{Tag: "order", Batch: 10})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := stream.Recv(); err != nil {
		t.Fatalf("before the revocation: %v", err)
	}
	why := errors.New("the site released its value")
	revoked.Store(&why)
	if _, err := c.SegmentNext(ctx, &firnpb.SegmentRequest{Tag: "order"}); err == nil {
		t.Fatal("SegmentNext after the revocation answered; want it refused")
	}
	// Batches filled before the revocation may be in flight (flow
	// control bounds them); once they settled, no range is reserved any
	// more however long the client reads.
	time.Sleep(200 * time.Millisecond)
	settled := store.Reserves()
	var last []int64
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline) && store.Reserves() == settled; {
		resp, err := stream.Recv()
		if err != nil {
			t.Logf("the stream ended: %v", err)
			break
		}
		last = resp.Ids
	}
	if n := store.Reserves(); n > settled {
		t.Fatalf("the stream reserved a range after the revocation (%d reserves settled, %d now; last batch %v): a released site still issues segment IDs", settled, n, last)
	}
}
