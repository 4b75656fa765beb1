package cluster_test

import (
	"slices"
	"testing"

	"github.com/firn-id/firn/test/cluster"
)

// StoreKinds reads firn serve --help under the harness's own settings
// (make chaos and make evidence set FIRN_CHAOS, which firn refuses), and
// every store it lists is run or pending.
func TestStoreKindsUnderTheHarnessSettings(t *testing.T) {
	t.Setenv("FIRN_CHAOS", "long")
	kinds, err := cluster.StoreKinds(cluster.Build(t, t.TempDir(), "firn"))
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range kinds {
		if _, pending := cluster.Pending[k]; k != "local" && !pending && !slices.Contains(cluster.Stores, k) {
			t.Errorf("firn serve offers --store %s, which the fault run neither covers nor lists as pending", k)
		}
	}
	if !slices.Contains(kinds, cluster.StoreZooKeeper) {
		t.Errorf("firn serve --help lists %v, without zookeeper", kinds)
	}
}
