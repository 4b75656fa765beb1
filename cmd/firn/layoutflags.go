package main

import (
	"flag"
	"slices"

	"github.com/firn-id/firn/cmd/firn/internal/config"
)

// layoutHelp is the help of the layout flags.
func layoutHelp() string {
	return "Layout flags (start from --layout, then override any part):\n" + config.Usage("layout")
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
