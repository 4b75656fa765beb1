package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// baidu's 28 bits of seconds since 2016-05-20 ran out on 2024-11-20.
const baiduSince = "exhausted since 2024-11-20"

func TestExhaustedLayoutNeverTouchesState(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	refusals := []struct {
		name string
		args []string
	}{
		{name: "next", args: []string{"next", "--layout", "baidu", "--data-dir", dir}},
		{name: "serve", args: []string{"serve", "--layout", "baidu", "--data-dir", dir, "--http", "127.0.0.1:0", "--grpc", "off"}},
		{name: "config check", args: []string{"config", "check", "--layout", "baidu", "--data-dir", dir}},
		{name: "admin advance", args: []string{"admin", "advance", "--node", "0", "--to", "2026-01-01T00:00:00Z", "--layout", "baidu", "--data-dir", dir}},
	}
	for _, tt := range refusals {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := runCLI(tt.args...)
			if code != 2 || out != "" || !strings.Contains(errOut, "layout baidu is "+baiduSince) {
				t.Fatalf("exit %d, stdout %q, stderr %q; want exit 2 saying %q", code, out, errOut, baiduSince)
			}
			if _, err := os.Stat(dir); !os.IsNotExist(err) {
				t.Fatalf("the data directory was touched: %v", err)
			}
		})
	}
	// The directory is still free for the layout it will hold.
	if _, errOut, code := runCLI("next", "--data-dir", dir); code != 0 {
		t.Fatalf("a plain next after the refusals: exit %d: %s", code, errOut)
	}
}

func TestExhaustedLayoutIsDescribedAndDecoded(t *testing.T) {
	out, errOut, code := runCLI("layout", "--layout", "baidu")
	if code != 0 || !strings.Contains(out, baiduSince) {
		t.Fatalf("firn layout: exit %d, %q, %q; want it to say %q", code, out, errOut, baiduSince)
	}
	if out, _, _ := runCLI("layout"); strings.Contains(out, "exhausted") {
		t.Fatalf("firn layout calls the default layout exhausted:\n%s", out)
	}
	out, errOut, code = runCLI("parse", "--layout", "baidu", "--json", "1234567890123456789")
	if code != 0 || !strings.Contains(out, `"worker":`) {
		t.Fatalf("firn parse of a baidu ID: exit %d, %q, %q", code, out, errOut)
	}
}
