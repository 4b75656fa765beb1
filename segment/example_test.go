package segment_test

import (
	"fmt"

	"github.com/firn-id/firn/segment"
)

func ExampleTagInfo_Class() {
	for _, t := range []segment.TagInfo{
		{Tag: "order", Delta: 1, Remainder: 0},  // one store
		{Tag: "order", Delta: 3, Remainder: 2},  // the third of three stores
		{Tag: "legacy", Delta: 0, Remainder: 0}, // a row written by hand
	} {
		fmt.Println(t.Class())
	}
	// Output:
	// -
	// 2 mod 3
	// INVALID: 0 mod 0, issues nothing
}
