package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	grpcstatus "google.golang.org/grpc/status"

	"github.com/firn-id/firn/cmd/firn/internal/backend"
	"github.com/firn-id/firn/firnpb"
	"github.com/firn-id/firn/internal/testenv"
	"github.com/firn-id/firn/internal/testserver"
	"github.com/firn-id/firn/nodeid"
)

// TestServeWaitsForAFreeNode fills a pool of two nodes on each real store,
// then starts firn serve on it: it waits, not ready, /readyz and the
// gRPC port saying why, rather than exit; once a node is released it
// takes that node and serves, on both ports.
func TestServeWaitsForAFreeNode(t *testing.T) {
	stores := []struct {
		name, ns string
		args     func(t *testing.T) []string
	}{
		{"etcd", `etcd namespace "/full-`, func(t *testing.T) []string {
			c := testserver.Etcd(t, 1)
			return []string{"--store", "etcd", "--endpoints", strings.Join(c.Endpoints(), ","), "--namespace", "/full-" + suffix() + "/"}
		}},
		{"postgres", `postgres namespace "default"`, func(t *testing.T) []string {
			dsn := testenv.Endpoint(t, "FIRN_TEST_POSTGRES")
			table, seg := "firn_nodes_full_"+suffix(), "leaf_alloc_full_"+suffix()
			t.Cleanup(func() { dropTables(t, "postgres", dsn, table); dropTables(t, "postgres", dsn, seg) })
			return []string{"--store", "postgres", "--dsn", dsn, "--table", table, "--segment-table", seg}
		}},
		{"mysql", `mysql namespace "default"`, func(t *testing.T) []string {
			dsn := testenv.Endpoint(t, "FIRN_TEST_MYSQL")
			table, seg := "firn_nodes_full_"+suffix(), "leaf_alloc_full_"+suffix()
			t.Cleanup(func() { dropTables(t, "mysql", dsn, table); dropTables(t, "mysql", dsn, seg) })
			return []string{"--store", "mysql", "--dsn", dsn, "--table", table, "--segment-table", seg}
		}},
		{"zookeeper", `zookeeper namespace "/full-`, func(t *testing.T) []string {
			zks := testserver.ZooKeeper(t)
			return []string{"--store", "zookeeper", "--endpoints", strings.Join(zks.Servers(), ","), "--namespace", "/full-" + suffix()}
		}},
	}
	for _, st := range stores {
		t.Run(st.name, func(t *testing.T) {
			ports := testserver.Addrs(t, 2)
			addr, gaddr := ports[0], ports[1]
			args := append(st.args(t), "--http", addr, "--grpc", gaddr, "--node-bits", "1", "--lease-ttl", "2s")
			o, stores := openServeStores(t, args)
			nodes := stores.Nodes
			var held []*nodeid.Lease
			for range 2 {
				l, err := nodeid.Acquire(context.Background(), nodes, o.Lease)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = l.Close(context.Background()) })
				held = append(held, l)
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- serve(ctx, args, io.Discard) }()
			t.Cleanup(func() {
				cancel()
				if err := <-done; err != nil {
					t.Errorf("serve returned %v", err)
				}
			})
			base := "http://" + addr
			want := "no free node in " + st.ns
			waitReadiness(t, base, done, func(code int, msg string) bool {
				return code == 503 && strings.Contains(msg, want) && strings.Contains(msg, "2 of 2 held; retrying")
			})
			conn, err := grpc.Dial(gaddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = conn.Close() })
			checkGRPCHealth(t, conn, healthpb.HealthCheckResponse_NOT_SERVING)
			ctx5, cancel5 := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel5()
			_, err = firnpb.NewFirnClient(conn).Next(ctx5, &firnpb.NextRequest{})
			if st := grpcstatus.Convert(err); st.Code() != codes.Unavailable || !strings.HasPrefix(st.Message(), "not_ready: starting: ") ||
				!strings.Contains(st.Message(), want) {
				t.Fatalf("gRPC Next while waiting: %v; want Unavailable, not_ready and why (%s)", err, want)
			}
			if err := held[1].Close(context.Background()); err != nil {
				t.Fatal(err)
			}
			freed := time.Now()
			waitReadiness(t, base, done, func(code int, _ string) bool { return code == 200 })
			checkGRPCHealth(t, conn, healthpb.HealthCheckResponse_SERVING)
			resp, err := firnpb.NewFirnClient(conn).Next(ctx5, &firnpb.NextRequest{}, grpc.WaitForReady(true))
			if err != nil {
				t.Fatalf("gRPC Next once serving: %v", err)
			}
			if p, err := o.Layout.Decompose(uint64(resp.GetId())); err != nil || p.Node != held[1].Node() {
				t.Fatalf("gRPC ID %d decodes to %+v, %v; want the freed node %d", resp.GetId(), p, err, held[1].Node())
			}
			t.Logf("ready %s after a node was freed (retries back off up to the 2 s TTL)", time.Since(freed).Round(time.Millisecond))
			id := batch(t, base+"/v1/snowflake/batch?count=1")[0]
			if p, err := o.Layout.Decompose(uint64(id)); err != nil || p.Node != held[1].Node() {
				t.Fatalf("ID %d decodes to %+v, %v; want the freed node %d", id, p, err, held[1].Node())
			}
		})
	}
}

// checkGRPCHealth asks the health service for the whole server and each
// mode's name until it answers want for the server's (the port hands
// over from the starting server to the service's), within a minute, and
// then wants the same for the snowflake mode's.
func checkGRPCHealth(t *testing.T, conn *grpc.ClientConn, want healthpb.HealthCheckResponse_ServingStatus) {
	t.Helper()
	hc := healthpb.NewHealthClient(conn)
	deadline := time.Now().Add(time.Minute)
	for _, name := range []string{"", "firn.v1.Firn", "firn.v1.Firn/snowflake"} {
		for {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			resp, err := hc.Check(ctx, &healthpb.HealthCheckRequest{Service: name}, grpc.WaitForReady(true))
			cancel()
			if err == nil && resp.Status == want {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("gRPC health %q: %v, %v; want %s", name, resp, err, want)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := hc.Check(ctx, &healthpb.HealthCheckRequest{Service: "nope"}); grpcstatus.Code(err) != codes.NotFound {
		t.Fatalf("gRPC health of an unknown name: %v, want NotFound", err)
	}
}

// waitReadiness polls /readyz until ok accepts its status and message,
// failing if serve returns first or within a minute (a bound on the
// test, not a speed claim).
func waitReadiness(t *testing.T, base string, done chan error, ok func(code int, msg string) bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	last := ""
	for {
		select {
		case err := <-done:
			done <- err
			t.Fatalf("serve returned %v while waiting for a node; last /readyz: %s", err, last)
		default:
		}
		if resp, err := http.Get(base + "/readyz"); err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			var e struct{ Error struct{ Message string } }
			_ = json.Unmarshal(body, &e)
			last = resp.Status + " " + string(body)
			if ok(resp.StatusCode, e.Error.Message) {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz never answered as wanted; last: %s", last)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestServeStoppedWhileWaitingServesNothing stops firn serve while every
// node is held: it returns without serving, and never answers as a server
// with snowflake mode off (a rolling restart once met 503 snowflake_off
// from a process stopped before it held a node).
func TestServeStoppedWhileWaitingServesNothing(t *testing.T) {
	c := testserver.Etcd(t, 1)
	ports := testserver.Addrs(t, 2)
	args := []string{"--store", "etcd", "--endpoints", strings.Join(c.Endpoints(), ","), "--namespace", "/stopped-" + suffix() + "/",
		"--http", ports[0], "--grpc", ports[1], "--node-bits", "0", "--lease-ttl", "2s"}
	o, stores := openServeStores(t, args)
	l, err := nodeid.Acquire(context.Background(), stores.Nodes, o.Lease)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close(context.Background()) })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out strings.Builder
	done := make(chan error, 1)
	go func() { done <- serve(ctx, args, &out) }()
	waitReadiness(t, "http://"+ports[0], done, func(code int, msg string) bool {
		return code == 503 && strings.Contains(msg, "1 of 1 held")
	})
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("serve stopped while waiting returned %v, want nil", err)
	}
	if out.Len() != 0 {
		t.Fatalf("serve stopped before it held a node printed %q; want nothing (it never served)", out.String())
	}
}

// openServeStores parses serve's args and opens the stores they name, as
// serve does, closed when the test ends: the test holds nodes in them
// beside the serve it starts.
func openServeStores(t *testing.T, args []string) (serveOptions, *backend.Stores) {
	t.Helper()
	o, err := parseServe(args)
	if err != nil {
		t.Fatal(err)
	}
	stores, err := o.stores.Open(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stores.Close() })
	return o, stores
}

// TestServeSaysWhyTheStoreDidNotOpen: while the store refuses the
// connection, /readyz says so, naming it and the class of failure (not
// the client's words), rather than only that the server waits for it; a
// stop then is a normal stop.
func TestServeSaysWhyTheStoreDidNotOpen(t *testing.T) {
	ports := testserver.Addrs(t, 2)
	refused := stoppedAddr(t)
	args := []string{"--store", "etcd", "--endpoints", "http://" + refused, "--dial-timeout", "300ms",
		"--http", ports[0], "--grpc", ports[1]}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- serve(ctx, args, io.Discard) }()
	waitReadiness(t, "http://"+ports[0], done, func(code int, msg string) bool {
		return code == 503 && strings.Contains(msg, "etcd http://"+refused+": refused") && !strings.Contains(msg, "connection refused")
	})
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("serve stopped while the store was down returned %v, want nil", err)
	}
}
