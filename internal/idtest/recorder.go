// Package idtest holds test helpers shared by firn's packages: a recorder
// that checks every ID handed out is unique and increasing per source.
package idtest

import (
	"slices"
	"sync"
	"testing"
)

// Recorder collects IDs by source (a node, a goroutine, an allocator) and,
// in t.Cleanup, fails the test if any ID was handed out twice or if a
// source's IDs did not strictly increase. It is safe for concurrent use.
type Recorder struct {
	mu        sync.Mutex
	sources   map[string][]int64
	unordered []int64
}

// NewRecorder returns a recorder whose checks run when t ends.
func NewRecorder(t testing.TB) *Recorder {
	t.Helper()
	r := &Recorder{sources: map[string][]int64{}}
	t.Cleanup(func() { r.check(t) })
	return r
}

// Add records ids, in the order the source received them.
func (r *Recorder) Add(source string, ids ...int64) {
	r.mu.Lock()
	r.sources[source] = append(r.sources[source], ids...)
	r.mu.Unlock()
}

// AddUnordered records ids that must be unique but need not increase (a
// set of stores failing over between residue classes).
func (r *Recorder) AddUnordered(ids ...int64) {
	r.mu.Lock()
	r.unordered = append(r.unordered, ids...)
	r.mu.Unlock()
}

// Len returns the number of IDs recorded.
func (r *Recorder) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := len(r.unordered)
	for _, ids := range r.sources {
		n += len(ids)
	}
	return n
}

func (r *Recorder) check(t testing.TB) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	all := slices.Clone(r.unordered)
	for src, ids := range r.sources {
		for i := 1; i < len(ids); i++ {
			if ids[i] <= ids[i-1] {
				t.Errorf("source %s: ID %d at index %d does not exceed the previous ID %d", src, ids[i], i, ids[i-1])
				break
			}
		}
		all = append(all, ids...)
	}
	slices.Sort(all)
	for i := 1; i < len(all); i++ {
		if all[i] == all[i-1] {
			t.Errorf("ID %d handed out twice (of %d IDs)", all[i], len(all))
			return
		}
	}
}
