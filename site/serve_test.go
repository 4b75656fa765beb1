package site_test

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/firn-id/firn/client"
	"github.com/firn-id/firn/internal/faultproxy"
	"github.com/firn-id/firn/internal/idtest"
	"github.com/firn-id/firn/internal/testenv"
	"github.com/firn-id/firn/internal/testserver"
)

// TestTwoSitesServe: two sites, each with its own registry and two firn
// serve, and a ledger that each site reaches through a proxy of its own:
// three etcd clusters, then a PostgreSQL ledger and one site's registry
// on PostgreSQL. Clients load both sites; the ledger is cut off from both
// sites during the run, and a server of each site is killed and
// restarted while it is: the sites serve on, each ID carries its site's
// value, and no ID is issued twice.
func TestTwoSitesServe(t *testing.T) {
	for _, pg := range []bool{false, true} {
		name := "etcd"
		if pg {
			name = "postgres"
		}
		t.Run(name, func(t *testing.T) { twoSitesServe(t, pg) })
	}
}

func twoSitesServe(t *testing.T, pg bool) {
	bin := testserver.Binary(t)
	eu, us := testserver.Etcd(t, 1), testserver.Etcd(t, 1)
	ledgerAt := "127.0.0.1:5432"
	if !pg {
		ledgerAt = strings.TrimPrefix(testserver.Etcd(t, 1).Endpoints()[0], "http://")
	}
	toLedger := map[string]*faultproxy.Proxy{"eu": faultproxy.New(t, ledgerAt), "us": faultproxy.New(t, ledgerAt)}
	regArgs := map[string][]string{
		"eu": {"--store", "etcd", "--endpoints", strings.Join(eu.Endpoints(), ","), "--namespace", "/ids/"},
		"us": {"--store", "etcd", "--endpoints", strings.Join(us.Endpoints(), ","), "--namespace", "/ids/"},
	}
	ledgerArgs := func(site string) []string {
		return []string{"--ledger-store", "etcd", "--ledger-endpoints", "http://" + toLedger[site].Addr(), "--ledger-namespace", "/ledger/"}
	}
	if pg {
		dsn := testenv.Endpoint(t, "FIRN_TEST_POSTGRES")
		table := "firn_nodes_sites_" + strings.TrimPrefix(prefix(), "/site-test/")[:12]
		t.Cleanup(func() { dropTables(t, dsn, table) })
		regArgs["eu"] = []string{"--store", "postgres", "--dsn", dsn, "--table", table, "--namespace", "eu"}
		ledgerArgs = func(site string) []string {
			return []string{"--ledger-store", "postgres", "--ledger-dsn", "postgres://postgres@" + toLedger[site].Addr() + "/test?sslmode=disable",
				"--ledger-table", table, "--ledger-namespace", "ledger"}
		}
	}
	args := func(name, dc string) []string {
		return append(append([]string{"--site", name, "--site-fields", "datacenter=" + dc, "--node-bits", "5,5", "--node-names", "datacenter,worker"},
			regArgs[name]...), ledgerArgs(name)...)
	}
	dcs := map[string]string{"eu": "1", "us": "2"}
	for _, name := range []string{"eu", "us"} {
		claim := []string{"site", "claim"}
		if name == "eu" {
			claim = append(claim, "--create-ledger")
		}
		out, err := exec.Command(bin, append(claim, args(name, dcs[name])...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("firn site claim %s: %v: %s", name, err, out)
		}
	}
	serve := func(name string) *testserver.Process {
		return testserver.Firn(t, testserver.Addr(t), "off", append(args(name, dcs[name]), "--lease-ttl", "2s")...)
	}
	procs := map[string][]*testserver.Process{}
	for name := range dcs {
		procs[name] = []*testserver.Process{serve(name), serve(name)}
	}

	rec := idtest.NewRecorder(t)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for name, ps := range procs {
		var urls []string
		for _, p := range ps {
			urls = append(urls, "http://"+p.HTTP)
		}
		// A restarted server listens on a new port: the client fails
		// over to the other meanwhile.
		c, err := client.New(client.Config{Endpoints: urls, HTTP: true, Timeout: 2 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close(context.Background())
		want := uint64(dcs[name][0] - '0')
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]int64, 256)
			for ctx.Err() == nil {
				n, err := c.NextN(ctx, buf)
				rec.AddUnordered(buf[:n]...)
				for _, id := range buf[:n] {
					if dc := uint64(id) >> 12 & 1023 >> 5; dc != want { // firn: 41 time, 5+5 node, 12 sequence
						errs <- fmt.Errorf("site %s issued ID %d of datacenter %d", name, id, dc)
						return
					}
				}
				if err != nil && ctx.Err() == nil {
					errs <- err
					return
				}
			}
		}()
	}
	time.Sleep(time.Second)
	for _, p := range toLedger {
		p.Cut()
	}
	for name := range dcs {
		procs[name][0].Kill()
		procs[name][0] = serve(name) // ready while the ledger is cut off
	}
	time.Sleep(time.Second)
	for _, p := range toLedger {
		p.Restore()
	}
	time.Sleep(500 * time.Millisecond)
	cancel()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("a client of a site: %v", err)
	}
	for name, ps := range procs {
		for _, p := range ps {
			if resp, err := httpGet("http://" + p.HTTP + "/readyz"); err != nil || resp != 200 {
				t.Errorf("a server of %s not ready at the end: %d, %v\n%s", name, resp, err, p.Log())
			}
		}
	}
	if rec.Len() < 10000 {
		t.Fatalf("only %d IDs issued", rec.Len())
	}
	t.Logf("%d IDs from two sites, none twice", rec.Len())
}

func httpGet(url string) (int, error) {
	resp, err := http.Get(url)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

// dropTables drops a node table and its namespace table.
func dropTables(t *testing.T, dsn, table string) {
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Error(err)
		return
	}
	defer db.Close()
	for _, tb := range []string{table, table + "_namespaces"} {
		if _, err := db.Exec("DROP TABLE IF EXISTS " + tb); err != nil {
			t.Error(err)
		}
	}
}
