package server

import (
	"testing"

	"github.com/firn-id/firn/segment"
)

// TestSegmentForTinyidIsTinyids: nextSegmentId answers Tinyid's numbers
// (DbSegmentIdServiceImpl.convert) for any delta, and never lets a client
// start below a range a store reserved short.
func TestSegmentForTinyidIsTinyids(t *testing.T) {
	tests := []struct {
		name string
		rg   segment.Range
		step int64
		want tinyidSegment
	}{
		// max_id 10, step 10: Tinyid answers currentId 10, loadingId 12, maxId 20.
		{"delta 1", segment.Range{Start: 11, End: 21, Delta: 1}, 10, tinyidSegment{CurrentID: 10, LoadingID: 12, MaxID: 20, Delta: 1, Remainder: 0}},
		{"delta 2, remainder 1", segment.Range{Start: 11, End: 21, Delta: 2}, 10, tinyidSegment{CurrentID: 10, LoadingID: 12, MaxID: 20, Delta: 2, Remainder: 1}},
		{"delta 3, remainder 2", segment.Range{Start: 101, End: 131, Delta: 3}, 30, tinyidSegment{CurrentID: 100, LoadingID: 106, MaxID: 130, Delta: 3, Remainder: 2}},
		// Leaf's [max, max+step): the client's first ID is max itself.
		{"a Leaf range", segment.Range{Start: 1000, End: 2000, Delta: 1}, 1000, tinyidSegment{CurrentID: 999, LoadingID: 1199, MaxID: 1999, Delta: 1}},
		{"a range shorter than the step", segment.Range{Start: 50, End: 60, Delta: 1}, 100, tinyidSegment{CurrentID: 49, LoadingID: 59, MaxID: 59, Delta: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := segmentForTinyid(tt.rg, tt.step); got != tt.want {
				t.Fatalf("segmentForTinyid(%+v, %d) = %+v, want %+v", tt.rg, tt.step, got, tt.want)
			}
		})
	}
}

// TestTinyidClientStaysInItsRange: whatever the range and the step, the
// IDs a Tinyid client issues from the segment — those of its class in
// (currentId, maxId] — are the range's own.
func TestTinyidClientStaysInItsRange(t *testing.T) {
	for delta := int64(1); delta <= 5; delta++ {
		for rem := range delta {
			for start := int64(100) + rem; start < 100+rem+3*delta; start += delta {
				for size := int64(1); size <= 40; size++ {
					rg := segment.Range{Start: start, End: start + size, Delta: delta}
					for step := int64(1); step <= 50; step += 7 {
						seg := segmentForTinyid(rg, step)
						for id := seg.CurrentID + 1; id <= seg.MaxID; id++ {
							if id%delta == seg.Remainder && (id < rg.Start || id >= rg.End || (id-rg.Start)%delta != 0) {
								t.Fatalf("range %+v, step %d: segment %+v lets the client issue %d", rg, step, seg, id)
							}
						}
					}
				}
			}
		}
	}
}
