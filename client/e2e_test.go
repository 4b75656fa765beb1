package client_test

import (
	"context"
	"errors"
	"github.com/google/uuid"
	"github.com/oklog/ulid/v2"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/firn-id/firn/client"
	"github.com/firn-id/firn/internal/idtest"
	"github.com/firn-id/firn/internal/testserver"
)

// cluster is three `firn serve` processes sharing one etcd namespace, as a
// deployment behind several addresses.
type cluster struct {
	args  []string
	http  []string
	grpc  []string
	procs []*testserver.Process
}

func startCluster(t testing.TB) *cluster {
	t.Helper()
	e := testserver.Etcd(t, 1)
	c := &cluster{args: []string{"--store", "etcd", "--endpoints", strings.Join(e.Endpoints(), ","),
		"--namespace", "/client-e2e/", "--lease-ttl", "2s"}}
	addrs := testserver.Addrs(t, 6)
	c.http, c.grpc = addrs[:3], addrs[3:]
	for i := range 3 {
		c.start(t, i)
	}
	resp, err := http.Post("http://"+c.http[0]+"/v1/segments", "application/json", strings.NewReader(`{"tag":"order","step":1000}`))
	if err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("create tag: %v %v", resp, err)
	}
	resp.Body.Close()
	return c
}

func (c *cluster) start(t testing.TB, i int) {
	t.Helper()
	p := testserver.Firn(t, c.http[i], c.grpc[i], c.args...)
	if i < len(c.procs) {
		c.procs[i] = p
	} else {
		c.procs = append(c.procs, p)
	}
}

// load runs callers of snowflake and segment IDs until stop is closed,
// recording every ID, and returns the first error each saw.
func load(cl *client.Client, snow, seg *idtest.Recorder, stop <-chan struct{}) func() []error {
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	for g := range 4 {
		wg.Go(func() {
			ctx := context.Background()
			tag := cl.Tag("order")
			dst := make([]int64, 50)
			var ids []int64
			var err error
			for err == nil {
				select {
				case <-stop:
					err = errStopped
					continue
				default:
				}
				var n int
				if g%2 == 0 {
					n, err = cl.NextN(ctx, dst)
				} else {
					n, err = tag.NextN(ctx, dst)
				}
				ids = append(ids, dst[:n]...)
			}
			mu.Lock()
			defer mu.Unlock()
			if g%2 == 0 {
				snow.AddUnordered(ids...)
			} else {
				seg.AddUnordered(ids...)
			}
			if err != errStopped {
				errs = append(errs, err)
			}
		})
	}
	return func() []error { wg.Wait(); return errs }
}

var errStopped = errors.New("stopped")

// loadWhile runs load's callers while during runs, then stops them and
// returns their errors.
func loadWhile(cl *client.Client, snow, seg *idtest.Recorder, during func()) []error {
	stop := make(chan struct{})
	wait := load(cl, snow, seg, stop)
	during()
	close(stop)
	return wait()
}

// TestAgainstServeProcesses: three servers; one is killed mid-run and the
// callers see no error; then all are killed and the callers get the
// buffered IDs, then ErrUnavailable; then the servers return and the same
// client serves again. No ID is ever handed out twice.
func TestAgainstServeProcesses(t *testing.T) {
	c := startCluster(t)
	// The timeout leaves room for a machine busy with -race and the other
	// packages' tests: the test is about errors and duplicates, not speed.
	cl, err := client.New(client.Config{Endpoints: c.grpc, Buffer: 2000, HealthInterval: 100 * time.Millisecond,
		Timeout: 4 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cl.Close(context.Background()) })
	snow, seg := idtest.NewRecorder(t), idtest.NewRecorder(t)

	if errs := loadWhile(cl, snow, seg, func() {
		time.Sleep(500 * time.Millisecond)
		c.procs[1].Kill()
		time.Sleep(time.Second)
	}); len(errs) > 0 {
		t.Fatalf("with one of three servers killed, callers saw %v", errs)
	}
	s := cl.Stats()
	if s.Endpoints[1].Healthy {
		t.Errorf("stats %+v: the killed server is still healthy", s.Endpoints)
	}
	t.Logf("one server killed: %d snowflake, %d segment IDs; stats %+v", snow.Len(), seg.Len(), s)

	c.procs[0].Kill()
	c.procs[2].Kill()
	stop := make(chan struct{})
	before := snow.Len() + seg.Len()
	errs := load(cl, snow, seg, stop)()
	close(stop)
	if len(errs) != 4 {
		t.Fatalf("with every server down, %d of 4 callers stopped with an error: %v", len(errs), errs)
	}
	for _, err := range errs {
		var e *client.Error
		if !errors.Is(err, client.ErrUnavailable) || !errors.As(err, &e) {
			t.Fatalf("with every server down: %v, want a *client.Error of ErrUnavailable", err)
		}
	}
	if served := snow.Len() + seg.Len() - before; served == 0 {
		t.Error("with every server down, no buffered ID was served before the error")
	}

	for i := range 3 {
		c.start(t, i)
	}
	// Each buffer serves again once a refill of its own succeeds: until
	// then it answers with its last refill's failure, made while the
	// servers were still down or starting.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for _, b := range []struct {
		next func(context.Context) (int64, error)
		rec  *idtest.Recorder
	}{{cl.Tag("order").Next, seg}, {cl.Next, snow}} {
		for {
			id, err := b.next(ctx)
			if err == nil {
				b.rec.AddUnordered(id)
				break
			}
			if ctx.Err() != nil {
				t.Fatalf("no recovery after the servers came back: %v", err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	if errs := loadWhile(cl, snow, seg, func() { time.Sleep(500 * time.Millisecond) }); len(errs) > 0 {
		t.Fatalf("after recovery, callers saw %v", errs)
	}

	// The same servers over HTTP, one of them down: the IDs join the
	// others, unique.
	var urls []string
	for _, h := range c.http {
		urls = append(urls, "http://"+h)
	}
	c.procs[2].Kill()
	hc, err := client.New(client.Config{Endpoints: urls, HTTP: true, Buffer: 500, HealthInterval: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = hc.Close(context.Background()) })
	if errs := loadWhile(hc, snow, seg, func() { time.Sleep(500 * time.Millisecond) }); len(errs) > 0 {
		t.Fatalf("over HTTP with one server down, callers saw %v", errs)
	}

	// 128-bit IDs over both protocols, one server down: unique, and each
	// client's increasing (one server's answer at a time).
	seen := map[string]bool{}
	for _, x := range []*client.Client{cl, hc} {
		u := make([]uuid.UUID, 300)
		if n, err := x.NextUUIDs(context.Background(), u); err != nil || n != len(u) {
			t.Fatalf("NextUUIDs: %d, %v", n, err)
		}
		l := make([]ulid.ULID, 300)
		if n, err := x.NextULIDs(context.Background(), l); err != nil || n != len(l) {
			t.Fatalf("NextULIDs: %d, %v", n, err)
		}
		for _, id := range u {
			if seen[id.String()] || id.Version() != 7 {
				t.Fatalf("UUID %s: a duplicate, or not version 7", id)
			}
			seen[id.String()] = true
		}
		for _, id := range l {
			if seen[id.String()] {
				t.Fatalf("ULID %s twice", id)
			}
			seen[id.String()] = true
		}
	}
}
