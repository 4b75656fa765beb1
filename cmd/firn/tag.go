package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"github.com/firn-id/firn/idtext"
	"io"
	"net/url"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/firn-id/firn/segment"
)

var tagUsage = `Usage: firn tag COMMAND [args] [store flags]

Segment mode: dense IDs per tag (business key), from ranges reserved in a
store. Nothing here ever lowers a counter.

  firn tag list                                   tags with their next ID and step
  firn tag create TAG [--first N] [--step N] [--description TEXT]
                                                  a new tag (default: first 1, step 1000)
  firn tag step TAG N                             change a tag's step
  firn tag advance TAG --to N                     move the stored counter's next ID to at least N
                                                  (after a restore: past the largest ID issued);
                                                  a running server first serves the ranges it
                                                  already reserved: stop them first
  firn tag next TAG [-n N] [--encoding E]         draw N IDs, one per line (E: decimal,
                                                  base62 or base32)

` + configFlagUsage + storeFlagsUsage + "\n" + remoteFlagsUsage

func runTag(args []string, stdout io.Writer) (err error) {
	if len(args) == 0 {
		return usagef("want a subcommand: list, create, step, advance or next; run 'firn help tag'")
	}
	sub := args[0]
	if sub == "-h" || sub == "--help" || sub == "-help" {
		return errHelp
	}
	fs := flag.NewFlagSet("tag", flag.ContinueOnError)
	var sf storeFlags
	sf.register(fs)
	var rf remoteFlags
	rf.register(fs)
	first := fs.Int64("first", 1, "")
	step := fs.Int64("step", 1000, "")
	desc := fs.String("description", "", "")
	to := fs.Int64("to", 0, "")
	n := fs.Int("n", 1, "")
	encoding := encodingFlag(fs)
	var jsSafe tagList
	fs.Var(&jsSafe, "javascript-safe-tags", "")
	rest, err := withConfig(fs, args[1:])
	if err != nil {
		return err
	}
	pos, err := parseFlags(fs, rest)
	if err != nil {
		return err
	}
	want := map[string]int{"list": 0, "create": 1, "step": 2, "advance": 1, "next": 1}
	count, ok := want[sub]
	if !ok {
		return usagef("unknown subcommand %q: want list, create, step, advance or next", sub)
	}
	if len(pos) != count {
		return usagef("%s takes %s, got %d; run 'firn help tag'", sub, plural(count, "argument"), len(pos))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var store tagAdmin
	r, err := rf.explicit(&sf)
	if r == nil && err == nil {
		var local segment.Store
		var closeStore func() error
		local, closeStore, err = sf.openSegments()
		if err == nil {
			defer func() { err = errors.Join(err, closeStore()) }()
			store = local
		} else if r, err = rf.beside(&sf, err); r == nil {
			return err
		}
	}
	if err != nil {
		return err
	}
	if r != nil {
		store = r
	}
	switch sub {
	case "list":
		return listTags(ctx, store, stdout)
	case "create":
		if *step < 1 {
			return usagef("--step %d: want at least 1", *step)
		}
		if *first < 0 || *first > segment.MaxEnd {
			return usagef("--first %d: want 0 to %d", *first, int64(segment.MaxEnd))
		}
		if err := store.CreateTag(ctx, pos[0], *first, *step, *desc); err != nil {
			return tagErr(pos[0], err)
		}
		_, err = fmt.Fprintf(stdout, "tag %s: first ID %d, step %d\n", pos[0], *first, *step)
		return err
	case "step":
		v, err := strconv.ParseInt(pos[1], 10, 64)
		if err != nil || v < 1 {
			return usagef("step %q: want a whole number of at least 1", pos[1])
		}
		if err := store.SetStep(ctx, pos[0], v); err != nil {
			return tagErr(pos[0], err)
		}
		_, err = fmt.Fprintf(stdout, "tag %s: step %d\n", pos[0], v)
		return err
	case "advance":
		if *to < 1 {
			return usagef("--to is required: the next ID must be at least this")
		}
		if *to > segment.MaxEnd {
			return usagef("--to %d: want at most %d (a counter past it could wrap)", *to, int64(segment.MaxEnd))
		}
		after, err := store.Advance(ctx, pos[0], *to)
		if err != nil {
			return tagErr(pos[0], err)
		}
		_, err = fmt.Fprintf(stdout, "tag %s: next ID %d (the next range a server reserves starts here; ranges already reserved are served first)\n", pos[0], after)
		return err
	}
	enc, err := encoding()
	if err != nil {
		return err
	}
	if r != nil {
		if *n < 1 || *n > maxNext {
			return usagef("-n %d: want 1 to %d", *n, maxNext)
		}
		w := bufio.NewWriter(stdout)
		err := r.draw(ctx, "/v1/segments/"+url.PathEscape(pos[0])+"/batch", *n, r.maxBatch(ctx), enc, w)
		return errors.Join(tagErr(pos[0], err), w.Flush())
	}
	return drawTag(ctx, store.(segment.Store), pos[0], *n, maxIDOf(jsSafe), enc, stdout)
}

// tagAdmin is what firn tag asks of a segment store, or of a running
// firn serve through its admin API.
type tagAdmin interface {
	Tags(ctx context.Context) ([]segment.TagInfo, error)
	CreateTag(ctx context.Context, tag string, first, step int64, description string) error
	SetStep(ctx context.Context, tag string, step int64) error
	Advance(ctx context.Context, tag string, to int64) (int64, error)
}

// tagErr turns the errors of bad input into usage errors.
func tagErr(tag string, err error) error {
	switch {
	case errors.Is(err, segment.ErrUnknownTag):
		return usagef("unknown tag %q", tag)
	case errors.Is(err, segment.ErrTagExists):
		return usagef("tag %q exists", tag)
	case errors.Is(err, segment.ErrInvalid):
		return usagef("%s", err)
	}
	return err
}

func listTags(ctx context.Context, store tagAdmin, stdout io.Writer) error {
	tags, err := store.Tags(ctx)
	if err != nil {
		return err
	}
	w := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "TAG\tNEXT\tSTEP\tCLASS\tDESCRIPTION")
	for _, t := range tags {
		class := "-"
		if t.Delta > 1 {
			class = fmt.Sprintf("%d mod %d", t.Remainder, t.Delta)
		}
		fmt.Fprintf(w, "%s\t%d\t%d\t%s\t%s\n", t.Tag, t.Next, t.Step, class, strings.ReplaceAll(t.Description, "\t", " "))
	}
	return w.Flush()
}

func drawTag(ctx context.Context, store segment.Store, tag string, n int, maxID func(string) int64, enc idtext.Encoding, stdout io.Writer) (err error) {
	if n < 1 || n > maxNext {
		return usagef("-n %d: want 1 to %d", n, maxNext)
	}
	a, err := segment.NewAllocator(store, segment.Config{MaxWait: 5 * time.Second, MaxID: maxID})
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, a.Close(context.Background())) }()
	h, err := a.Tag(ctx, tag)
	if err != nil {
		return tagErr(tag, err)
	}
	dst := make([]int64, min(n, 4096))
	var out []byte
	for n > 0 {
		k, err := h.NextN(ctx, dst[:min(n, len(dst))])
		out = out[:0]
		for _, id := range dst[:k] {
			out = enc.Append(out, uint64(id))
			out = append(out, '\n')
		}
		if _, werr := stdout.Write(out); werr != nil {
			return werr
		}
		if err != nil {
			return err
		}
		n -= k
	}
	return nil
}

// tagList is a comma-separated list of tags as a flag, as serve's
// segments.javascript_safe reaches firn tag through --config.
type tagList []string

func (l *tagList) String() string { return strings.Join(*l, ",") }

func (l *tagList) Set(s string) error {
	*l = nil
	if s != "" {
		*l = strings.Split(s, ",")
	}
	return nil
}
