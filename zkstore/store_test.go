package zkstore_test

import (
	"crypto/rand"
	"encoding/hex"
	"testing"
	"time"

	"github.com/firn-id/firn/internal/zktest"
	"github.com/firn-id/firn/nodeid"
	"github.com/firn-id/firn/nodeid/nodeidtest"
	"github.com/firn-id/firn/zkstore"
)

func namespace() string {
	b := make([]byte, 6)
	rand.Read(b)
	return "/firn-test/" + hex.EncodeToString(b)
}

func newStore(t testing.TB, servers []string, ns string) *zkstore.Store {
	t.Helper()
	s, err := zkstore.New(zkstore.Config{Servers: servers, Namespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestConformance(t *testing.T) {
	zk := zktest.Start(t)
	nodeidtest.RunStoreTests(t, func(t *testing.T) nodeid.Store { return newStore(t, zk.Servers(), namespace()) },
		nodeidtest.Options{TTL: time.Second})
}
