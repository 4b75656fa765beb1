package clientprom_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/firn-id/firn/client"
	"github.com/firn-id/firn/client/clientprom"
)

// server answers batches of IDs from one counter, over the HTTP API.
func server(t *testing.T) string {
	t.Helper()
	var counter atomic.Int64
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, err := strconv.Atoi(r.URL.Query().Get("count"))
		if err != nil {
			http.Error(w, "count", http.StatusBadRequest)
			return
		}
		end := counter.Add(int64(n))
		var b strings.Builder
		for id := end - int64(n) + 1; id <= end; id++ {
			fmt.Fprintf(&b, "%d\n", id)
		}
		_, _ = w.Write([]byte(b.String()))
	}))
	t.Cleanup(hs.Close)
	return hs.URL
}

// TestCollector: the registry gathers the client's Stats, named and
// labelled, and a tag handle whose name is not UTF-8 costs its series,
// never the scrape.
func TestCollector(t *testing.T) {
	c, err := client.New(client.Config{Endpoints: []string{server(t)}, HTTP: true, Buffer: 10, MaxBuffer: 10, MaxBatch: 10})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close(context.Background()) })
	ctx := context.Background()
	for range 25 {
		if _, err := c.Next(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Tag("order").Next(ctx); err != nil {
			t.Fatal(err)
		}
	}
	_, _ = c.Tag("bad\xff").Next(ctx)
	reg := prometheus.NewRegistry()
	reg.MustRegister(clientprom.New(c))
	// Refills may land while the registry gathers: the figures gathered
	// lie between Stats before and after.
	before := c.Stats()
	families, err := reg.Gather()
	if err != nil {
		t.Fatalf("Gather: %v", err)
	}
	after := c.Stats()
	got := map[string]float64{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, l.GetName()+"="+l.GetValue())
			}
			v := m.GetGauge().GetValue() + m.GetCounter().GetValue()
			got[f.GetName()+"{"+strings.Join(labels, ",")+"}"] = v
		}
	}
	within := func(series string, lo, hi uint64) {
		t.Helper()
		g, ok := got[series]
		switch {
		case !ok:
			t.Errorf("no series %s in %v", series, got)
		case g < float64(lo) || g > float64(hi):
			t.Errorf("%s = %v, want %d to %d", series, g, lo, hi)
		}
	}
	within("firn_client_endpoint_up{endpoint="+before.Endpoints[0].Endpoint+"}", 1, 1)
	within("firn_client_failovers_total{}", 0, 0)
	within("firn_client_fetched_ids_total{mode=snowflake,tag=}", max(25, before.Buffers[0].Fetched), after.Buffers[0].Fetched)
	var order uint64
	for _, b := range after.Buffers {
		if b.Tag == "order" {
			order = b.Fetched
		}
	}
	within("firn_client_fetched_ids_total{mode=segment,tag=order}", 25, order)
	within("firn_client_refills_total{mode=segment,tag=order}", 1, 1<<20)
	for k := range got {
		if strings.Contains(k, "bad") {
			t.Errorf("series %s of a tag that is not UTF-8", k)
		}
	}
}
