package bench_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/firn-id/firn/cmd/firn/internal/bench"
)

func ptr[T any](v T) *T { return &v }

// valid is a Config Run accepts, for tests to spoil one setting of.
func valid() bench.Config {
	return bench.Config{Protocol: "grpc", Batch: 1, Duration: time.Second}
}

// TestValidate: a refused Config matches ErrConfig and names the setting
// by its flag; a given 0 is refused where a setting left out is not.
func TestValidate(t *testing.T) {
	tests := []struct {
		name    string
		edit    func(c *bench.Config)
		wantErr string // "" for accepted
	}{
		{name: "valid", edit: func(*bench.Config) {}},
		{name: "workers left out", edit: func(c *bench.Config) { c.Workers = nil }},
		{name: "workers 0", edit: func(c *bench.Config) { c.Workers = ptr(0) }, wantErr: "--workers 0: want 1 to 10000"},
		{name: "rate 0", edit: func(c *bench.Config) { c.Rate = ptr(0.0) }, wantErr: "--rate 0: want 0.001"},
		{name: "count 0", edit: func(c *bench.Config) { c.Count = ptr(int64(0)) }, wantErr: "--count 0: want 1 or more"},
		{name: "mode empty", edit: func(c *bench.Config) { c.Mode = ptr("") }, wantErr: `--mode "": want snowflake or segment`},
		{name: "tag means segment", edit: func(c *bench.Config) { c.Tag = "order" }},
		{name: "tag with snowflake", edit: func(c *bench.Config) { c.Tag, c.Mode = "order", ptr("snowflake") }, wantErr: "tags are for --mode segment"},
		{name: "batch 0", edit: func(c *bench.Config) { c.Batch = 0 }, wantErr: "--batch 0: want 1 to 100000"},
		{name: "no protocol", edit: func(c *bench.Config) { c.Protocol = "" }, wantErr: `--protocol "": want grpc`},
		{name: "ca missing", edit: func(c *bench.Config) { c.CA = "/nonexistent/ca.pem" }, wantErr: "--ca: open /nonexistent/ca.pem"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := valid()
			tc.edit(&cfg)
			err := cfg.Validate()
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("Validate: %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, bench.ErrConfig) || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("Validate: %v, want ErrConfig with %q", err, tc.wantErr)
			}
		})
	}
}

// TestRunFindsDuplicates: a server that answers the same ID every time
// gives a Result counting every repeat, failing for duplicates only.
func TestRunFindsDuplicates(t *testing.T) {
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte("42"))
	}))
	t.Cleanup(hs.Close)
	r, err := bench.Run(context.Background(), bench.Config{Protocol: "leaf", Target: hs.URL, Batch: 1,
		Duration: 10 * time.Second, Count: ptr(int64(10)), Workers: ptr(2)})
	if err != nil {
		t.Fatal(err)
	}
	if r.Requests != 10 || r.IDs != 10 || r.Duplicates != 9 || r.OK || !slices.Equal(r.Failures, []string{bench.FailDuplicates}) {
		t.Fatalf("result %+v: want 10 IDs, 9 duplicates, failing for them alone", r)
	}
	if err := r.Err(); err == nil || !strings.Contains(err.Error(), "9 IDs were received more than once") {
		t.Fatalf("Err() = %v, want the 9 duplicates named", err)
	}
}
