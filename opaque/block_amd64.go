//go:build !purego

package opaque

// putBlock writes hi and lo into buf as big-endian words, in one 16-byte
// store. Two 8-byte stores read back at once by the AES block's 16-byte
// load cannot be forwarded from the store buffer: the load waits for both
// to reach the cache, about a fifth of a round's time (BenchmarkEncode63).
//
//go:noescape
func putBlock(buf *[16]byte, hi, lo uint64)
