package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/firn-id/firn/cmd/firn/internal/backend"
	"github.com/firn-id/firn/cmd/firn/internal/config"
	"github.com/firn-id/firn/idtext"
	"github.com/firn-id/firn/node"
	"github.com/firn-id/firn/nodeid"
	"github.com/firn-id/firn/opaque"
	"github.com/firn-id/firn/snowflake"
)

var nextUsage = `Usage: firn next [-n N] [--format F] [--node N|derived] [store flags] [layout flags]

Prints N new IDs, one per line, from a generator for one node. The node's
high-water mark (HWM) lives in the store, written ahead of use, so a later
run — even with the clock set back — never repeats an ID. The local store
is a data directory, locked while firn runs; its node is locked too, in
the node directory every data directory of the user shares, whatever
its layout, so two runs at once on two directories take two nodes. Every
store records the layout, and a run with another layout in the same
namespace (on the local store, the same data directory) is refused;
another layout, another ID space, takes a data directory of its own,
unless it has the same ID bits as a recorded layout (the same epoch,
tick, widths and order, other node field names or splits): the user's
node directory refuses that in every data directory.

With a shared registry (etcd, postgres, mysql: by flag, variable or the
--config of a server), firn next takes a node of that registry for
itself, never the server's registry.node, holds it until it exits, and
says which on stderr. To take IDs from a running firn serve instead, give
--server URL.

` + ownFlags(
	[2]string{"-n N", "how many IDs (default 1, at most 10000000)"},
	[2]string{"--format F", "snowflake (default): the 64-bit ID in decimal; uuid: a UUIDv7 (RFC 9562); ulid: a ULID. " +
		"A UUID or ULID takes one slot of the same generator: its time is the tick's start, then the sequence and node, " +
		"then random bits; it is as unique as the 64-bit ID of that slot, which is never issued"},
) + config.Usage(nextOwnUses...) + `` + encodingUsage + "\n" + configFlagUsage + storeFlagsUsage + "\n" + remoteFlagsUsage + "\n" + opaqueFlagsUsage + "\n" + layoutHelp()

const maxNext = 10_000_000

// nextOwnUses are the settings of firn next that no other block of its
// help (store, opaque, layout flags) lists.
var nextOwnUses = []string{"registry.node", "registry.accept_collision_risk", "registry.reserved_nodes",
	"registry.start_ahead", "snowflake.floor", "snowflake.exhausted", "snowflake.max_borrow"}

// nextUses are the settings firn next takes from the configuration, and
// binds as flags.
var nextUses = append(append([]string{"layout"}, nextOwnUses...), append(storeUses, opaqueUses...)...)

// nextLine is a parsed firn next command line: how many IDs, in which
// form, from which generator and lease.
type nextLine struct {
	cfg        *config.Config
	rf         remoteFlags
	n          int
	formatName *string
	encoding   func() (idtext.Encoding, error)
	f          idFormat
	l          snowflake.Layout
	perm       *opaque.Permutation
	enc        idtext.Encoding
	gc         snowflake.Config // but its node and reservation
	lc         nodeid.Config
}

// parseNext reads firn next's command line and settings, checking every
// one before a store is opened.
func parseNext(args []string) (*nextLine, error) {
	cfg, err := loadFor(args, nextUses...)
	if err != nil {
		return nil, err
	}
	x := &nextLine{cfg: cfg}
	fs := x.flagSet()
	rest, err := parseFlags(fs, args)
	if err != nil {
		return nil, err
	}
	if len(rest) > 0 {
		return nil, extraArg("next", rest[0])
	}
	if x.n < 1 || x.n > maxNext {
		return nil, usagef("-n %d: want 1 to %d", x.n, maxNext)
	}
	if x.f, err = parseIDFormat(*x.formatName); err != nil {
		return nil, err
	}
	if x.l, err = cfg.Layout.Snowflake(); err != nil {
		return nil, err
	}
	if err := config.CheckGenerates(x.l, time.Now()); err != nil {
		return nil, err
	}
	if x.l.Epoch.After(time.Now()) {
		return nil, usagef("epoch %s is in the future: the clock is behind it, so no tick can be issued", x.l.Epoch.Format(timeFormat))
	}
	if x.perm, err = cfg.Opaque.Permutation(x.l); err != nil {
		return nil, err
	}
	r := cfg.Registry
	if err := cfg.Opaque.CheckNode(r.Node); err != nil {
		return nil, usagef("%s", err)
	}
	if x.enc, err = x.encoding(); err != nil {
		return nil, err
	}
	if err := x.f.check(x.perm, x.enc); err != nil {
		return nil, err
	}
	if x.gc, err = cfg.Generator(x.l); err != nil {
		return nil, err
	}
	if x.lc, err = r.Lease(x.l, x.perm, x.cfg.Site); err != nil {
		return nil, err
	}
	x.lc.Window = nextWindow(x.l, x.n)
	return x, nil
}

// flagSet is firn next's flag set, bound to x.
func (x *nextLine) flagSet() *flag.FlagSet {
	fs := flag.NewFlagSet("next", flag.ContinueOnError)
	bindConfig(fs, x.cfg, nextUses...)
	x.encoding = encodingFlag(fs)
	fs.IntVar(&x.n, "n", 1, "")
	x.formatName = fs.String("format", "snowflake", "")
	x.rf.register(fs)
	return fs
}

func runNext(args []string, stdout io.Writer) error {
	x, err := parseNext(args)
	if err != nil {
		return err
	}
	cfg, rf, n, f, l, perm, enc, gc, lc := x.cfg, &x.rf, &x.n, x.f, x.l, x.perm, x.enc, x.gc, x.lc
	sf := storeOf(cfg)
	remote, err := rf.explicit(&sf)
	if remote == nil && err == nil {
		err = withLease(&sf, lc, gc, func(g *snowflake.Generator, lease *nodeid.Lease) error {
			// The floor applies to every generator that issues in the
			// namespace, as it does to serve's.
			if err := config.CheckFloor(g, cfg.Snowflake.Floor, perm); err != nil {
				return err
			}
			draw, err := f.drawer(g, perm, enc)
			if err != nil {
				return err
			}
			return printIDs(draw, lease, *n, stdout)
		})
		if remote, err = rf.beside(&sf, err); remote == nil {
			return err
		}
	}
	if err != nil {
		return err
	}
	return nextRemote(context.Background(), remote, l, perm, enc, lc.Node, *n, f, otherSpace(&sf, lc.Layout), stdout)
}

// nextWindow is how far ahead of its clock firn next reserves: the time
// its IDs take at the layout's rate, plus 25 ms. Each run starts past the
// last run's reservation, so a short window keeps runs in a tight loop
// from outrunning the clock (past 10 s ahead firn refuses to start).
func nextWindow(l snowflake.Layout, n int) time.Duration {
	need := time.Duration(float64(n) / l.Capacity().PerSecond * float64(time.Second))
	return 25*time.Millisecond + need.Round(time.Millisecond)
}

// withLease opens the store, takes a node for this run and builds a
// generator on it (node.Once), runs f, and releases both.
func withLease(sf *backend.Options, lc nodeid.Config, gc snowflake.Config, f func(*snowflake.Generator, *nodeid.Lease) error) (err error) {
	ctx := context.Background()
	store, closeStore, err := sf.OpenNodes(ctx)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, closeStore()) }()
	if store, err = recordNodes(store); err != nil {
		return err
	}
	err = node.Once(ctx, store, lc, gc, func(g *snowflake.Generator, lease *nodeid.Lease) error {
		for _, cb := range lease.Skipped() {
			fmt.Fprintf(logOutput, "firn next: warning: passed over free node %d, whose HWM is %s ahead of the clock; took node %d\n",
				cb.Node, cb.HWM.Sub(cb.Now).Round(time.Millisecond), lease.Node())
		}
		if _, local := sf.DataDir(); !local {
			// A node of a shared registry is one a server could have held:
			// say which one this run holds, and how to ask a server instead.
			fmt.Fprintf(logOutput, "firn next: took node %d of %s for itself, until it exits; to take IDs from a running firn serve instead, give --server URL\n",
				lease.Node(), sf.Describe())
		}
		return f(g, lease)
	})
	if errors.Is(err, nodeid.ErrLayoutMismatch) {
		return layoutRefused(err, sf, lc.Layout)
	}
	return err
}

// printIDs writes n IDs that draw makes. When the generator reaches the
// HWM before the lease's next extension lands it waits for it, for as
// long as the lease holds.
func printIDs(draw drawer, lease *nodeid.Lease, n int, stdout io.Writer) error {
	w := bufio.NewWriter(stdout)
	var lines []byte
	for n > 0 {
		var k int
		var err error
		lines, k, err = draw(context.Background(), min(n, 4096), lines[:0])
		w.Write(lines)
		n -= k
		if node.Waiting(err, lease) {
			time.Sleep(time.Millisecond)
			continue
		}
		if err != nil {
			return errors.Join(err, w.Flush())
		}
	}
	return w.Flush()
}
