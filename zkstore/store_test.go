package zkstore_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/firn-id/firn/internal/faultproxy"
	"github.com/firn-id/firn/internal/idtest"
	"github.com/firn-id/firn/internal/testserver"
	"github.com/firn-id/firn/nodeid"
	"github.com/firn-id/firn/nodeid/nodeidtest"
	"github.com/firn-id/firn/snowflake"
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
	zk := testserver.ZooKeeper(t)
	nodeidtest.RunStoreTests(t, func(t *testing.T) nodeid.Store { return newStore(t, zk.Servers(), namespace()) },
		nodeidtest.Options{TTL: time.Second, Unconfirmed: zkstore.ErrOutcomeUnknown})
}

// TestRecorderConformance: the namespace record sites and ledgers rest
// on, whose replacement ends every lease of the namespace.
func TestRecorderConformance(t *testing.T) {
	zk := testserver.ZooKeeper(t)
	nodeidtest.RunRecorderTests(t, func(t *testing.T) nodeid.Recorder { return newStore(t, zk.Servers(), namespace()) })
}

var lay = snowflake.DefaultLayout()

var layoutID = nodeid.LayoutID{Fingerprint: lay.Fingerprint(), Description: lay.String()}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestNamespaceValidation(t *testing.T) {
	for _, tt := range []struct {
		name, give, want string // want "" means refused
	}{
		{name: "absolute", give: "/firn/orders", want: "/firn/orders"},
		{name: "relative spelling", give: "firn/orders", want: "/firn/orders"},
		{name: "trailing slash", give: "/firn/orders/", want: "/firn/orders"},
		{name: "empty", give: ""},
		{name: "root", give: "/"},
		{name: "empty element", give: "/firn//orders"},
		{name: "two trailing slashes", give: "/firn/orders//"},
		{name: "dot", give: "/firn/./orders"},
		{name: "dot dot", give: "/firn/../orders"},
		{name: "ZooKeeper's own", give: "/zookeeper/quota"},
		{name: "control character", give: "/firn/ord\x00ers"},
		{name: "C1 control character", give: "/firn/ord\u0085ers"},
		{name: "last C1 control character", give: "/firn/ord\u009fers"},
		{name: "inside another's held", give: "/firn/orders/held/0"},
		{name: "inside another's hwm", give: "/firn/orders/hwm/0"},
		{name: "inside another's owner", give: "/firn/orders/owner/0"},
		{name: "inside another's layout", give: "/firn/orders/layout"},
		{name: "inside another's reserved", give: "/firn/orders/reserved"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, err := zkstore.New(zkstore.Config{Servers: []string{"127.0.0.1:2181"}, Namespace: tt.give})
			if tt.want == "" {
				if !errors.Is(err, zkstore.ErrNamespace) {
					t.Fatalf("New(%q) = %v, want ErrNamespace", tt.give, err)
				}
				return
			}
			if err != nil || s.Namespace() != tt.want {
				t.Fatalf("New(%q): namespace %q, %v; want %q", tt.give, s.Namespace(), err, tt.want)
			}
		})
	}
}

// TestTTLBelowSessionTimeout asks for a TTL below the ensemble's minimum
// session timeout (two ticks): a holder that vanished would keep its node
// for the session timeout, so the claim is refused, and holds nothing.
func TestTTLBelowSessionTimeout(t *testing.T) {
	zks := testserver.ZooKeeper(t)
	s := newStore(t, zks.Servers(), namespace())
	req := nodeid.ClaimRequest{Node: 0, Pool: 1, Layout: layoutID, TTL: testserver.ZooKeeperTick / 2}
	_, err := s.Claim(testCtx(t), req)
	if !errors.Is(err, zkstore.ErrTTLTooShort) || !strings.Contains(err.Error(), zks.Servers()[0]) {
		t.Fatalf("claim with TTL %s: %v, want ErrTTLTooShort naming the server", req.TTL, err)
	}
	req.TTL = 2 * testserver.ZooKeeperTick
	if _, err := s.Claim(testCtx(t), req); err != nil {
		t.Fatalf("claim with TTL %s, the ensemble's minimum, after the refusal: %v", req.TTL, err)
	}
}

// TestUnreachable names the servers in its error and returns by the
// caller's deadline.
func TestUnreachable(t *testing.T) {
	addr := testserver.Addr(t) // nothing listens there
	s := newStore(t, []string{addr}, namespace())
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	_, err := s.Claim(ctx, nodeid.ClaimRequest{Node: 0, Pool: 1, Layout: layoutID, TTL: time.Second})
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), addr) {
		t.Fatalf("claim on an unreachable ensemble: %v, want a deadline error naming %s", err, addr)
	}
}

// TestUnknownOutcome cuts the connection while an extension's answer is
// on its way back, so the store cannot know from the answer whether the
// write landed. It must read: a write that landed is confirmed, one the
// server refused (held/N deleted under the holder) is a lost lease, and
// neither is assumed.
func TestUnknownOutcome(t *testing.T) {
	zks := testserver.ZooKeeper(t)
	for _, tt := range []struct {
		name   string
		refuse bool
	}{{name: "the write landed"}, {name: "the server refused the write", refuse: true}} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := testCtx(t)
			ns := namespace()
			proxy := faultproxy.New(t, zks.Servers()[0])
			s := newStore(t, []string{proxy.Addr()}, ns)
			// A minute's TTL: the session gets the ensemble's longest
			// timeout (20 ticks), well past the cut.
			c, err := s.Claim(ctx, nodeid.ClaimRequest{Node: 0, Pool: 1, Layout: layoutID, TTL: time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.Renew(ctx, c, 1000); err != nil {
				t.Fatal(err)
			}
			direct := connect(t, zks.Servers())
			if tt.refuse {
				if err := direct.Delete(ns+"/held/0", -1); err != nil {
					t.Fatal(err)
				}
			}
			proxy.Delay(time.Second) // the answer waits in the proxy…
			type result struct {
				hwm int64
				err error
			}
			done := make(chan result, 1)
			go func() {
				hwm, err := s.Renew(ctx, c, 2000)
				done <- result{hwm, err}
			}()
			time.Sleep(300 * time.Millisecond)
			proxy.Cut() // …and is lost with the connection
			proxy.Delay(0)
			proxy.Restore()
			r := <-done
			stored := readHWM(t, direct, ns, 0)
			if tt.refuse {
				if !errors.Is(r.err, nodeid.ErrLeaseLost) || stored != 1000 {
					t.Fatalf("renew refused by the server, answer lost: %d, %v, stored %d; want ErrLeaseLost and 1000 stored", r.hwm, r.err, stored)
				}
				return
			}
			if r.err != nil || r.hwm != 2000 || stored != 2000 {
				t.Fatalf("renew that landed, answer lost: %d, %v, stored %d; want 2000 confirmed and stored", r.hwm, r.err, stored)
			}
		})
	}
}

func connect(t *testing.T, servers []string) *zk.Conn {
	t.Helper()
	conn, _, err := zk.Connect(servers, 4*time.Second, zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(conn.Close)
	return conn
}

func readHWM(t *testing.T, conn *zk.Conn, ns string, node int) int64 {
	t.Helper()
	if _, err := conn.Sync(ns); err != nil {
		t.Fatal(err)
	}
	data, _, err := conn.Get(fmt.Sprintf("%s/hwm/%d", ns, node))
	if err != nil {
		t.Fatal(err)
	}
	hwm, err := strconv.ParseInt(string(data), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return hwm
}

// TestSessionLostWhileIssuing cuts a process off the ensemble for longer
// than its session timeout while it issues IDs — to the ensemble, a
// process paused past it — so the session expires: its lease is lost,
// and its generator stops at the HWM the store confirmed (no ID of it ends
// past that HWM) and issues nothing more, not even once the connection is
// back and the client could reconnect, nor once another lease holds the
// node. Issuing resumes only under a new lease (a new session, a new
// token) past that HWM: every ID after the cut is above every ID before.
func TestSessionLostWhileIssuing(t *testing.T) {
	zks := testserver.ZooKeeper(t)
	rec := idtest.NewRecorder(t)
	ns := namespace()
	proxy := faultproxy.New(t, zks.Servers()[0])
	s := newStore(t, []string{proxy.Addr()}, ns)
	node := uint64(5)
	cfg := nodeid.Config{Node: &node, NodeBits: lay.NodeBits(), TTL: time.Second, Window: 500 * time.Millisecond, Layout: layoutID}
	first := acquire(t, s, cfg)
	before, err := draw(rec, "first", first.gen, 300*time.Millisecond)
	if err != nil || len(before) == 0 {
		t.Fatalf("before the cut: %d IDs, %v; want IDs", len(before), err)
	}
	proxy.Cut()
	during, err := draw(rec, "first", first.gen, 2500*time.Millisecond)
	if !errors.Is(err, snowflake.ErrNotServing) {
		t.Fatalf("cut off the ensemble: %v, want ErrNotServing", err)
	}
	<-first.lease.Done()
	if !errors.Is(first.lease.Err(), nodeid.ErrLeaseLost) {
		t.Fatalf("lease error %v, want ErrLeaseLost", first.lease.Err())
	}
	hwm := first.lease.Limit()
	checkBelow(t, append(before, during...), hwm)
	proxy.Restore()
	second := acquire(t, s, cfg)
	if second.lease.Token() == first.lease.Token() {
		t.Fatal("the new lease reuses the lost lease's token")
	}
	if second.lease.Start() < hwm {
		t.Fatalf("new lease starts at %d, below the lost lease's confirmed HWM %d", second.lease.Start(), hwm)
	}
	after, err := draw(rec, "second", second.gen, 300*time.Millisecond)
	if err != nil || len(after) == 0 {
		t.Fatalf("under the new lease: %d IDs, %v; want IDs", len(after), err)
	}
	if last := append(before, during...); after[0] <= slices.Max(last) {
		t.Fatalf("first ID under the new lease %d, not above the lost lease's last %d", after[0], slices.Max(last))
	}
	if revived, err := draw(rec, "first", first.gen, 300*time.Millisecond); len(revived) > 0 || !errors.Is(err, snowflake.ErrNotServing) {
		t.Fatalf("the lost lease's generator after the connection came back: %d IDs, %v; want none, ErrNotServing", len(revived), err)
	}
	if l := first.lease.Limit(); l != hwm {
		t.Fatalf("the lost lease's HWM moved from %d to %d after it was lost", hwm, l)
	}
}

// checkBelow fails unless every ID's tick ends at or before hwm (Unix
// ms, exclusive): a generator never issues past its confirmed HWM.
func checkBelow(t *testing.T, ids []int64, hwm int64) {
	t.Helper()
	for _, id := range ids {
		p, err := lay.Decompose(uint64(id))
		if err != nil {
			t.Fatal(err)
		}
		if end := p.Time.Add(lay.Tick).UnixMilli(); end > hwm {
			t.Fatalf("ID %d ends at %d, past the confirmed HWM %d", id, end, hwm)
		}
	}
}

// owner is one process holding a node: its lease and its generator.
type owner struct {
	lease *nodeid.Lease
	gen   *snowflake.Generator
}

// acquire takes the node of cfg, retrying while it is held (a lost
// lease's session may outlive it on the server by up to its timeout).
func acquire(t *testing.T, s nodeid.Store, cfg nodeid.Config) owner {
	t.Helper()
	ctx := testCtx(t)
	for {
		l, err := nodeid.Acquire(ctx, s, cfg)
		if err == nil {
			t.Cleanup(func() { l.Close(context.Background()) })
			g, err := snowflake.New(snowflake.Config{Layout: lay, Node: l.Node(), Reservation: l})
			if err != nil {
				t.Fatal(err)
			}
			return owner{l, g}
		}
		if !errors.Is(err, nodeid.ErrNodeHeld) || ctx.Err() != nil {
			t.Fatalf("acquire node %d: %v", *cfg.Node, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// draw takes IDs for d, recording them, and returns them and the last
// error.
func draw(rec *idtest.Recorder, src string, g *snowflake.Generator, d time.Duration) ([]int64, error) {
	var last error
	var ids []int64
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(time.Millisecond) {
		id, err := g.Next(context.Background())
		if err != nil {
			last = err
			continue
		}
		last = nil
		rec.Add(src, id)
		ids = append(ids, id)
	}
	return ids, last
}

// TestEnsemble claims through one member of three and takes over through
// another: the takeover reads, after a Sync, the HWM the first owner
// wrote through a different member.
func TestEnsemble(t *testing.T) {
	zks := testserver.ZooKeeperEnsemble(t, 3)
	ns := namespace()
	m := zks.Members()
	first := newStore(t, []string{m[0].Addr}, ns)
	last := newStore(t, []string{m[2].Addr}, ns)
	req := nodeid.ClaimRequest{Node: 7, Pool: 1024, Layout: layoutID, TTL: time.Minute}
	c, err := first.Claim(testCtx(t), req)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := first.Renew(testCtx(t), c, 4000); err != nil {
		t.Fatal(err)
	}
	if _, err := last.Claim(testCtx(t), req); !errors.Is(err, nodeid.ErrNodeHeld) {
		t.Fatalf("claim through another member of a held node: %v, want ErrNodeHeld", err)
	}
	if err := first.Release(testCtx(t), c); err != nil {
		t.Fatal(err)
	}
	next, err := last.Claim(testCtx(t), req)
	if err != nil || next.HWM != 4000 {
		t.Fatalf("takeover through another member = HWM %d, %v; want 4000", next.HWM, err)
	}
}

// TestDigestACL: with digest credentials every znode of the namespace is
// the identity's alone, so a client without them — or with a wrong
// password — cannot rewrite an HWM or free a node; without credentials
// Exposed names the HWMs anyone may rewrite.
func TestDigestACL(t *testing.T) {
	zks := testserver.ZooKeeper(t)
	ns := namespace()
	secret := zkstore.Digest{User: "firn", Password: "s3cret-pass"}
	s, err := zkstore.New(zkstore.Config{Servers: zks.Servers(), Namespace: ns, Digest: &secret})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if got := fmt.Sprintf("%v %+v %#v", secret, zkstore.Config{Digest: &secret}, secret); strings.Contains(got, secret.Password) {
		t.Fatalf("the password is printed: %s", got)
	}
	c, err := s.Claim(testCtx(t), nodeid.ClaimRequest{Node: 0, Pool: 1, Layout: layoutID, TTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Renew(testCtx(t), c, 1000); err != nil {
		t.Fatal(err)
	}
	stranger := connect(t, zks.Servers())
	wrong := connect(t, zks.Servers())
	if err := wrong.AddAuth("digest", []byte("firn:wrong")); err != nil {
		t.Fatal(err)
	}
	for name, conn := range map[string]*zk.Conn{"unauthenticated": stranger, "wrong password": wrong} {
		if _, err := conn.Set(ns+"/hwm/0", []byte("1"), -1); !errors.Is(err, zk.ErrNoAuth) {
			t.Errorf("%s client lowers the HWM: %v, want ErrNoAuth", name, err)
		}
		if err := conn.Delete(ns+"/held/0", -1); !errors.Is(err, zk.ErrNoAuth) {
			t.Errorf("%s client frees the node: %v, want ErrNoAuth", name, err)
		}
		if _, err := conn.Set(ns+"/owner/0", []byte("me"), -1); !errors.Is(err, zk.ErrNoAuth) {
			t.Errorf("%s client rewrites the owner: %v, want ErrNoAuth", name, err)
		}
	}
	if got, err := s.Renew(testCtx(t), c, 2000); err != nil || got != 2000 {
		t.Fatalf("the holder's renew = %d, %v; want 2000", got, err)
	}
	if open, err := s.Exposed(testCtx(t)); err != nil || len(open) != 0 {
		t.Fatalf("Exposed with digest ACLs = %v, %v; want none", open, err)
	}

	plainNS := namespace()
	plain := newStore(t, zks.Servers(), plainNS)
	if _, err := plain.Claim(testCtx(t), nodeid.ClaimRequest{Node: 0, Pool: 1, Layout: layoutID, TTL: time.Minute}); err != nil {
		t.Fatal(err)
	}
	open, err := plain.Exposed(testCtx(t))
	if err != nil || !slices.Contains(open, plainNS+"/hwm/0") || !slices.Contains(open, plainNS+"/owner/0") {
		t.Fatalf("Exposed without credentials = %v, %v; want the HWM and owner znodes of node 0", open, err)
	}
}

// TestTLS claims and renews over ZooKeeper's TLS client port, so digest
// credentials need not travel in clear.
func TestTLS(t *testing.T) {
	zks, tlsConfig := testserver.ZooKeeperTLS(t)
	s, err := zkstore.New(zkstore.Config{Servers: []string{zks.Members()[0].TLSAddr}, Namespace: namespace(), TLS: tlsConfig,
		Digest: &zkstore.Digest{User: "firn", Password: "s3cret-pass"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	c, err := s.Claim(testCtx(t), nodeid.ClaimRequest{Node: 2, Pool: 4, Layout: layoutID, TTL: time.Minute})
	if err != nil {
		t.Fatalf("claim over TLS: %v", err)
	}
	if got, err := s.Renew(testCtx(t), c, 1000); err != nil || got != 1000 {
		t.Fatalf("renew over TLS = %d, %v; want 1000", got, err)
	}
}

func TestReserverConformance(t *testing.T) {
	zk := testserver.ZooKeeper(t)
	nodeidtest.RunReserverTests(t, func(t *testing.T) nodeid.Reserver { return newStore(t, zk.Servers(), namespace()) })
}

// TestReservationHoldsForEveryProcess: a reservation one store value
// records refuses the node to another on the same namespace, which was
// given no reserved nodes of its own.
func TestReservationHoldsForEveryProcess(t *testing.T) {
	zk := testserver.ZooKeeper(t)
	ns := namespace()
	a, b := newStore(t, zk.Servers(), ns), newStore(t, zk.Servers(), ns)
	if _, err := a.Reserve(testCtx(t), nodeid.Reservation{Nodes: []uint64{0, 1}, Floor: 1234, Note: "test", Layout: layoutID}); err != nil {
		t.Fatal(err)
	}
	c, err := b.Claim(testCtx(t), nodeid.ClaimRequest{AnyNode: true, Pool: 4, Layout: layoutID, TTL: 2 * time.Second})
	if err != nil || c.Node != 2 || c.HWM != 1234 {
		t.Fatalf("claim through another store: %+v, %v; want node 2 at the floor 1234", c, err)
	}
	_, err = b.Claim(testCtx(t), nodeid.ClaimRequest{Node: 1, Pool: 4, Layout: layoutID, TTL: 2 * time.Second})
	if !errors.Is(err, nodeid.ErrNodeReserved) {
		t.Fatalf("claim of reserved node 1: %v, want ErrNodeReserved", err)
	}
}
