package etcdstore_test

import (
	"testing"

	"github.com/firn-id/firn/etcdstore"
	"github.com/firn-id/firn/internal/testserver"
	"github.com/firn-id/firn/segment"
	"github.com/firn-id/firn/segment/segmenttest"
)

func TestSegmentConformance(t *testing.T) {
	c := testserver.Etcd(t, 1)
	cli := c.Client()
	segmenttest.RunStoreTests(t, func(*testing.T) segment.Store { return etcdstore.New(cli, prefix()).Segments() })
}
