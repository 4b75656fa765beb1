// Command firn issues, decodes and describes unique 64-bit IDs.
//
//	firn serve [--http ADDR] [flags]              serve IDs over HTTP
//	firn next [-n N] [--layout NAME] [--node N]   print new IDs
//	firn parse [layout flags] [--json] ID...      take IDs apart
//	firn layout [layout flags]                    draw a layout and its capacity
//	firn tag list|create|step|advance|next        segment mode's tags
//	firn schema --dialect postgres|mysql          print the SQL tables
//	firn admin advance --node N --to TIME         move a node's HWM forward
//	firn bench [--protocol P] [--mode M] [flags]  load a server, check the IDs
//
// Run "firn help COMMAND" for a command's flags. Bad input exits with
// status 2 and one line on standard error; nothing is printed on standard
// output.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

// command is one subcommand of the firn binary.
type command struct {
	name    string
	summary string
	usage   string
	run     func(args []string, stdout io.Writer) error
}

func commands() []command {
	return []command{
		{"serve", "serve IDs over HTTP", serveUsage, runServe},
		{"config", "check or print firn serve's configuration", configUsage, runConfig},
		{"next", "print new IDs, one per line", nextUsage, runNext},
		{"parse", "take IDs apart: time, node fields, sequence", parseUsage, runParse},
		{"layout", "draw a layout's bits and print its capacity", layoutUsage, runLayout},
		{"tag", "segment mode: create, list and draw from tags", tagUsage, runTag},
		{"schema", "print the SQL tables", schemaUsage, runSchema},
		{"bench", "load a firn (or Leaf, Tinyid) server and check what it returns", benchUsage, runBench},
		{"admin", "administer a store: advance a node's HWM after a restore", adminUsage, runAdmin},
		{"version", "print the version, commit and Go version of this binary", versionUsage, runVersion},
	}
}

// usageError is bad input: the command prints it and exits with status 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// errHelp is returned when the user asked for help that was printed.
var errHelp = errors.New("help printed")

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

// run executes the command line and returns the exit status: 0, 1 for a
// failure while working, 2 for bad input.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, mainUsage())
		return 2
	}
	name := args[0]
	switch name {
	case "--version", "-version":
		name = "version"
		args = []string{"version"}
	case "help", "-h", "-help", "--help":
		if len(args) > 1 && name == "help" {
			if c, ok := lookup(args[1]); ok {
				fmt.Fprint(stdout, c.usage)
				return 0
			}
			fmt.Fprintf(stderr, "firn: unknown command %q; run 'firn help'\n", args[1])
			return 2
		}
		fmt.Fprint(stdout, mainUsage())
		return 0
	}
	c, ok := lookup(name)
	if !ok {
		fmt.Fprintf(stderr, "firn: unknown command %q; run 'firn help'\n", name)
		return 2
	}
	err := c.run(args[1:], stdout)
	var ue *usageError
	switch {
	case err == nil:
		return 0
	case errors.Is(err, errHelp):
		fmt.Fprint(stdout, c.usage)
		return 0
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "firn %s: %s\n", c.name, oneLine(err.Error()))
		return 2
	default:
		fmt.Fprintf(stderr, "firn %s: %s\n", c.name, oneLine(err.Error()))
		return 1
	}
}

func lookup(name string) (command, bool) {
	for _, c := range commands() {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}

// oneLine makes a message one line, with every password the command has
// seen hidden.
func oneLine(s string) string { return scrub(strings.ReplaceAll(s, "\n", "; ")) }

func mainUsage() string {
	var b strings.Builder
	b.WriteString("firn issues unique, time-ordered 64-bit IDs.\n\nUsage:\n  firn COMMAND [flags] [args]\n\nCommands:\n")
	for _, c := range commands() {
		fmt.Fprintf(&b, "  %-8s %s\n", c.name, c.summary)
	}
	b.WriteString("  help     show a command's flags: firn help COMMAND\n\n")
	b.WriteString("Exit status: 0 success, 1 failure while working, 2 bad input.\n")
	return b.String()
}

// parseFlags parses flags that may come before, between or after the
// positional arguments, and returns the positional ones.
func parseFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	fs.SetOutput(io.Discard)
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, errHelp
			}
			if f, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: "); ok {
				return nil, usagef("unknown flag %s; run 'firn help %s'", f, fs.Name())
			}
			return nil, usagef("%s", err)
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
