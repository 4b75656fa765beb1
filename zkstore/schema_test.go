package zkstore_test

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/firn-id/firn/internal/testserver"
	"github.com/firn-id/firn/nodeid"
	"github.com/firn-id/firn/zkstore"
)

// TestZnodesMatchTheNamespace claims a node with digest credentials and
// walks what the store created: every znode under the namespace's first
// element is one Znodes lists, of the kind it says (ephemeral or not), with
// the ACL's scheme it says; and every entry Znodes lists was created. So
// firn schema, which prints Znodes, cannot drift from the store's paths.
func TestZnodesMatchTheNamespace(t *testing.T) {
	zks := testserver.ZooKeeper(t)
	ns := namespace()
	d := &zkstore.Digest{User: "firn", Password: "s3cret-pass"}
	s, err := zkstore.New(zkstore.Config{Servers: zks.Servers(), Namespace: ns, Digest: d})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if _, err := s.Claim(testCtx(t), nodeid.ClaimRequest{Node: 3, Pool: 8, Layout: layoutID, TTL: time.Minute}); err != nil {
		t.Fatal(err)
	}
	listed, err := zkstore.Znodes(ns, d)
	if err != nil {
		t.Fatal(err)
	}
	conn := connect(t, zks.Servers())
	if err := conn.AddAuth("digest", []byte("firn:s3cret-pass")); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	root := "/" + strings.Split(ns, "/")[1]
	walk(t, conn, root, func(path string, st *zk.Stat, acl []zk.ACL) {
		i := znodeFor(listed, path)
		if i < 0 {
			t.Errorf("%s exists but Znodes does not list it", path)
			return
		}
		z := listed[i]
		seen[z.Path] = true
		if ephemeral := st.EphemeralOwner != 0; ephemeral != (z.Kind == "ephemeral") {
			t.Errorf("%s: ephemeral %v, Znodes says %s", path, ephemeral, z.Kind)
		}
		if want := acl[0].Scheme + ":" + strings.SplitN(acl[0].ID, ":", 2)[0]; !strings.HasPrefix(z.ACL, want) {
			t.Errorf("%s: ACL %s:%s, Znodes says %s", path, acl[0].Scheme, acl[0].ID, z.ACL)
		}
		_, hash, _ := strings.Cut(acl[0].ID, ":")
		if strings.Contains(z.ACL, d.Password) || acl[0].Scheme == "digest" && strings.Contains(z.ACL, hash) {
			t.Errorf("%s: Znodes shows the digest's password or its hash: %s", path, z.ACL)
		}
	})
	for _, z := range listed {
		if !seen[z.Path] {
			t.Errorf("Znodes lists %s, which the claim did not create", z.Path)
		}
	}
}

// znodeFor is the index of the entry of listed that path is, N standing
// for a node's number; -1 if none.
func znodeFor(listed []zkstore.Znode, path string) int {
	for i, z := range listed {
		re := "^" + strings.ReplaceAll(regexp.QuoteMeta(z.Path), "/N", "/[0-9]+") + "$"
		if regexp.MustCompile(re).MatchString(path) {
			return i
		}
	}
	return -1
}

// walk calls f for path and every znode below it.
func walk(t *testing.T, conn *zk.Conn, path string, f func(string, *zk.Stat, []zk.ACL)) {
	t.Helper()
	acl, st, err := conn.GetACL(path)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	f(path, st, acl)
	kids, _, err := conn.Children(path)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	for _, k := range kids {
		walk(t, conn, strings.TrimSuffix(path, "/")+"/"+k, f)
	}
}
