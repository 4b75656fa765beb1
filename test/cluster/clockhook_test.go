package cluster_test

import (
	"bytes"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/firn-id/firn/snowflake"
	"github.com/firn-id/firn/test/cluster"
)

// TestClockHookOnlyInTaggedBuild shows the clock fault's hook moves the
// clock only in a binary built with the tag and only with
// FIRN_TEST_CLOCK_HOOK=1, and says so loudly; the production build
// ignores the variables.
func TestClockHookOnlyInTaggedBuild(t *testing.T) {
	dir := t.TempDir()
	plain := cluster.Build(t, dir, "firn")
	hooked := cluster.Build(t, dir, "firn-clockhook", cluster.ClockTag)
	on := []string{"FIRN_TEST_CLOCK_HOOK=1", "FIRN_TEST_CLOCK_OFFSET=1h"}
	tests := []struct {
		name  string
		bin   string
		env   []string
		ahead time.Duration // how far ahead the ID's time should be
		loud  bool
	}{
		{"production build, hook asked for", plain, on, 0, false},
		{"tagged build, hook not asked for", hooked, []string{"FIRN_TEST_CLOCK_OFFSET=1h"}, 0, false},
		{"tagged build, hook on", hooked, on, time.Hour, true},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command(tt.bin, "next", "--data-dir", t.TempDir(), "-n", "1")
			cmd.Env = append(append(cluster.Environ(), "XDG_STATE_HOME="+t.TempDir()), tt.env...)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			before := time.Now()
			if err := cmd.Run(); err != nil {
				t.Fatalf("firn next (%d): %v\n%s", i, err, stderr.String())
			}
			id, err := strconv.ParseUint(strings.TrimSpace(stdout.String()), 10, 64)
			if err != nil {
				t.Fatalf("firn next printed %q: %v", stdout.String(), err)
			}
			parts, err := snowflake.DefaultLayout().Decompose(id)
			if err != nil {
				t.Fatal(err)
			}
			if lead := parts.Time.Sub(before); lead < tt.ahead-5*time.Second || lead > tt.ahead+5*time.Second {
				t.Errorf("the ID's time is %s ahead of the clock, want %s", lead.Round(time.Millisecond), tt.ahead)
			}
			if loud := strings.Contains(stderr.String(), "CLOCK HOOK ON"); loud != tt.loud {
				t.Errorf("standard error says the hook is on: %v, want %v\n%s", loud, tt.loud, stderr.String())
			}
		})
	}
}
