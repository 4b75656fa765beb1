package digits_test

import (
	"fmt"

	"github.com/firn-id/firn/internal/digits"
)

func ExampleGroup() {
	for _, n := range []uint64{0, 999, 1000, 4096000, 1<<64 - 1} {
		fmt.Println(digits.Group(n))
	}
	// Output:
	// 0
	// 999
	// 1,000
	// 4,096,000
	// 18,446,744,073,709,551,615
}
