// Package segment hands out dense, increasing IDs per tag from ranges
// reserved in a store: Meituan Leaf's segment mode, Didi Tinyid, Flickr's
// ticket servers.
//
// A store holds one counter per tag (a business key such as "order") and
// reserves a range of step IDs with one atomic write. An Allocator serves
// each tag from its current range and fetches the next one in the
// background before the current one runs out, so callers do not wait on
// the store while a buffered range remains. The step adapts to demand. A
// store outage is invisible until the buffers run dry; then callers get
// ErrUnavailable, and service resumes by itself when the store answers. A
// restart never reuses a range; it skips what was buffered.
//
// IDs of one tag from one allocator strictly increase; across allocators
// (processes) they are unique, and ordered only roughly.
package segment
