//go:build !purego

#include "textflag.h"

// func putBlock(buf *[16]byte, hi, lo uint64)
//
// One 16-byte store of hi and lo, each big-endian, so that the AES load of
// buf that follows is forwarded from the store buffer.
TEXT ·putBlock(SB), NOSPLIT, $0-24
	MOVQ buf+0(FP), DI
	MOVQ hi+8(FP), AX
	MOVQ lo+16(FP), BX
	BSWAPQ AX
	BSWAPQ BX
	MOVQ AX, X0
	MOVQ BX, X1
	PUNPCKLQDQ X1, X0
	MOVUPS X0, (DI)
	RET
