package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/firn-id/firn/internal/faultproxy"
	"github.com/firn-id/firn/internal/testenv"
	"github.com/firn-id/firn/internal/testserver"
	"github.com/firn-id/firn/node"
)

// process is a running `firn serve`, HTTP only.
type process struct {
	*testserver.Process
	base string
}

func startServe(t *testing.T, args ...string) *process {
	t.Helper()
	p := testserver.Firn(t, freePort(t), "off", args...)
	return &process{Process: p, base: "http://" + p.HTTP}
}

// stop sends SIGTERM and expects a clean exit, whose last log line says
// the process stopped.
func (p *process) stop(t *testing.T) {
	t.Helper()
	if err := p.Stop(); err != nil {
		t.Fatalf("firn serve after SIGTERM: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(p.Log()), "\n")
	if last := lines[len(lines)-1]; !strings.Contains(last, `"msg":"stopped"`) {
		t.Fatalf("firn serve's last log line after SIGTERM: %s; want \"stopped\"", last)
	}
}

// TestServeProcessOnEveryStore runs `firn serve` as a subprocess on each
// store, twice: the second life's snowflake and segment IDs follow the
// first's. In the first life a load runs through SIGTERM: every request
// answered gets a whole 200, none a 5xx.
func TestServeProcessOnEveryStore(t *testing.T) {
	stores := []struct {
		name string
		args func(t *testing.T) []string
	}{
		{"local", func(t *testing.T) []string { return []string{"--store", "local", "--data-dir", t.TempDir()} }},
		{"etcd", func(t *testing.T) []string {
			c := testserver.Etcd(t, 1)
			return []string{"--store", "etcd", "--endpoints", strings.Join(c.Endpoints(), ","), "--namespace", "/e2e-" + suffix() + "/"}
		}},
		{"postgres", func(t *testing.T) []string {
			dsn := testenv.Endpoint(t, "FIRN_TEST_POSTGRES")
			table := "firn_nodes_e2e_" + suffix()
			seg := "leaf_alloc_e2e_" + suffix()
			t.Cleanup(func() { dropTables(t, "postgres", dsn, table); dropTables(t, "postgres", dsn, seg) })
			return []string{"--store", "postgres", "--dsn", dsn, "--table", table, "--segment-table", seg}
		}},
		{"mysql", func(t *testing.T) []string {
			dsn := testenv.Endpoint(t, "FIRN_TEST_MYSQL")
			table := "firn_nodes_e2e_" + suffix()
			seg := "leaf_alloc_e2e_" + suffix()
			t.Cleanup(func() { dropTables(t, "mysql", dsn, table); dropTables(t, "mysql", dsn, seg) })
			return []string{"--store", "mysql", "--dsn", dsn, "--table", table, "--segment-table", seg}
		}},
		// ZooKeeper holds no segments: they live in a database of their
		// own beside it.
		{"zookeeper", func(t *testing.T) []string {
			zks := testserver.ZooKeeper(t)
			dsn := testenv.Endpoint(t, "FIRN_TEST_POSTGRES")
			seg := "leaf_alloc_e2e_" + suffix()
			t.Cleanup(func() { dropTables(t, "postgres", dsn, seg) })
			return []string{"--store", "zookeeper", "--endpoints", strings.Join(zks.Servers(), ","), "--namespace", "/e2e-" + suffix(),
				"--segment-store", "postgres", "--segment-dsn", dsn, "--segment-table", seg}
		}},
	}
	for _, st := range stores {
		t.Run(st.name, func(t *testing.T) {
			args := st.args(t)
			var lastSnow, lastSeg int64
			for life := range 2 {
				p := startServe(t, args...)
				if life == 0 {
					resp, err := http.Post(p.base+"/v1/segments", "application/json", strings.NewReader(`{"tag":"order","step":50}`))
					if err != nil || resp.StatusCode != 201 {
						t.Fatalf("create tag: %v %v", resp, err)
					}
					resp.Body.Close()
				}
				snow := batch(t, p.base+"/v1/snowflake/batch?count=100")
				seg := batch(t, p.base+"/v1/segments/order/batch?count=100")
				if snow[0] <= lastSnow || seg[0] <= lastSeg {
					t.Fatalf("life %d starts at snowflake %d (last %d), segment %d (last %d)", life, snow[0], lastSnow, seg[0], lastSeg)
				}
				lastSnow, lastSeg = snow[99], seg[99]
				if life == 0 {
					loadThroughShutdown(t, p)
					continue
				}
				p.stop(t)
			}
		})
	}
}

func batch(t *testing.T, url string) []int64 {
	t.Helper()
	var body struct{ IDs []string }
	if err := json.Unmarshal([]byte(fetch(t, url)), &body); err != nil || len(body.IDs) == 0 {
		t.Fatalf("%s: %v", url, err)
	}
	ids := make([]int64, len(body.IDs))
	for i, s := range body.IDs {
		ids[i], _ = strconv.ParseInt(s, 10, 64)
		if i > 0 && ids[i] <= ids[i-1] {
			t.Fatalf("%s: not increasing at %d", url, i)
		}
	}
	return ids
}

// loadThroughShutdown keeps 8 clients busy, sends SIGTERM, and checks
// that every answer was a whole 200 and the process exited cleanly.
func loadThroughShutdown(t *testing.T, p *process) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var mu sync.Mutex
	ok, bad := 0, []string{}
	for range 8 {
		wg.Go(func() {
			client := &http.Client{Timeout: 5 * time.Second}
			for ctx.Err() == nil {
				resp, err := client.Get(p.base + "/v1/snowflake/next")
				if err != nil {
					return // the listener is closed: not an accepted request
				}
				var v struct{ ID string }
				derr := json.NewDecoder(resp.Body).Decode(&v)
				resp.Body.Close()
				mu.Lock()
				if resp.StatusCode == 200 && derr == nil && v.ID != "" {
					ok++
				} else {
					bad = append(bad, strconv.Itoa(resp.StatusCode)+" "+errString(derr))
				}
				mu.Unlock()
			}
		})
	}
	time.Sleep(300 * time.Millisecond)
	p.stop(t)
	cancel()
	wg.Wait()
	if len(bad) > 0 || ok == 0 {
		t.Fatalf("%d whole answers, %d broken: %v", ok, len(bad), bad[:min(len(bad), 5)])
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestReadinessFollowsTheEtcdLease stops the etcd cluster for longer than
// the lease's TTL: /readyz turns 503, and once etcd is back the process
// takes a node again and turns ready, its IDs never repeating earlier ones.
func TestReadinessFollowsTheEtcdLease(t *testing.T) {
	c := testserver.Etcd(t, 1)
	p := startServe(t, "--store", "etcd", "--endpoints", strings.Join(c.Endpoints(), ","),
		"--namespace", "/ready-"+suffix()+"/", "--lease-ttl", "2s")
	before := batch(t, p.base+"/v1/snowflake/batch?count=100")
	waitStatus := func(want int, within time.Duration) {
		t.Helper()
		deadline := time.Now().Add(within)
		for {
			resp, err := http.Get(p.base + "/readyz")
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode == want {
					return
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("/readyz never answered %d within %s", want, within)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	c.Members()[0].Kill()
	waitStatus(503, 10*time.Second)
	if err := c.Members()[0].Restart(); err != nil {
		t.Fatal(err)
	}
	waitStatus(200, 30*time.Second)
	after := batch(t, p.base+"/v1/snowflake/batch?count=100")
	seen := map[int64]bool{}
	for _, id := range append(before, after...) {
		if seen[id] {
			t.Fatalf("ID %d issued before and after the re-acquisition", id)
		}
		seen[id] = true
	}
	p.stop(t)
}

// TestServeASetOfSegmentStores configures two databases, PostgreSQL and
// MariaDB, to serve every tag together (segments.stores): the tag is
// created on both, each in its class, and IDs flow. A second process that
// lists the stores in the other order refuses to serve the tag rather than
// serve a class the other store owns.
func TestServeASetOfSegmentStores(t *testing.T) {
	pg := testenv.Endpoint(t, "FIRN_TEST_POSTGRES")
	my := testenv.Endpoint(t, "FIRN_TEST_MYSQL")
	table := "firn_segments_e2e_" + suffix()
	t.Cleanup(func() { dropTables(t, "postgres", pg, table); dropTables(t, "mysql", my, table) })
	write := func(first, second [2]string) string {
		path := filepath.Join(t.TempDir(), "firn.yaml")
		doc := "segments:\n  format: set\n  set: pair\n  table: " + table + "\n  stores:\n" +
			"    - {store: " + first[0] + ", dsn: \"" + first[1] + "\"}\n" +
			"    - {store: " + second[0] + ", dsn: \"" + second[1] + "\"}\n"
		if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	pgStore, myStore := [2]string{"postgres", pg}, [2]string{"mysql", my}
	p := startServe(t, "--config", write(pgStore, myStore))
	resp, err := http.Post(p.base+"/v1/segments", "application/json", strings.NewReader(`{"tag":"order","step":100}`))
	if err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("create tag: %v %v", resp, err)
	}
	resp.Body.Close()
	ids := batch(t, p.base+"/v1/segments/order/batch?count=300")
	for _, id := range ids {
		if id%2 != 0 {
			t.Fatalf("ID %d from the primary, PostgreSQL, store 0 of 2: want even", id)
		}
	}
	p.stop(t)

	q := startServe(t, "--config", write(myStore, pgStore))
	resp, err = http.Get(q.base + "/v1/segments/order/next")
	if err != nil {
		t.Fatal(err)
	}
	var body struct {
		Error struct{ Code, Message string }
	}
	_ = json.NewDecoder(resp.Body).Decode(&body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(body.Error.Message, "its position in the set gives it") {
		t.Fatalf("stores listed in the other order: %d %+v, want 503 naming the position", resp.StatusCode, body)
	}
}

// TestServeLogsFailingRenewals: a registry that stops answering ends no
// lease at once, and serve says so in its log when renewals start failing
// and again when they are confirmed.
func TestServeLogsFailingRenewals(t *testing.T) {
	dsn := testenv.Endpoint(t, "FIRN_TEST_POSTGRES")
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	proxy := faultproxy.New(t, u.Host)
	u.Host = proxy.Addr()
	table, seg := "firn_nodes_renew_"+suffix(), "leaf_alloc_renew_"+suffix()
	t.Cleanup(func() { dropTables(t, "postgres", dsn, table); dropTables(t, "postgres", dsn, seg) })
	p := startServe(t, "--store", "postgres", "--dsn", u.String(), "--table", table, "--segment-table", seg, "--dial-timeout", "1s")
	waitLog := func(want string) {
		t.Helper()
		for deadline := time.Now().Add(8 * time.Second); !strings.Contains(p.Log(), want); {
			if time.Now().After(deadline) {
				t.Fatalf("no %q in the log:\n%s", want, p.Log())
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	proxy.Cut()
	waitLog("lease renewals failing")
	proxy.Restore()
	waitLog("lease renewals confirmed again")
	if strings.Contains(p.Log(), "lease lost") {
		t.Fatalf("the lease was lost in an outage shorter than its TTL:\n%s", p.Log())
	}
	p.stop(t)
}

// TestServeWithoutSnowflakeOutlivesTheRenewalWatch: a server of segments
// only holds no lease; its loop, which looks at the lease's renewals
// every node.WatchEvery when it holds one, keeps serving past several.
func TestServeWithoutSnowflakeOutlivesTheRenewalWatch(t *testing.T) {
	p := startServe(t, "--snowflake=false", "--data-dir", t.TempDir())
	time.Sleep(3 * node.WatchEvery)
	resp, err := http.Get(p.base + "/healthz")
	if err != nil {
		t.Fatalf("after %s: %v; log:\n%s", 3*node.WatchEvery, err, p.Log())
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || strings.Contains(p.Log(), "panic") {
		t.Fatalf("after %s: /healthz %d; log:\n%s", 3*node.WatchEvery, resp.StatusCode, p.Log())
	}
	// Decoding needs the layout, not a node.
	resp, err = http.Get(p.base + "/decodeSnowflakeId?snowflakeId=117986093458018304")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"sequenceId"`) {
		t.Fatalf("/decodeSnowflakeId with snowflake off: %d %s", resp.StatusCode, body)
	}
	p.stop(t)
}
