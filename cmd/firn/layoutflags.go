package main

import (
	"flag"
	"fmt"
	"slices"
	"strings"

	"github.com/firn-id/firn/internal/config"
	"github.com/firn-id/firn/snowflake"
)

const layoutFlagsUsage = `Layout flags (start from --layout, then override any part):
  --layout NAME          preset: %s (default firn)
  --epoch MS|RFC3339     tick 0: Unix milliseconds (not seconds: 1767225600000), or a
                         time such as 2026-01-01T00:00:00Z
  --tick DURATION        tick length, a whole number of milliseconds: 1ms, 10ms, 1s
                         (of microseconds, such as 10us, only to decode)
  --time-bits N          width of the time part
  --node-bits N[,N...]   widths of the node fields, most significant first
  --node-names A[,B...]  names of the node fields (default node, or node1,node2...)
  --sequence-bits N      width of the sequence part
  --order A,B,C          parts from the top bits down (default time,node,sequence)
`

func layoutHelp() string {
	return fmt.Sprintf(layoutFlagsUsage, strings.Join(snowflake.PresetNames(), ", "))
}

// setLayoutFlags returns the names of the layout flags given on the
// command line, sorted.
func setLayoutFlags(fs *flag.FlagSet) []string {
	ours := config.Flags("layout")
	var set []string
	fs.Visit(func(fl *flag.Flag) {
		if slices.Contains(ours, fl.Name) {
			set = append(set, fl.Name)
		}
	})
	return set
}
