// Command firn issues, decodes and describes unique 64-bit IDs.
//
//	firn serve [--http ADDR] [flags]              serve IDs over HTTP and gRPC
//	firn next [-n N] [--layout NAME] [--node N]   print new IDs
//	firn parse [layout flags] [--json] [ID...]    take IDs apart (or from stdin)
//	firn parse --guess [--json] [ID...]           which presets an ID may belong to
//	firn layout [layout flags]                    draw a layout and its capacity
//	firn tag list|create|step|advance|next        segment mode's tags
//	firn schema --dialect postgres|mysql          print the SQL tables and GRANTs
//	firn admin advance --node N --to TIME         move a node's HWM forward
//	firn migrate check --from SYSTEM --dsn DSN    the plan to switch from Leaf, Tinyid, uid-generator
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

	"github.com/firn-id/firn/cmd/firn/internal/backend"
	"github.com/firn-id/firn/cmd/firn/internal/config"
	"github.com/firn-id/firn/internal/secret"
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
		{"serve", "serve IDs over HTTP and gRPC", serveUsage, runServe},
		{"config", "check or print firn serve's configuration", configUsage, runConfig},
		{"next", "print new IDs, one per line", nextUsage, runNext},
		{"parse", "take IDs apart: time, node fields, sequence (--guess: by every preset)", parseUsage, runParse},
		{"layout", "draw a layout's bits and print its capacity", layoutUsage, runLayout},
		{"tag", "segment mode: create, list and draw from tags", tagUsage, runTag},
		{"schema", "print the SQL tables and the GRANTs each mode needs", schemaUsage, runSchema},
		{"bench", "load a firn (or Leaf, Tinyid) server and check what it returns", benchUsage, runBench},
		{"site", "provision a site: claim or release a value of the leading node fields", siteUsage, runSite},
		{"admin", "administer a store: advance a node's HWM after a restore, let a reserved node out", adminUsage, runAdmin},
		{"migrate", "check a Leaf, Tinyid or uid-generator database and print the plan to switch", migrateUsage, runMigrate},
		{"version", "print the version, commit and Go version of this binary", versionUsage, runVersion},
	}
}

// usageError is bad input: the command prints it and exits with status 2,
// as it does for the stores' bad settings (backend.ErrConfig).
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// extraArg refuses a positional argument command does not take, pointing
// at its help rather than repeating a usage line that could drift from it.
func extraArg(command, arg string) error {
	return usagef("unexpected argument %q; run 'firn help %s'", arg, command)
}

// badInput reports whether err is bad input, exit status 2: a usage
// error, a store's bad setting (backend.ErrConfig), or a setting config
// refuses as it reads it.
func badInput(err error) bool {
	var ue *usageError
	var fe *config.FieldError
	var ie *config.InputError
	return errors.As(err, &ue) || errors.Is(err, backend.ErrConfig) || errors.As(err, &fe) || errors.As(err, &ie)
}

// errHelp is returned when the user asked for help that was printed.
var errHelp = errors.New("help printed")

// isHelp reports whether arg, where a subcommand is expected, asks for
// the command's help.
func isHelp(arg string) bool { return arg == "-h" || arg == "-help" || arg == "--help" }

func main() {
	clockHook(os.Stderr)
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// stdin is what firn parse reads IDs from when given none; tests replace it.
var stdin io.Reader = os.Stdin

// isTerminal reports whether r is a terminal, which a command does not
// wait on for input.
func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

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
		if len(args) > 1 && name == "help" && args[1] != "help" {
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
	switch {
	case err == nil:
		return 0
	case errors.Is(err, errHelp):
		fmt.Fprint(stdout, c.usage)
		return 0
	case badInput(err):
		fmt.Fprintln(stderr, message(c.name, err))
		return 2
	default:
		fmt.Fprintln(stderr, message(c.name, err))
		return 1
	}
}

// message is the one line a command's error prints: "firn NAME: …", where
// an error from the package of the same name ("config: …" from firn
// config) does not say the name twice.
func message(name string, err error) string {
	return "firn " + name + ": " + strings.TrimPrefix(oneLine(err.Error()), name+": ")
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
func oneLine(s string) string { return secret.Scrub(strings.ReplaceAll(s, "\n", "; ")) }

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
	return parseSubFlags(fs, args, "firn "+fs.Name())
}

// parseSubFlags is parseFlags for the command or subcommand called here
// ("firn tag list"): a flag it does not take is refused, naming the
// commands that take it, if any.
func parseSubFlags(fs *flag.FlagSet, args []string, here string) ([]string, error) {
	pos, err := config.ParseFlags(fs, args, here, flagOwners)
	if errors.Is(err, flag.ErrHelp) {
		return nil, errHelp
	}
	return pos, err
}

// flagSets are the flag sets of the commands and subcommands that take
// settings, each built by the function the command parses with, over the
// defaults: what a flag given to the wrong one is looked up in.
func flagSets() []namedFlagSet {
	d := func() *config.Config { c := config.Default(); return &c }
	next := &nextLine{cfg: d()}
	sets := []namedFlagSet{{"firn serve", serveFlagSet(d())}, {"firn next", next.flagSet()}}
	parse, _ := parseFlagSet(d())
	sets = append(sets, namedFlagSet{"firn parse", parse}, namedFlagSet{"firn layout", layoutFlagSet(d())})
	for _, sub := range tagSubs {
		fs, _ := tagFlagSet(sub, d())
		sets = append(sets, namedFlagSet{"firn tag " + sub, fs})
	}
	schema, _ := schemaFlagSet(d())
	admin, _ := adminFlagSet(d())
	return append(sets, namedFlagSet{"firn schema", schema}, namedFlagSet{"firn admin advance", admin})
}

// namedFlagSet is a flag set with the command line that parses it.
type namedFlagSet struct {
	name string
	fs   *flag.FlagSet
}

// flagOwners names the commands other than here that take the flag
// called name.
func flagOwners(name, here string) []string {
	var owners []string
	for _, s := range flagSets() {
		if s.name != here && s.fs.Lookup(name) != nil {
			owners = append(owners, s.name)
		}
	}
	return owners
}

// plural gives a count with its noun: "1 argument", "2 arguments".
func plural[N ~int | ~int64](n N, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
