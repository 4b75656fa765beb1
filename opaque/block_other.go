//go:build !amd64 || purego

package opaque

import "encoding/binary"

// putBlock writes hi and lo into buf as big-endian words.
func putBlock(buf *[16]byte, hi, lo uint64) {
	binary.BigEndian.PutUint64(buf[:8], hi)
	binary.BigEndian.PutUint64(buf[8:], lo)
}
