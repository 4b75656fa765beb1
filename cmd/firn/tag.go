package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"github.com/firn-id/firn/idtext"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/firn-id/firn/client"
	"github.com/firn-id/firn/cmd/firn/internal/config"
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
                                                  base62 or base32); from the store itself
                                                  a run reserves whole ranges of the tag's
                                                  step, and what it leaves is never issued
  firn tag reveal TAG ID [--encoding E]          the plain ID behind an opaque tag's ID
                                                  (needs the opaque flags)

A tag listed in --opaque-tags (serve's opaque.tags) is created opaque: its
IDs pass through a keyed permutation for its whole life, recorded with the
tag. Created here, or by a server, a tag is opaque or plain as that
configuration says; every server must then say the same.

Each subcommand takes its own flags: the store flags (or --server) for all
but reveal, the opaque flags below for create, next and reveal. A flag of
another subcommand is refused, naming the subcommands it applies to.

In a site, the layout flags place its value (docs/segments.md, "Several sites").

` + configFlagUsage + storeFlagsUsage + "\n" + remoteFlagsUsage + "\n" + opaqueTagFlagsUsage + "\n" + layoutHelp()

// tagSubs are firn tag's subcommands, in the order help lists them.
var tagSubs = []string{"list", "create", "step", "advance", "next", "reveal"}

// tagArgs is how many arguments each subcommand takes.
var tagArgs = map[string]int{"list": 0, "create": 1, "step": 2, "advance": 1, "next": 1, "reveal": 2}

// tagUses are the settings a subcommand takes: every one but reveal
// opens a store (or asks a server); those that create a tag, draw from
// it or reveal its IDs take its opaque and JavaScript-safe settings.
func tagUses(sub string) []string {
	var uses []string
	if sub != "reveal" {
		uses = append(uses, append([]string{"layout", "segments.stores"}, storeUses...)...)
	}
	if sub == "create" || sub == "next" || sub == "reveal" {
		uses = append(uses, tagOpaqueUses...)
	}
	return uses
}

// tagOpaqueUses are the opaque and JavaScript-safe settings of the
// subcommands that create a tag, draw from it or reveal its IDs.
var tagOpaqueUses = []string{"opaque.tags", "opaque.key_file", "opaque.key", "opaque.tweak", "segments.javascript_safe"}

// tagFlags are a subcommand's own flags, beside its settings.
type tagFlags struct {
	rf              remoteFlags
	first, step, to *int64
	desc            *string
	n               *int
	encoding        func() (idtext.Encoding, error)
}

// register defines on fs the flags sub owns: each subcommand its own, so
// a flag of another is refused rather than ignored.
func (f *tagFlags) register(fs *flag.FlagSet, sub string) {
	if sub != "reveal" {
		f.rf.register(fs)
	}
	switch sub {
	case "create":
		f.first, f.step, f.desc = fs.Int64("first", 1, ""), fs.Int64("step", 1000, ""), fs.String("description", "", "")
	case "advance":
		f.to = fs.Int64("to", 0, "")
	case "next":
		f.n = fs.Int("n", 1, "")
	}
	if sub == "next" || sub == "reveal" {
		f.encoding = encodingFlag(fs)
	}
}

// tagFlagSet is the flag set of the subcommand sub, bound to cfg.
func tagFlagSet(sub string, cfg *config.Config) (*flag.FlagSet, *tagFlags) {
	fs := flag.NewFlagSet("tag", flag.ContinueOnError)
	bindConfig(fs, cfg, tagUses(sub)...)
	var f tagFlags
	f.register(fs, sub)
	return fs, &f
}

// tagLine is a parsed firn tag command line.
type tagLine struct {
	sub   string
	pos   []string
	cfg   *config.Config
	flags *tagFlags
	// perms is the permutation of each opaque tag.
	perms func(string) segment.Permutation
}

// parseTag reads a firn tag command line: the subcommand, its
// arguments, and the settings and flags it takes.
func parseTag(args []string) (*tagLine, error) {
	if len(args) == 0 {
		return nil, usagef("want a subcommand: list, create, step, advance, next or reveal; run 'firn help tag'")
	}
	t := &tagLine{sub: args[0]}
	if isHelp(t.sub) {
		return nil, errHelp
	}
	count, ok := tagArgs[t.sub]
	if !ok {
		return nil, usagef("unknown subcommand %q: want list, create, step, advance, next or reveal", t.sub)
	}
	var err error
	if t.cfg, err = loadFor(args[1:], tagUses(t.sub)...); err != nil {
		return nil, err
	}
	var fs *flag.FlagSet
	fs, t.flags = tagFlagSet(t.sub, t.cfg)
	if t.pos, err = parseSubFlags(fs, args[1:], "firn tag "+t.sub); err != nil {
		return nil, err
	}
	if err := t.cfg.Opaque.Validate(); err != nil {
		return nil, usagef("%s", err)
	}
	if err := config.CheckTagList("segments.javascript_safe", t.cfg.Segments.JavaScriptSafe); err != nil {
		return nil, usagef("%s", err)
	}
	if t.perms, err = t.cfg.Opaque.TagPermutations(t.cfg.Segments.MaxID()); err != nil {
		return nil, err
	}
	if len(t.pos) != count {
		return nil, usagef("%s takes %s, got %d; run 'firn help tag'", t.sub, plural(count, "argument"), len(t.pos))
	}
	return t, nil
}

func runTag(args []string, stdout io.Writer) (err error) {
	t, err := parseTag(args)
	if err != nil {
		return err
	}
	sub, pos, cfg, tf, perms := t.sub, t.pos, t.cfg, t.flags, t.perms
	if sub == "reveal" {
		enc, err := tf.encoding()
		if err != nil {
			return err
		}
		return revealTag(pos[0], pos[1], enc, perms, stdout)
	}
	sf := storeOf(cfg)
	if sf.Site, err = cfg.SiteNodes(); err != nil {
		return usagef("%s", err)
	}
	rf := &tf.rf
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var store tagAdmin
	var alloc *segment.Allocator // the local store's, with the opaque settings
	r, err := rf.explicit(&sf)
	if r == nil && err == nil {
		var local segment.Store
		var closeStore func() error
		local, closeStore, err = sf.OpenSegments(context.Background()) // --dial-timeout alone bounds the dial, and may pass 30 s
		if err == nil {
			defer func() { err = errors.Join(err, closeStore()) }()
			store = local
			if alloc, err = segment.NewAllocator(local, segment.Config{MaxWait: 5 * time.Second, MaxID: cfg.Segments.MaxID(), Opaque: perms}); err != nil {
				return err
			}
			defer func() { err = errors.Join(err, alloc.Close(context.Background())) }()
		} else if r, err = rf.beside(&sf, err); r == nil {
			return err
		}
	}
	if err != nil {
		return err
	}
	if r != nil {
		defer r.close()
		store = r
	}
	switch sub {
	case "list":
		return listTags(ctx, store, stdout)
	case "create":
		return t.create(ctx, store, alloc, stdout)
	case "step":
		return t.setStep(ctx, store, stdout)
	case "advance":
		return t.advance(ctx, store, stdout)
	}
	return t.next(ctx, r, alloc, stdout)
}

// create is firn tag create: through the allocator of a store opened
// here, so the tag takes these opaque settings, or through a server.
func (t *tagLine) create(ctx context.Context, store tagAdmin, alloc *segment.Allocator, stdout io.Writer) error {
	pos, first, step, desc := t.pos, t.flags.first, t.flags.step, t.flags.desc
	if *step < 1 {
		return usagef("--step %d: want at least 1", *step)
	}
	if *first < 0 || *first > segment.MaxEnd {
		return usagef("--first %d: want 0 to %d", *first, int64(segment.MaxEnd))
	}
	create := store.CreateTag // a server records its own opaque settings
	if alloc != nil {
		create = alloc.CreateTag
	}
	if err := create(ctx, pos[0], *first, *step, *desc); err != nil {
		return tagErr(pos[0], err)
	}
	tags, _ := store.Tags(ctx) // a site's or a set's class may start above --first
	for _, ti := range tags {
		if ti.Tag == pos[0] {
			*first = ti.Next
		}
	}
	ids := "plain IDs"
	if alloc != nil && alloc.Opaque(pos[0]) {
		ids = "opaque IDs (the first plain ID; draws show its image)"
	}
	_, err := fmt.Fprintf(stdout, "tag %s: first ID %d, step %d, %s\n", pos[0], *first, *step, ids)
	return err
}

// setStep is firn tag step.
func (t *tagLine) setStep(ctx context.Context, store tagAdmin, stdout io.Writer) error {
	pos := t.pos
	v, err := strconv.ParseInt(pos[1], 10, 64)
	if err != nil || v < 1 {
		return usagef("step %q: want a whole number of at least 1", pos[1])
	}
	if err := store.SetStep(ctx, pos[0], v); err != nil {
		return tagErr(pos[0], err)
	}
	_, err = fmt.Fprintf(stdout, "tag %s: step %d\n", pos[0], v)
	return err
}

// advance is firn tag advance.
func (t *tagLine) advance(ctx context.Context, store tagAdmin, stdout io.Writer) error {
	pos, to := t.pos, t.flags.to
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
	if after < *to {
		// Advance never moves a counter back, so an answer below the
		// value asked for proves nothing moved: after a restore the
		// tag would issue IDs already issued.
		return fmt.Errorf("advance tag %s to %d: the answer is next ID %d, below it; the counter may not have moved", pos[0], *to, after)
	}
	note := ""
	if after > *to {
		note = ", already past the requested value;"
	}
	_, err = fmt.Fprintf(stdout, "tag %s: next ID %d%s (the next range a server reserves starts here; ranges already reserved are served first)\n", pos[0], after, note)
	return err
}

// next is firn tag next: from a running server when r is set, else from
// the allocator of a store opened here.
func (t *tagLine) next(ctx context.Context, r *remote, alloc *segment.Allocator, stdout io.Writer) error {
	pos, n := t.pos, t.flags.n
	enc, err := t.flags.encoding()
	if err != nil {
		return err
	}
	if r != nil {
		if *n < 1 || *n > maxNext {
			return usagef("-n %d: want 1 to %d", *n, maxNext)
		}
		w := bufio.NewWriter(stdout)
		err := r.err(r.c.WriteLines(ctx, w, "snowflake", pos[0], *n, r.maxBatch(ctx), enc))
		return errors.Join(tagErr(pos[0], err), w.Flush())
	}
	return drawTag(ctx, alloc, pos[0], *n, enc, stdout)
}

var opaqueTagFlagsUsage = `Opaque and JavaScript-safe tags (create, next and reveal; serve's
opaque.* and segments.javascript_safe settings, which --config passes on):
` + config.Usage(tagOpaqueUses...)

// revealTag prints the plain ID behind an opaque ID of tag.
func revealTag(tag, text string, enc idtext.Encoding, perms func(string) segment.Permutation, stdout io.Writer) error {
	var p segment.Permutation
	if perms != nil {
		p = perms(tag)
	}
	if p == nil {
		return usagef("reveal: tag %q is not opaque under these settings: give --opaque-tags, --opaque-key-file and --opaque-tweak as the tag's servers have them (or --config)", tag)
	}
	id, err := parseID(enc, text)
	if err != nil {
		return err
	}
	plain, err := p.Decode(id)
	if err != nil {
		return usagef("reveal: ID %d does not fit the tag's %d-bit opaque space", id, p.Bits())
	}
	_, err = fmt.Fprintf(stdout, "%d\n", plain)
	return err
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
	case errors.Is(err, segment.ErrUnknownTag), errors.Is(err, client.ErrUnknownTag):
		return usagef("unknown tag %q: create it first with the create subcommand (the list subcommand shows the tags)", tag)
	case errors.Is(err, segment.ErrTagExists), errors.Is(err, client.ErrTagExists):
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
	fmt.Fprintln(w, "TAG\tNEXT\tSTEP\tCLASS\tIDS\tDESCRIPTION")
	for _, t := range tags {
		ids := "plain"
		if t.Opaque != "" {
			ids = "opaque " + t.Opaque
		}
		fmt.Fprintf(w, "%s\t%d\t%d\t%s\t%s\t%s\n", t.Tag, t.Next, t.Step, t.Class(), ids, strings.ReplaceAll(t.Description, "\t", " "))
	}
	return w.Flush()
}

func drawTag(ctx context.Context, a *segment.Allocator, tag string, n int, enc idtext.Encoding, stdout io.Writer) error {
	if n < 1 || n > maxNext {
		return usagef("-n %d: want 1 to %d", n, maxNext)
	}
	h, err := a.Tag(ctx, tag)
	if err != nil {
		return tagErr(tag, err)
	}
	return enc.WriteLines(ctx, stdout, n, 4096, h.NextN)
}
