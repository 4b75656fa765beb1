package segment

// Position returns the position of the handle's current range: the next
// ID it would hand out, or where a used-up range stopped.
func Position(h *Handle) int64 { return h.cur.Load().pos.Load() }
