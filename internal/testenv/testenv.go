// Package testenv reads the endpoints of the real servers integration
// tests run against (FIRN_TEST_ETCD, FIRN_TEST_POSTGRES, FIRN_TEST_MYSQL,
// and FIRN_TEST_ZOOKEEPER, the ZooKeeper jar that internal/zktest starts)
// and finds the programs other tests need (spin, gcc).
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
