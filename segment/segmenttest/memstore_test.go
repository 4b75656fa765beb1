package segmenttest_test

import (
	"testing"

	"github.com/firn-id/firn/segment"
	"github.com/firn-id/firn/segment/segmenttest"
)

func TestMemStore(t *testing.T) {
	segmenttest.RunStoreTests(t, func(*testing.T) segment.Store { return segmenttest.NewMemStore() })
}
