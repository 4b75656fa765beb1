package wide_test

import (
	"fmt"

	"github.com/google/uuid"
	"github.com/oklog/ulid/v2"

	"github.com/firn-id/firn/wide"
)

func ExampleAppendLines() {
	b := wide.AppendLines(nil, []uuid.UUID{uuid.Nil, uuid.Max})
	b = wide.AppendLines(b, []ulid.ULID{{}})
	fmt.Printf("%s", b)
	// Output:
	// 00000000-0000-0000-0000-000000000000
	// ffffffff-ffff-ffff-ffff-ffffffffffff
	// 00000000000000000000000000
}
