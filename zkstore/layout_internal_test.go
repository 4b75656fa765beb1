package zkstore

import (
	"errors"
	"testing"
	"time"

	"github.com/firn-id/firn/internal/zktest"
	"github.com/firn-id/firn/nodeid"
)

// TestLayoutFingerprintNewline records a layout whose fingerprint holds a
// newline, then claims with a fingerprint that is only its first line:
// two layouts in one namespace must be refused.
func TestLayoutFingerprintNewline(t *testing.T) {
	zks := zktest.Start(t)
	ns := testNamespace()
	a, b := mustNew(t, zks.Servers(), ns), mustNew(t, zks.Servers(), ns)
	first := nodeid.LayoutID{Fingerprint: "v1:aaaa\nextra", Description: "first"}
	if _, err := a.Claim(testCtx(t), nodeid.ClaimRequest{Node: 0, Pool: 4, Layout: first, TTL: time.Minute}); err != nil {
		t.Fatal(err)
	}
	other := nodeid.LayoutID{Fingerprint: "v1:aaaa", Description: "other"}
	_, err := b.Claim(testCtx(t), nodeid.ClaimRequest{Node: 1, Pool: 4, Layout: other, TTL: time.Minute})
	if !errors.Is(err, nodeid.ErrLayoutMismatch) {
		t.Fatalf("claim with fingerprint %q in a namespace recorded with %q: %v, want ErrLayoutMismatch", other.Fingerprint, first.Fingerprint, err)
	}
}
