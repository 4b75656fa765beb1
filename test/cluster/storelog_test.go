package cluster_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/firn-id/firn/internal/storelog"
	"github.com/firn-id/firn/test/cluster"
)

// TestStoreLogOnlyInTaggedBuild shows that only a binary built with the
// tag records its node-store operations where FIRN_TEST_STORE_LOG says,
// and says so; the production build ignores the variable.
func TestStoreLogOnlyInTaggedBuild(t *testing.T) {
	dir := t.TempDir()
	bins := map[string]string{"production": cluster.Build(t, dir, "firn"), "tagged": cluster.Build(t, dir, "firn-clockhook", cluster.ClockTag)}
	for name, bin := range bins {
		t.Run(name, func(t *testing.T) {
			log := filepath.Join(t.TempDir(), "ops.jsonl")
			cmd := exec.Command(bin, "next", "--data-dir", t.TempDir(), "-n", "1")
			cmd.Env = append(cluster.Environ(), "FIRN_TEST_STORE_LOG="+log, "XDG_STATE_HOME="+t.TempDir())
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("firn next: %v\n%s", err, stderr.String())
			}
			loud := strings.Contains(stderr.String(), "node-store operation is recorded")
			f, err := os.Open(log)
			if name == "production" {
				if err == nil || loud {
					t.Errorf("the production build recorded (%v) or said so (%v)", err == nil, loud)
				}
				return
			}
			if err != nil || !loud {
				t.Fatalf("the tagged build recorded nothing (%v) or did not say so (said: %v)", err, loud)
			}
			defer f.Close()
			ops, err := storelog.Read(f, "next")
			if err != nil {
				t.Fatal(err)
			}
			if len(ops) < 2 || ops[0].Kind != storelog.KindClaim || ops[0].Ret.Outcome != storelog.OK {
				t.Errorf("recorded %+v, want a successful claim first and more after it", ops)
			}
		})
	}
}
