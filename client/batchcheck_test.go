package client_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/firn-id/firn/api"
	"github.com/firn-id/firn/client"
)

// TestBatchOfRepeatedOrDisorderedIDsIsRefused: a 200 text answer whose
// IDs a server never issues as one batch — a snowflake batch not strictly
// increasing that its answer does not declare unordered (Firn-Order), any
// batch with an ID twice (a broken server, or a proxy mixing answers) —
// is a bad_answer over HTTP, through the buffer and through Fetch, and
// none of its IDs is returned. An answer that says nothing, or another
// value, is held to increasing order. A segment batch in another order
// (an opaque tag; a range after a store's failover), and a snowflake
// batch out of order declared unordered (a sequence-first layout, opaque
// mode), are served.
func TestBatchOfRepeatedOrDisorderedIDsIsRefused(t *testing.T) {
	for _, tc := range []struct {
		name  string
		tag   string
		order string // the Firn-Order header; empty: none
		body  string
		ok    bool
	}{
		{name: "snowflake increasing", body: "100\n101\n205\n", ok: true},
		{name: "snowflake repeated", body: "100\n101\n101\n"},
		{name: "snowflake decreasing", body: "100\n205\n101\n"},
		{name: "snowflake repeated apart", body: "100\n101\n100\n"},
		{name: "snowflake declared increasing, decreasing", order: "increasing", body: "100\n205\n101\n"},
		{name: "snowflake of another order value, decreasing", order: "Unordered", body: "100\n205\n101\n"},
		{name: "snowflake declared unordered", order: "unordered", body: "205\n100\n101\n", ok: true},
		{name: "snowflake declared unordered, repeated", order: "unordered", body: "205\n100\n205\n"},
		{name: "segment increasing", tag: "order", body: "7\n8\n9\n", ok: true},
		{name: "segment lower after a failover", tag: "order", body: "1008\n1009\n8\n", ok: true},
		{name: "segment permuted", tag: "order", body: "9\n7\n8\n", ok: true},
		{name: "segment declared increasing, permuted", tag: "order", order: "increasing", body: "9\n7\n8\n", ok: true},
		{name: "segment repeated", tag: "order", body: "7\n8\n7\n"},
		{name: "segment declared unordered, repeated in a row", tag: "order", order: "unordered", body: "9\n8\n8\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if tc.order != "" {
					w.Header().Set(api.Order, tc.order)
				}
				_, _ = w.Write([]byte(tc.body))
			}))
			defer hs.Close()
			c, err := client.New(client.Config{Endpoints: []string{hs.URL}, HTTP: true,
				Buffer: 3, MaxBuffer: 3, MaxBatch: 3, Attempts: 1})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close(context.Background())
			nextN, fetch := c.NextN, c.Fetch
			if tc.tag != "" {
				nextN, fetch = c.Tag(tc.tag).NextN, c.Tag(tc.tag).Fetch
			}
			for _, call := range []struct {
				name string
				f    func(context.Context, []int64) (int, error)
			}{{"NextN", nextN}, {"Fetch", fetch}} {
				ids := make([]int64, 3)
				n, err := call.f(context.Background(), ids)
				if tc.ok {
					if err != nil || n != 3 {
						t.Errorf("%s of %q: %v, %v; want the batch", call.name, tc.body, ids[:n], err)
					}
					continue
				}
				var e *client.Error
				if !errors.Is(err, client.ErrUnavailable) || !errors.As(err, &e) || e.Code != "bad_answer" || n != 0 {
					t.Errorf("%s of %q: %v, %v; want nothing and a bad_answer error", call.name, tc.body, ids[:n], err)
				} else if !strings.Contains(err.Error(), hs.URL) {
					t.Errorf("%s: %v does not name the server %s", call.name, err, hs.URL)
				}
			}
		})
	}
}
