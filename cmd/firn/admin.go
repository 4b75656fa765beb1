package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/firn-id/firn/cmd/firn/internal/config"
	"github.com/firn-id/firn/idtext"
	"github.com/firn-id/firn/nodeid"
	"github.com/firn-id/firn/snowflake"
)

var adminUsage = `Usage: firn admin advance --node N (--to TIME | --past-id ID) [store flags] [layout flags]
       firn admin unreserve --node N --confirm-caches-deleted --note TEXT [store flags]

advance moves a node's high-water mark (HWM) forward, never back: after a store was
restored from a backup it may have lost HWMs that IDs were already issued
under. Advance every node past the last ID issued before the restore (or
past the time of the failure plus a margin) before starting firn again.

Stop every firn process of the namespace first: a node held by a running
process is refused, since that process keeps issuing below any new HWM.

` + ownFlags(
	[2]string{"--node N", "the node value (as firn parse prints it), inside the namespace's layout"},
	[2]string{"--to TIME", "the new HWM: Unix milliseconds or an RFC 3339 time"},
	[2]string{"--past-id ID", "the new HWM: the end of the tick of ID, decoded with the layout flags " +
		"(an opaque ID is revealed with the opaque flags first: opaque IDs are not ordered)"},
) + `
The layout flags (default: the firn layout) must describe the layout the
namespace recorded at its first use: another layout, a node outside it, a
namespace never used (a typo) and, on the local store, a data directory
that does not exist are refused, naming what exists instead.

` + unreserveUsage + "\n" + configFlagUsage + storeFlagsUsage + "\n" + opaqueFlagsUsage + "\n" + layoutHelp()

// adminUses are the settings firn admin advance takes.
var adminUses = append([]string{"layout"}, append(storeUses, opaqueUses...)...)

// adminOwn are firn admin advance's own flags.
type adminOwn struct{ node, to, pastID *string }

// adminFlagSet is firn admin advance's flag set, bound to cfg.
func adminFlagSet(cfg *config.Config) (*flag.FlagSet, *adminOwn) {
	fs := flag.NewFlagSet("admin", flag.ContinueOnError)
	bindConfig(fs, cfg, adminUses...)
	return fs, &adminOwn{node: fs.String("node", "", ""), to: fs.String("to", "", ""), pastID: fs.String("past-id", "", "")}
}

func runAdmin(args []string, stdout io.Writer) error {
	switch {
	case len(args) > 0 && args[0] == "advance":
		return runAdvance(args, stdout)
	case len(args) > 0 && args[0] == "unreserve":
		return runUnreserve(args, stdout)
	case len(args) > 0 && isHelp(args[0]):
		return errHelp
	}
	return usagef("want a subcommand: firn admin advance --node N --to TIME, or firn admin unreserve --node N --confirm-caches-deleted --note TEXT")
}

// runAdvance is firn admin advance.
func runAdvance(args []string, stdout io.Writer) (err error) {
	cfg, err := loadFor(args[1:], adminUses...)
	if err != nil {
		return err
	}
	fs, own := adminFlagSet(cfg)
	nodeArg, to, pastID := own.node, own.to, own.pastID
	rest, err := parseFlags(fs, args[1:])
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return extraArg("admin", rest[0])
	}
	node, err := strconv.ParseUint(*nodeArg, 10, 64)
	if err != nil {
		return usagef("--node %q: want a node value, a non-negative number", *nodeArg)
	}
	req, err := advanceRequest(cfg, *to, *pastID)
	if err != nil {
		return err
	}
	if cfg.Site.Name != "" {
		if err := nodeid.CheckSiteAdvance(req.HWM, time.Now()); err != nil {
			return usagef("%s", err)
		}
	}
	req.Node = node
	sf := storeOf(cfg)
	sf.MustExist = true // advancing a directory it would create protects nothing
	store, closeStore, err := sf.OpenNodes(context.Background())
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, closeStore()) }()
	if store, err = recordNodes(store); err != nil {
		return err
	}
	stored, err := store.Advance(context.Background(), req)
	var lm *nodeid.LayoutMismatchError
	mismatch := errors.As(err, &lm)
	_, site, _ := nodeid.ParseSiteRecord(nodeid.LayoutID{Description: layoutStored(lm)})
	switch {
	case mismatch && site:
		return usagef("%s (%s)", err, sf.Describe())
	case mismatch:
		return usagef("the layout flags describe %q, but the namespace records layout %q: pass its layout flags, %s (%s)",
			lm.Want, lm.Stored, layoutFlagsFor(lm.Stored), sf.Describe())
	case errors.Is(err, nodeid.ErrUnknownNamespace), errors.Is(err, nodeid.ErrNodeOutOfRange):
		return usagef("%s (%s)", err, sf.Describe())
	case errors.Is(err, nodeid.ErrNodeHeld):
		return fmt.Errorf("%w: stop the process holding node %d first (it keeps issuing below any new HWM), then advance again", err, node)
	case err != nil:
		return err
	}
	note := ""
	if stored > req.HWM {
		note = " (it was already past the requested value)"
	}
	_, err = fmt.Fprintf(stdout, "node %d: HWM %s%s\n", node, time.UnixMilli(stored).UTC().Format(timeFormat), note)
	return err
}

// advanceRequest reads --to or --past-id as Unix milliseconds, with the
// layout the store checks — the layout flags', default the firn layout —
// and its node pool, which bounds the node.
func advanceRequest(cfg *config.Config, to, pastID string) (nodeid.AdvanceRequest, error) {
	var req nodeid.AdvanceRequest
	if (to == "") == (pastID == "") {
		return req, usagef("give exactly one of --to TIME and --past-id ID")
	}
	l, err := cfg.Layout.Snowflake()
	if err != nil {
		return req, err
	}
	if err := config.CheckGenerates(l, time.Now()); err != nil {
		return req, err
	}
	perm, err := cfg.Opaque.Permutation(l)
	if err != nil {
		return req, err
	}
	site, err := cfg.Site.Nodes(l)
	if err != nil {
		return req, err
	}
	req.Layout, req.Pool = config.SiteSpace(l, perm, site), l.MaxNode()+1
	if !site.IsZero() {
		req.First, req.Pool = site.First, site.First+site.Count
	}
	if to != "" {
		t, err := config.ParseEpoch(to)
		if err != nil {
			return req, usagef("--to %q: want Unix milliseconds or an RFC 3339 time", to)
		}
		req.HWM = t.UnixMilli()
		return req, nil
	}
	p, err := decodeText(l, perm, idtext.Decimal, pastID)
	if err != nil {
		return req, err
	}
	req.HWM = p.Time.Add(l.Tick).UnixMilli()
	return req, nil
}

// layoutFlagsFor says which layout flags give the layout a store describes
// as desc (Layout.String: its name, a colon, its parts).
func layoutFlagsFor(desc string) string {
	name, _, _ := strings.Cut(desc, ":")
	if _, ok := snowflake.Preset(name); ok {
		return "e.g. --layout " + name
	}
	return "the --epoch, --tick, --time-bits, --node-bits, --sequence-bits and --order it describes"
}

// layoutStored is the layout a mismatch says the namespace records; ""
// for none.
func layoutStored(lm *nodeid.LayoutMismatchError) string {
	if lm == nil {
		return ""
	}
	return lm.Stored
}
