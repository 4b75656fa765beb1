package zkstore

import (
	"math/rand/v2"
	"testing"
)

// TestSequenceFromChildVersion: for every count of creates below 2^31 and
// every number of children left, the child version ZooKeeper reports
// (Java's int: 2·creates − children, wrapping) gives the count back.
func TestSequenceFromChildVersion(t *testing.T) {
	check := func(creates, children int64) {
		reported := int32(uint32(2*creates - children)) // Java's int arithmetic
		if got := createCount(reported, int32(children)); int64(got) != creates {
			t.Fatalf("creates %d, children %d (child version %d): sequence %d", creates, children, reported, got)
		}
	}
	edges := []int64{0, 1, 2, 1023, 1024, 1<<30 - 1, 1 << 30, 1<<31 - 2, 1<<31 - 1}
	for _, c := range edges {
		for _, n := range edges {
			if n <= c {
				check(c, n)
			}
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 1_000_000 {
		c := rng.Int64N(1 << 31)
		check(c, rng.Int64N(c+1))
	}
}
