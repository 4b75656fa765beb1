package segment

// Position returns the position of the handle's current range: the next
// ID it would hand out, or where a used-up range stopped.
func Position(h *Handle) int64 { return h.cur.Load().pos.Load() }

// UnknownTags is how many tags the allocator remembers the store did not
// have.
func UnknownTags(a *Allocator) int {
	a.unknownMu.Lock()
	defer a.unknownMu.Unlock()
	return len(a.unknown)
}
