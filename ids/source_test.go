package ids_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/firn-id/firn/ids"
	"github.com/firn-id/firn/internal/faultproxy"
	"github.com/firn-id/firn/nodeid"
	"github.com/firn-id/firn/snowflake"
)

// oneNode is a layout of one node: a second source must wait for it.
func oneNode(t *testing.T) snowflake.Layout {
	t.Helper()
	l := snowflake.DefaultLayout()
	l.Name, l.Node, l.SequenceBits = "one-node", nil, 22
	if err := l.Validate(); err != nil {
		t.Fatal(err)
	}
	return l
}

// localPair opens two sources on two data directories of one user, who
// has one node directory: they share the layout's nodes.
func localPair(t *testing.T, o ids.Options) (*ids.Source, *ids.Source) {
	t.Helper()
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	var srcs [2]*ids.Source
	for i := range srcs {
		s, err := ids.Open(t.Context(), "local", filepath.Join(t.TempDir(), "data"), o)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close(context.Background()) })
		srcs[i] = s
	}
	return srcs[0], srcs[1]
}

// holding waits until one of the sources holds a node and returns it
// first.
func holding(t *testing.T, a, b *ids.Source) (*ids.Source, *ids.Source) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	for ctx.Err() == nil {
		if a.Ready() == nil {
			return a, b
		}
		if b.Ready() == nil {
			return b, a
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("neither source took the free node: %v; %v", a.Ready(), b.Ready())
	return nil, nil
}

// TestWaitSaysWhy: with the pool held, a call waits for its context and
// says why, naming the pool; a freed node is taken and issues past every
// ID the last holder issued; Close ends a waiting call at once.
func TestWaitSaysWhy(t *testing.T) {
	a, b := localPair(t, ids.Options{Layout: oneNode(t)})
	held, waiting := holding(t, a, b)
	var last int64
	for range 1000 {
		id, err := held.Next(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		last = id
	}
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	_, err := waiting.Next(ctx)
	var nr *ids.NotReadyError
	var pf *nodeid.PoolFullError
	if !errors.As(err, &nr) || !errors.As(err, &pf) || !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, ids.ErrNotReady) {
		t.Fatalf("a call with every node held: %v, want a *NotReadyError over a *nodeid.PoolFullError and the deadline", err)
	}
	if !strings.Contains(err.Error(), "1 of 1 held") || !strings.Contains(err.Error(), "local data directory") {
		t.Errorf("the reason %q does not name the store and the pool", err)
	}
	if err := waiting.Ready(); !errors.As(err, &pf) {
		t.Errorf("Ready of the waiting source: %v, want the full pool", err)
	}

	if err := held.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := held.Next(t.Context()); !errors.Is(err, ids.ErrClosed) {
		t.Errorf("Next after Close: %v, want ErrClosed", err)
	}
	ctx, cancel = context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	id, err := waiting.Next(ctx)
	if err != nil {
		t.Fatalf("the freed node was not taken: %v", err)
	}
	if id <= last {
		t.Errorf("the next holder of the node issued %d, not past the last holder's %d", id, last)
	}

	// A call waiting on a source whose node is taken returns at Close.
	c, d := localPair(t, ids.Options{Layout: oneNode(t), Wait: time.Minute})
	_, waiting = holding(t, c, d)
	done := make(chan error, 1)
	go func() { _, err := waiting.Next(context.Background()); done <- err }()
	time.Sleep(100 * time.Millisecond)
	closed := time.Now()
	if err := waiting.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if !errors.Is(err, ids.ErrClosed) {
			t.Errorf("a waiting call at Close: %v, want ErrClosed", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a waiting call did not return at Close")
	}
	if time.Since(closed) > 5*time.Second {
		t.Errorf("Close of a waiting source took %s", time.Since(closed))
	}
}

// TestUniqueAcrossCallers: IDs drawn at once by many goroutines through
// every method are unique.
func TestUniqueAcrossCallers(t *testing.T) {
	a, b := localPair(t, ids.Options{})
	seen := sync.Map{}
	var wg sync.WaitGroup
	for _, s := range []*ids.Source{a, b} {
		for g := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				buf := make([]int64, 7)
				for range 2000 {
					var got []int64
					if g%2 == 0 {
						id, err := s.Next(t.Context())
						if err != nil {
							t.Error(err)
							return
						}
						got = []int64{id}
					} else {
						n, err := s.NextN(t.Context(), buf)
						if err != nil {
							t.Error(err)
							return
						}
						got = buf[:n]
					}
					for _, id := range got {
						if _, dup := seen.LoadOrStore(id, true); dup {
							t.Errorf("ID %d issued twice", id)
						}
					}
				}
			}()
		}
	}
	wg.Wait()
}

// TestLayoutOfAnotherProcess: a namespace records its layout at first
// use; a source of another layout fails at once and says why.
func TestLayoutOfAnotherProcess(t *testing.T) {
	_, dsn := freshPostgres(t)
	ns := "ns-" + randomName()
	a, err := ids.Open(t.Context(), "postgres", dsn, ids.Options{Namespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close(context.Background())
	if _, err := a.Next(t.Context()); err != nil {
		t.Fatal(err)
	}
	other, _ := snowflake.Preset("twitter")
	b, err := ids.Open(t.Context(), "postgres", dsn, ids.Options{Namespace: ns, Layout: other})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close(context.Background())
	start := time.Now()
	_, err = b.Next(t.Context())
	var fe *ids.FailedError
	if !errors.As(err, &fe) || !errors.Is(err, nodeid.ErrLayoutMismatch) {
		t.Fatalf("a source of another layout: %v, want a *FailedError over ErrLayoutMismatch", err)
	}
	if time.Since(start) > ids.DefaultWait/2 {
		t.Errorf("the refusal took %s: it can never pass, so it should come at once", time.Since(start))
	}
}

// TestLostLeaseResumes: PostgreSQL cut off past the TTL loses the lease;
// calls wait and say why; once it is back the source takes a new lease
// and issues again, past every ID it issued before.
func TestLostLeaseResumes(t *testing.T) {
	_, dsn := freshPostgres(t)
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	proxy := faultproxy.New(t, u.Host)
	q := u.Query()
	q.Set("connect_timeout", "1")
	u.Host, u.RawQuery = proxy.Addr(), q.Encode()
	s, err := ids.Open(t.Context(), "postgres", u.String(), ids.Options{Namespace: "lost", TTL: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	seen := map[int64]bool{}
	var last int64
	draw := func(ctx context.Context) error {
		id, err := s.Next(ctx)
		if err == nil {
			if seen[id] {
				t.Fatalf("ID %d issued twice", id)
			}
			seen[id], last = true, max(last, id)
		}
		return err
	}
	for range 100 {
		if err := draw(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	before := last
	proxy.Cut()
	deadline := time.Now().Add(20 * time.Second)
	var waitErr error
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
		waitErr = draw(ctx)
		cancel()
		if errors.Is(waitErr, ids.ErrNotReady) {
			break
		}
	}
	if !errors.Is(waitErr, ids.ErrNotReady) {
		t.Fatalf("with the store cut off for 20 s the source still issues (last error %v)", waitErr)
	}
	proxy.Restore()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if err := draw(ctx); err != nil {
		t.Fatalf("the source did not serve again once the store was back: %v", err)
	}
	for range 100 {
		if err := draw(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	if last <= before {
		t.Errorf("no ID past %d after the new lease", before)
	}
}

// TestOptionsRefused: bad options are refused at once, naming the
// cause, never a password.
func TestOptionsRefused(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, kind, target string
		o                  ids.Options
		want               string
	}{
		{"unregistered kind", "redis", "127.0.0.1:6379", ids.Options{Namespace: "x"}, `"redis" is not registered`},
		{"no namespace", "postgres", "postgres://u@127.0.0.1/db", ids.Options{}, "no namespace"},
		{"no target", "etcd", "", ids.Options{Namespace: "/x/"}, "no target"},
		{"relative directory", "local", "data", ids.Options{}, "relative"},
		{"namespace on local", "local", dir, ids.Options{Namespace: "x"}, "data directory"},
		{"mysql session variable", "mysql", "u:pw@tcp(127.0.0.1:3306)/db?password=hunter2", ids.Options{Namespace: "x"}, "password"},
		{"etcd prefix", "etcd", "127.0.0.1:2379", ids.Options{Namespace: "orders"}, "key prefix"},
		{"TTL", "local", dir, ids.Options{TTL: time.Millisecond}, "TTL"},
		{"window", "local", dir, ids.Options{Window: time.Millisecond}, "window 1ms under 10ms"},
		{"decode-only layout", "local", dir, ids.Options{Layout: decodeOnly()}, "layout"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := ids.Open(t.Context(), tc.kind, tc.target, tc.o)
			if err == nil {
				s.Close(t.Context())
				t.Fatal("accepted")
			}
			if !errors.Is(err, ids.ErrConfig) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%v: want ErrConfig saying %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "hunter2") {
				t.Errorf("%v: prints the password", err)
			}
		})
	}
}

// decodeOnly is a layout of 64 bits, which only decodes.
func decodeOnly() snowflake.Layout {
	l := snowflake.DefaultLayout()
	l.Name, l.TimeBits = "wide", l.TimeBits+1
	return l
}

func randomName() string {
	b := make([]byte, 4)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// TestReservedNodesNeverTaken: a source never takes a reserved node, and
// a reserved node outside the layout is refused.
func TestReservedNodesNeverTaken(t *testing.T) {
	l := snowflake.DefaultLayout()
	l.Name, l.Node = "two-nodes", []snowflake.Field{{Name: "node", Bits: 1}}
	a, b := localPair(t, ids.Options{Layout: l, Reserved: []uint64{0}})
	held, waiting := holding(t, a, b)
	if n, ok := held.Node(); !ok || n != 1 {
		t.Errorf("the source holds node %d (%v), want 1: node 0 is reserved", n, ok)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	if _, err := waiting.Next(ctx); !errors.Is(err, ids.ErrNotReady) {
		t.Errorf("with node 1 held and node 0 reserved: %v, want ErrNotReady", err)
	}
	_, err := ids.Open(t.Context(), "local", t.TempDir(), ids.Options{Layout: l, Reserved: []uint64{2}})
	if !errors.Is(err, ids.ErrConfig) {
		t.Errorf("a reserved node outside the layout: %v, want ErrConfig", err)
	}
}
