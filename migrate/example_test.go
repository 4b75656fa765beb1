package migrate_test

import (
	"fmt"

	"github.com/firn-id/firn/migrate"
)

func ExampleSystem() {
	for _, s := range migrate.Systems {
		fmt.Printf("%s: table %s, layout %q, segments %q\n", s, s.Table(), s.Layout(), s.Format())
	}
	// Output:
	// leaf: table leaf_alloc, layout "twitter", segments "leaf"
	// tinyid: table tiny_id_info, layout "", segments "tinyid"
	// uid-generator: table WORKER_NODE, layout "baidu", segments ""
}

func ExampleNodeRanges() {
	fmt.Println(migrate.NodeRanges([]uint64{0, 1, 2, 5, 7, 8, 9}))
	fmt.Println(migrate.NodeRanges(nil))
	// Output:
	// 0–2, 5, 7–9
	// none
}
