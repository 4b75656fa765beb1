// Package testenv reads the endpoints of the real servers integration
// tests run against (FIRN_TEST_ETCD, FIRN_TEST_POSTGRES, FIRN_TEST_MYSQL,
// and FIRN_TEST_ZOOKEEPER, the ZooKeeper jar that internal/testserver starts)
// and finds the programs other tests need (spin, gcc).
//
// Under -short every test that needs one of them, or a firn process, is
// skipped: -short runs the in-process tests alone, which is what `make
// old-go` needs to prove the oldest Go the module supports. The full suite
// (`make test`, without -short) runs everything, CI included.
package testenv

import (
	"os"
	"os/exec"
	"testing"
)

// Endpoint returns the value of the environment variable name. When it is
// empty the test is skipped with a message, except under CI=true, where a
// missing endpoint fails the test: CI must run every integration test.
func Endpoint(t testing.TB, name string) string {
	t.Helper()
	NotShort(t, "a real server ("+name+")")
	v := os.Getenv(name)
	if v != "" {
		return v
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s is not set and CI=true: integration tests must run in CI", name)
	}
	t.Skipf("%s is not set: skipping the integration test (make test sets it)", name)
	return ""
}

// Tool returns the path of the program name. When it is not installed the
// test is skipped with a message, except under CI=true, where it fails:
// `make test` installs what the tests need.
func Tool(t testing.TB, name string) string {
	t.Helper()
	NotShort(t, name)
	path, err := exec.LookPath(name)
	if err == nil {
		return path
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s is not installed and CI=true: %v", name, err)
	}
	t.Skipf("%s is not installed: skipping (make test installs it)", name)
	return ""
}

// NotShort skips the test under -short, naming what it would start: a real
// server, an outside program or a firn process.
func NotShort(t testing.TB, what string) {
	t.Helper()
	if testing.Short() {
		t.Skipf("-short: a test that starts %s runs in the full suite only", what)
	}
}
