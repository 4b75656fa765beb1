package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/firn-id/firn/internal/testseam"
	"github.com/firn-id/firn/internal/testserver"
)

// TestLeafTakeoverNeverShowsTheDigest: --apply, its re-run, unreserve
// and their refusals, on a registry with digest credentials, never print
// the password.
func TestLeafTakeoverNeverShowsTheDigest(t *testing.T) {
	defer testseam.SetLeafWatch(300 * time.Millisecond)()
	zks := testserver.ZooKeeper(t)
	conn, _, err := zk.Connect(zks.Servers(), 4*time.Second, zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for conn.State() != zk.StateHasSession {
		time.Sleep(20 * time.Millisecond)
	}
	name := "leaf-" + suffix()
	for _, p := range []string{"/snowflake", "/snowflake/" + name, "/snowflake/" + name + "/forever"} {
		conn.Create(p, nil, 0, zk.WorldACL(zk.PermAll))
	}
	for range 3 {
		if _, err := conn.Create("/snowflake/"+name+"/forever/10.0.0.1:8080-", []byte(`{"ip":"10.0.0.1","port":"8080","timestamp":1}`), zk.FlagSequence, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatal(err)
		}
	}
	const secret = "s3cr3t-Pa55word"
	file := filepath.Join(t.TempDir(), "digest")
	os.WriteFile(file, []byte("firn:"+secret+"\n"), 0o600)
	servers := strings.Join(zks.Servers(), ",")
	store := []string{"--store", "zookeeper", "--endpoints", servers, "--namespace", "/firn/" + name, "--zk-digest-file", file}
	check := append([]string{"migrate", "check", "--from", "leaf-zookeeper", "--leaf-endpoints", servers, "--leaf-name", name}, store...)
	wrong := filepath.Join(t.TempDir(), "wrong")
	os.WriteFile(wrong, []byte("firn:"+secret+"X\n"), 0o600)
	for _, args := range [][]string{
		append(check, "--apply"),
		append(check, "--apply"),
		append([]string{"admin", "unreserve", "--node", "1", "--confirm-caches-deleted", "--note", "x"}, store...),
		append([]string{"admin", "unreserve", "--node", "1", "--confirm-caches-deleted", "--note", "x"}, store...),
		append([]string{"admin", "unreserve", "--node", "2", "--confirm-caches-deleted", "--note", "x"}, append(store[:len(store)-1:len(store)-1], wrong)...),
		append(append(check[:len(check)-1:len(check)-1], wrong), "--apply"),
	} {
		out, stderr, code := runCLI(args...)
		t.Logf("firn %s: exit %d\n%s%s", strings.Join(args[:3], " "), code, out, stderr)
		if strings.Contains(out+stderr, secret) {
			t.Errorf("firn %s printed the digest password", strings.Join(args, " "))
		}
	}
}
