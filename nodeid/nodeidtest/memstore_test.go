package nodeidtest_test

import (
	"testing"

	"github.com/firn-id/firn/nodeid"
	"github.com/firn-id/firn/nodeid/nodeidtest"
)

func TestMemStore(t *testing.T) {
	nodeidtest.RunStoreTests(t, func(*testing.T) nodeid.Store { return nodeidtest.NewMemStore() }, nodeidtest.Options{TTL: 300e6})
}

func TestMemStoreReserver(t *testing.T) {
	nodeidtest.RunReserverTests(t, func(*testing.T) nodeid.Reserver { return nodeidtest.NewMemStore() })
}

func TestMemStoreRecorder(t *testing.T) {
	nodeidtest.RunRecorderTests(t, func(*testing.T) nodeid.Recorder { return nodeidtest.NewMemStore() })
}
