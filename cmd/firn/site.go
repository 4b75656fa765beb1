package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/firn-id/firn/cmd/firn/internal/backend"
	"github.com/firn-id/firn/cmd/firn/internal/config"
	"github.com/firn-id/firn/nodeid"
	"github.com/firn-id/firn/site"
)

var siteUsage = `usage: firn site claim   --site NAME --site-fields F=V [--standby] [layout, store and ledger flags]
       firn site release --site NAME --site-fields F=V [--site-destroyed | --standby] [layout, store and ledger flags]
       firn site promote --site NAME --site-fields F=V [layout, store and ledger flags]

Provisions a site (docs/operations.md, "Several sites"): a fixed value of
the leading node fields, the rest leased from the site's own registry.
claim writes the value's claim in the ledger — refused, naming the
holder, when another site holds it — then the site record in the
registry's namespace, which from then on refuses every command without
this site setting. A namespace used before sites keeps its history: the
highest HWM of every other value's nodes becomes that value's floor in
the ledger; the site's segment rows of tags served before sites move
into its residue classes (docs/segments.md, "Several sites"). release
writes the released marker in the registry (every process of the site
stops issuing), then records the site's highest HWM as the value's
floor: the next site to claim it starts above. promote moves the site
whose record the registry holds (a promoted replica of its registry,
say) onto its standby value: processes with the old value are refused
there; release the old value afterwards (run it again to finish one cut
short). Every subcommand takes the ledger's provisioning credentials; a
site's firn serve given the ledger settings re-reads its claim.

  --create-ledger         claim: create the ledger, the first claim of all only
                          (a second ledger would give every value out again)
  --standby               claim: claim the value ahead of time for the site's
                          move, on no registry yet; release: give up a standby
                          no promotion took (no registry ever served it)
  --site-destroyed        release without reaching the site's registry: your
                          promise that no process of the site runs or will (a
                          site cut off from the ledger keeps renewing against
                          its own registry); the floor is the ledger's clock
                          plus the longest lease, window and max behind a site
                          allows and a minute (a SQL ledger only)

` + configFlagUsage + "Ledger flags:\n" + config.Usage("ledger") + "\n" + storeFlagsUsage + "\n" + opaqueFlagsUsage + "\n" + layoutHelp()

// siteUses are the settings firn site takes.
var siteUses = append([]string{"layout", "ledger", "segments.stores"}, append(storeUses, opaqueUses...)...)

// runSite is firn site.
func runSite(args []string, stdout io.Writer) (err error) {
	if len(args) > 0 && isHelp(args[0]) {
		return errHelp
	}
	if len(args) == 0 || (args[0] != "claim" && args[0] != "release" && args[0] != "promote") {
		return usagef("want a subcommand: firn site claim, release or promote, with --site NAME --site-fields F=V")
	}
	cfg, err := loadFor(args[1:], siteUses...)
	if err != nil {
		return err
	}
	fs := flag.NewFlagSet("site", flag.ContinueOnError)
	bindConfig(fs, cfg, siteUses...)
	destroyed, standby, create := fs.Bool("site-destroyed", false, ""), fs.Bool("standby", false, ""), fs.Bool("create-ledger", false, "")
	rest, err := parseFlags(fs, args[1:])
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return extraArg("site", rest[0])
	}
	s, space, err := cfg.SiteSpace()
	if err != nil {
		return err
	}
	if s.IsZero() {
		return usagef("name the site: --site NAME --site-fields F=V (such as --site eu-west --site-fields datacenter=3)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ledger, closeLedger, err := backend.OpenLedger(ctx, cfg.Ledger, space, site.Spec{Count: s.Count, Stores: cfg.Segments.SiteStores()}, *create && args[0] == "claim")
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, closeLedger()) }()
	switch {
	case *destroyed && args[0] == "release":
		floor, err := ledger.ReleaseDestroyed(ctx, s)
		return released(stdout, err, s.String(), ledger.ID(), "its registry was not reached (--site-destroyed)", floor)
	case *standby && args[0] == "release":
		floor, err := ledger.ReleaseStandby(ctx, s)
		return released(stdout, err, s.String(), ledger.ID(), "a standby, which no registry served", floor)
	case *standby && args[0] == "claim":
		if err := ledger.Standby(ctx, s); err != nil {
			return err
		}
		_, err := fmt.Fprintf(stdout, "%s claimed as a standby in ledger %s, on no registry: firn site promote moves the site onto it\n", s, ledger.ID())
		return err
	}
	reg, closeReg, err := storeOf(cfg).SiteRegistry(ctx, s, args[0] != "release")
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, closeReg()) }()
	if args[0] == "release" {
		floor, err := ledger.ReleaseSite(ctx, reg, s, space)
		return released(stdout, err, s.String(), ledger.ID(), reg.Where+" serves no more", floor)
	}
	claim := ledger.ClaimSite
	if args[0] == "promote" {
		claim = ledger.Promote
	}
	res, err := claim(ctx, reg, s, space)
	if err != nil {
		return err
	}
	return claimed(stdout, s, ledger.ID(), reg.Where, res)
}

// claimed reports a claim or a promotion.
func claimed(stdout io.Writer, s nodeid.Site, ledger, where string, res site.Result) error {
	verb := map[bool]string{false: "claimed", true: "already claimed"}[res.Already]
	_, err := fmt.Fprintf(stdout, "%s %s in ledger %s: nodes %d to %d of %s, registry %s (identity %q)\n",
		s, verb, ledger, s.First, s.First+s.Count-1, where, res.Record.Registry, res.Record.Native)
	if res.Record.NoSegments {
		fmt.Fprintf(stdout, "segments: none on this value, which another site held (its classes may hold that site's IDs); for segments, claim a value no site held\n")
	}
	for v, f := range res.History {
		fmt.Fprintf(stdout, "value %d: the registry's nodes on it reached %s (%d): its floor in the ledger\n", v, time.UnixMilli(f).UTC().Format(timeFormat), f)
	}
	return err
}

// released reports a release.
func released(stdout io.Writer, err error, site, ledger, how string, floor int64) error {
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "%s released in ledger %s: %s; floor %s (%d): the next site to claim its value starts above it\n",
		site, ledger, how, time.UnixMilli(floor).UTC().Format(timeFormat), floor)
	return err
}
