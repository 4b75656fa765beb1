package config

import (
	"errors"
	"flag"
	"io"
	"regexp"
	"strings"
	"time"
)

// ParseFlags parses args with fs, flags before, between or after the
// positional arguments, and returns the positional ones ("--" ends the
// flags). here is the command line being parsed ("firn tag list"), and
// owners names the other command lines that take a flag fs does not,
// if any. A flag the flag package refuses is an *InputError that says
// so in the user's words; -h or --help is flag.ErrHelp.
func ParseFlags(fs *flag.FlagSet, args []string, here string, owners func(name, here string) []string) ([]string, error) {
	fs.SetOutput(io.Discard)
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, flag.ErrHelp
			}
			return nil, flagError(fs, args, err, here, owners)
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		if args[0] == "--" {
			return append(pos, args[1:]...), nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// flagValue matches the flag package's complaint about a value:
// `invalid value "x" for flag -n: parse error`, `invalid boolean value…`.
var flagValue = regexp.MustCompile(`^invalid (?:boolean )?value ("(?:[^"\\]|\\.)*") for (?:flag )?-([^:\s]+): `)

// flagError says what the flag package found wrong in the user's words:
// the flag as typed (one dash or two) and what its value must be. The
// flag package's errors have no type: its message is all there is.
func flagError(fs *flag.FlagSet, args []string, err error, here string, owners func(name, here string) []string) error {
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		if owners := owners(name, here); len(owners) > 0 {
			return inputf("unknown flag %s: it applies to %s, not %s; run 'firn help %s'", asTyped(args, name), strings.Join(owners, ", "), here, fs.Name())
		}
		typed := asTyped(args, name)
		var known []string
		fs.VisitAll(func(f *flag.Flag) { known = append(known, f.Name) })
		if s := Suggest(name, known); s != "" {
			dashes := typed[:len(typed)-len(strings.TrimLeft(typed, "-"))]
			return inputf("unknown flag %s (did you mean %s%s?); run 'firn help %s'", typed, dashes, s, fs.Name())
		}
		return inputf("unknown flag %s; run 'firn help %s'", typed, fs.Name())
	}
	if name, ok := strings.CutPrefix(msg, "flag needs an argument: -"); ok {
		return inputf("%s needs a value; run 'firn help %s'", asTyped(args, name), fs.Name())
	}
	m := flagValue.FindStringSubmatch(msg)
	if m == nil {
		return inputf("%s", err)
	}
	return inputf("%s %s: want %s; run 'firn help %s'", asTyped(args, m[2]), m[1], flagWants(fs.Lookup(m[2])), fs.Name())
}

// flagWants says what a value of f must be.
func flagWants(f *flag.Flag) string {
	if f == nil {
		return "a valid value"
	}
	if g, ok := f.Value.(flag.Getter); ok {
		switch g.Get().(type) {
		case int, int64, uint, uint64:
			return "a whole number"
		case float64:
			return "a number"
		case time.Duration:
			return "a duration such as 500ms, 10s or 1m"
		case bool:
			return "true or false"
		case []uint64:
			return "non-negative whole numbers, comma-separated, such as 0,1"
		}
	}
	return "a valid value"
}

// asTyped returns the flag called name as the user typed it in args:
// -name or --name.
func asTyped(args []string, name string) string {
	for _, a := range args {
		if a == "--" {
			break
		}
		flagName, _, _ := strings.Cut(a, "=")
		if strings.TrimLeft(flagName, "-") == name && strings.HasPrefix(flagName, "-") {
			return flagName
		}
	}
	return "-" + name
}
