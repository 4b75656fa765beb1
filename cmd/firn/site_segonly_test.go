package main

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/firn-id/firn/internal/testenv"
	"github.com/firn-id/firn/internal/testserver"
	"github.com/firn-id/firn/site"
)

// TestReleasedSegmentsOnlySiteServeStops: a site's firn serve with
// snowflake mode off (segments only) holds no node, so no renewal stops
// it; it re-reads its site record in the registry (and its claim in the
// ledger), and stops issuing segment IDs soon after firn site release,
// as docs/segments.md says.
func TestReleasedSegmentsOnlySiteServeStops(t *testing.T) {
	dsn := testenv.Endpoint(t, "FIRN_TEST_POSTGRES")
	table, segs := "firn_nodes_segonly_"+suffix(), "firn_segs_segonly_"+suffix()
	t.Cleanup(func() {
		dropTables(t, "postgres", dsn, table)
		dropTables(t, "postgres", dsn, segs)
	})
	own := []string{"--site", "eu", "--site-fields", "datacenter=1", "--node-bits", "5,5", "--node-names", "datacenter,worker",
		"--store", "postgres", "--dsn", dsn, "--table", table, "--namespace", "eu", "--segments", "set", "--segment-table", segs}
	args := append(own, "--ledger-store", "postgres", "--ledger-dsn", dsn, "--ledger-table", table, "--ledger-namespace", "ledger-"+suffix())
	if out, errOut, code := runCLI(append([]string{"site", "claim", "--create-ledger"}, args...)...); code != 0 {
		t.Fatalf("site claim: exit %d, %q, %q", code, out, errOut)
	}
	if out, errOut, code := runCLI(append([]string{"tag", "create", "orders", "--step", "64"}, own...)...); code != 0 {
		t.Fatalf("tag create: exit %d, %q, %q", code, out, errOut)
	}
	addr := testserver.Addr(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- serve(ctx, append([]string{"--http", addr, "--grpc", "off", "--snowflake=false"}, args...), io.Discard)
	}()
	base := "http://" + addr
	waitReady(t, base, done)
	fetch(t, base+"/v1/segments/orders/next")
	if out, errOut, code := runCLI(append([]string{"site", "release"}, args...)...); code != 0 {
		t.Fatalf("site release: exit %d, %q, %q", code, out, errOut)
	}
	// Past the ledger's re-read (site.DefaultWatchEvery) and any renewal.
	for deadline := time.Now().Add(site.DefaultWatchEvery + 5*time.Second); ; time.Sleep(250 * time.Millisecond) {
		resp, err := http.Get(base + "/v1/segments/orders/next")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), "not_serving") || !strings.Contains(string(body), "released its value") {
				t.Fatalf("a released site's segments-only serve answers %d %s; want 503 not_serving naming the release", resp.StatusCode, body)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a released site's segments-only serve still issues %s %v after the release", strings.TrimSpace(string(body)), site.DefaultWatchEvery+5*time.Second)
		}
	}
	cancel()
	<-done
}
