//go:build !amd64 || purego

package opaque

// putBlock writes hi and lo into buf as big-endian words.
func putBlock(buf *[16]byte, hi, lo uint64) { storeWords(buf, hi, lo) }
