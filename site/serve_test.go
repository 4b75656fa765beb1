package site_test

import (
	"context"
	"fmt"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/firn-id/firn/client"
	"github.com/firn-id/firn/internal/faultproxy"
	"github.com/firn-id/firn/internal/idtest"
	"github.com/firn-id/firn/internal/testserver"
)

// TestTwoSitesServe: two sites, each with its own etcd registry and two
// firn serve, and a ledger on a third etcd that each site reaches through
// a proxy. Clients load both sites; the ledger is cut off from both sites
// during the run, and a server of each site is killed and restarted
// while it is: the sites serve on, and no ID is issued twice.
func TestTwoSitesServe(t *testing.T) {
	bin := testserver.Binary(t)
	ledger, eu, us := testserver.Etcd(t, 1), testserver.Etcd(t, 1), testserver.Etcd(t, 1)
	toLedger := map[string]*faultproxy.Proxy{
		"eu": faultproxy.New(t, strings.TrimPrefix(ledger.Endpoints()[0], "http://")),
		"us": faultproxy.New(t, strings.TrimPrefix(ledger.Endpoints()[0], "http://")),
	}
	regs := map[string]*testserver.EtcdCluster{"eu": eu, "us": us}
	args := func(name, dc string) []string {
		return []string{"--site", name, "--site-fields", "datacenter=" + dc, "--node-bits", "5,5", "--node-names", "datacenter,worker",
			"--store", "etcd", "--endpoints", strings.Join(regs[name].Endpoints(), ","), "--namespace", "/ids/",
			"--ledger-store", "etcd", "--ledger-endpoints", "http://" + toLedger[name].Addr(), "--ledger-namespace", "/ledger/"}
	}
	dcs := map[string]string{"eu": "1", "us": "2"}
	for name, dc := range dcs {
		out, err := exec.Command(bin, append([]string{"site", "claim"}, args(name, dc)...)...).CombinedOutput()
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
