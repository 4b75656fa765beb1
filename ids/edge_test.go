package ids_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	_ "github.com/firn-id/firn/etcdstore"
	"log/slog"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/firn-id/firn/ids"
	"github.com/firn-id/firn/internal/faultproxy"
	"github.com/firn-id/firn/internal/testenv"
	"github.com/firn-id/firn/nodeid"
	"github.com/firn-id/firn/snowflake"
)

// quiet is a logger that keeps what it is given, for the tests to read.
func quiet() (*slog.Logger, *bytes.Buffer) {
	var b bytes.Buffer
	return slog.New(slog.NewTextHandler(&lockedWriter{b: &b}, nil)), &b
}

type lockedWriter struct {
	b *bytes.Buffer
}

func (w *lockedWriter) Write(p []byte) (int, error) { return w.b.Write(p) } // slog's handler serializes

func localSource(t *testing.T, o ids.Options) *ids.Source {
	t.Helper()
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	if o.Log == nil {
		o.Log, _ = quiet()
	}
	src, err := ids.Open(context.Background(), "local", t.TempDir(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close(context.Background()) })
	return src
}

func epoch2026() time.Time { return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) }

// TestLongTickServes: a layout whose tick is longer than the default
// lease window (3 s) serves: the window covers the current tick's end,
// and a wait says what it waits for, not renewals that do not fail.
func TestLongTickServes(t *testing.T) {
	l := snowflake.Layout{Name: "hourly", Epoch: epoch2026(), Tick: time.Hour, TimeBits: 30,
		Node: []snowflake.Field{{Name: "node", Bits: 10}}, SequenceBits: 12}
	src := localSource(t, ids.Options{Layout: l})
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Second)
	defer cancel()
	_, err := src.Next(ctx)
	if err != nil {
		t.Errorf("Next with a 1 h tick layout: %v", err)
		if strings.Contains(err.Error(), "failing: <nil>") {
			t.Errorf("the error says renewals are failing, with no renewal error: it lies")
		}
		if r := src.Ready(); r == nil {
			t.Errorf("Ready() = nil while no call can be served")
		}
	}
}

// TestNotReadyAtHWM: while renewals fail past the window, the generator
// stands at its HWM and Ready says so, before the lease is lost.
func TestNotReadyAtHWM(t *testing.T) {
	_, dsn := freshPostgres(t)
	u, _ := url.Parse(dsn)
	p := faultproxy.New(t, u.Host)
	u.Host = p.Addr()
	log, _ := quiet()
	src, err := ids.Open(context.Background(), "postgres", u.String(), ids.Options{Namespace: "ready", Log: log})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close(context.Background())
	if _, err := src.Next(context.Background()); err != nil {
		t.Fatal(err)
	}
	p.Cut()
	time.Sleep(4500 * time.Millisecond) // past the 3 s window, within the 10 s TTL
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, nerr := src.Next(ctx)
	if nerr == nil {
		t.Fatal("Next served 4.5 s after every renewal was cut: past the 3 s window's HWM")
	}
	if r := src.Ready(); r == nil {
		t.Errorf("Ready() = nil while Next fails with %v", nerr)
	}
	p.Restore()
}

// TestPermanentErrorAfterLostLease: a lease lost and a re-acquisition
// that meets another layout recorded meanwhile fail the source with a
// *FailedError, rather than wait for ever.
func TestPermanentErrorAfterLostLease(t *testing.T) {
	_, dsn := freshPostgres(t)
	log, _ := quiet()
	src, err := ids.Open(context.Background(), "postgres", dsn, ids.Options{Namespace: "perm", Log: log, TTL: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close(context.Background())
	if _, err := src.Next(context.Background()); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// Someone re-initializes the namespace with another layout: the lease
	// is lost (its owner token is gone), and the namespace records another
	// layout.
	for _, q := range []string{
		`UPDATE firn_nodes SET owner = 'someone-else', lease_expires = now() + interval '1 hour' WHERE namespace = 'perm'`,
		`UPDATE firn_nodes_namespaces SET fingerprint = 'another-layout', layout = 'another layout' WHERE namespace = 'perm'`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(8 * time.Second)
	var r error
	for time.Now().Before(deadline) {
		if r = src.Ready(); errors.Is(r, nodeid.ErrLayoutMismatch) {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, nerr := src.Next(ctx)
	t.Errorf("8 s after the lease was lost to a namespace of another layout:\nReady() = %v\nNext = %v\nwant a *FailedError wrapping nodeid.ErrLayoutMismatch", r, nerr)
}

// TestCloseEndsTickWait: Close ends a call waiting inside the generator
// for the next tick, within Close's own deadline.
func TestCloseEndsTickWait(t *testing.T) {
	l := snowflake.Layout{Name: "slow", Epoch: epoch2026(), Tick: 2 * time.Second, TimeBits: 35,
		Node: []snowflake.Field{{Name: "node", Bits: 4}}, SequenceBits: 0}
	src := localSource(t, ids.Options{Layout: l})
	ctx := context.Background()
	if _, err := src.Next(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := src.Next(ctx); err != nil { // returns as the next tick starts
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() { _, err := src.Next(ctx); got <- err }() // waits about 2 s for the tick after
	time.Sleep(100 * time.Millisecond)
	cctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	cerr := src.Close(cctx)
	took := time.Since(start)
	err := <-got
	if took > time.Second {
		t.Errorf("Close with a 200 ms ctx took %s (err %v): it waited for a call waiting in the generator", took.Round(time.Millisecond), cerr)
	}
	if !errors.Is(err, ids.ErrClosed) {
		t.Errorf("the call waiting when Close came returned %v, want ErrClosed", err)
	}
}

// TestLocalBusyReason: a second Source on one local directory waits and
// says another process or Source holds the directory.
func TestLocalBusyReason(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	dir := t.TempDir()
	log, _ := quiet()
	a, err := ids.Open(context.Background(), "local", dir, ids.Options{Log: log})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close(context.Background())
	if _, err := a.Next(context.Background()); err != nil {
		t.Fatal(err)
	}
	b, err := ids.Open(context.Background(), "local", dir, ids.Options{Log: log})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	_, err = b.Next(ctx)
	if err == nil {
		t.Fatal("two Sources on one data directory both served")
	}
	for _, flag := range []string{"--server", "--store", "firn next"} {
		if strings.Contains(err.Error(), flag) {
			t.Errorf("a library call's error speaks of %q: %v", flag, err)
			break
		}
	}
}

// Held: a MySQL DSN with ?password= is refused at Open, the value not
// quoted; a wrong PostgreSQL password is retried in the background, and
// neither the call's error nor the log quotes it.
func TestPasswordsNeverShown(t *testing.T) {
	my := testenv.Endpoint(t, "FIRN_TEST_MYSQL")
	_, err := ids.Open(context.Background(), "mysql", my+"?password=hunter2secret", ids.Options{Namespace: "x"})
	if !errors.Is(err, ids.ErrConfig) || strings.Contains(err.Error(), "hunter2secret") {
		t.Errorf("mysql ?password=: %v", err)
	}
	_, pg := freshPostgres(t)
	u, _ := url.Parse(pg)
	u.User = url.UserPassword("nosuchuser", "hunter2secret")
	log, buf := quiet()
	src, err := ids.Open(context.Background(), "postgres", u.String(), ids.Options{Namespace: "x", Log: log})
	if err != nil {
		if strings.Contains(err.Error(), "hunter2secret") {
			t.Errorf("Open quoted the password: %v", err)
		}
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_, err = src.Next(ctx)
	src.Close(context.Background())
	if err == nil || strings.Contains(err.Error(), "hunter2secret") || strings.Contains(buf.String(), "hunter2secret") {
		t.Errorf("wrong password: err %v; log %s", err, buf.String())
	}
}

// TestPartialLayoutRefused: a custom layout with its time bits forgotten
// is refused, not taken for the default layout.
func TestPartialLayoutRefused(t *testing.T) {
	l := snowflake.Layout{Epoch: time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC), Tick: 10 * time.Millisecond,
		Node: []snowflake.Field{{Name: "worker", Bits: 16}}, SequenceBits: 8} // TimeBits forgotten
	s, err := ids.Open(t.Context(), "local", t.TempDir(), ids.Options{Layout: l})
	if err == nil {
		s.Close(t.Context())
		t.Fatalf("a layout with 16 node bits, 10 ms ticks and no time bits was taken as %s: want ErrConfig", s.Layout())
	}
	if !errors.Is(err, ids.ErrConfig) || !strings.Contains(err.Error(), "time bits") {
		t.Errorf("%v: want ErrConfig naming the time bits", err)
	}
}

// TestPostgresAsyncCommitRefused: a PostgreSQL DSN that turns
// synchronous_commit off, so that a crash could lose a confirmed HWM, is
// refused.
func TestPostgresAsyncCommitRefused(t *testing.T) {
	_, pg := freshPostgres(t)
	sep := "&"
	if !strings.Contains(pg, "?") {
		sep = "?"
	}
	src, err := ids.Open(context.Background(), "postgres", pg+sep+"synchronous_commit=off", ids.Options{Namespace: "async"})
	if err == nil {
		src.Close(context.Background())
		t.Errorf("Open accepted a DSN with synchronous_commit=off: want ErrConfig")
	}
}

// Held: bad targets are refused at once with ErrConfig.
func TestBadTargetsRefused(t *testing.T) {
	for _, tc := range []struct{ kind, target string }{
		{"local", "relative/dir"}, {"local", ""}, {"postgres", ""}, {"etcd", "nohostport"}, {"nosuchkind", "x"},
	} {
		ns := "ns"
		if tc.kind == "local" {
			ns = ""
		}
		src, err := ids.Open(context.Background(), tc.kind, tc.target, ids.Options{Namespace: ns})
		if !errors.Is(err, ids.ErrConfig) {
			t.Errorf("Open(%q, %q) = %v, want ErrConfig", tc.kind, tc.target, err)
			if src != nil {
				src.Close(context.Background())
			}
		}
	}
}
