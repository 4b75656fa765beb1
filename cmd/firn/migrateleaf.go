package main

import (
	"context"
	"errors"
	"flag"
	"io"
	"strconv"

	"github.com/firn-id/firn/cmd/firn/internal/config"
	"github.com/firn-id/firn/migrate"
	"github.com/firn-id/firn/snowflake"
)

// firn migrate check --from leaf-zookeeper: taking Meituan Leaf's
// snowflake workers over in place (package migrate works it out; the
// plan's printing is in migrateleafplan.go).

var leafZooKeeperUsage = `--from leaf-zookeeper reads a Meituan Leaf snowflake fleet's workers in
ZooKeeper (SnowflakeZookeeperHolder: /snowflake/NAME/forever) and prints
every worker, the node IDs to reserve (every worker ID below forever's
sequence, the number ZooKeeper gives its next child: deleted
workers had IDs too), the floor every firn claim
starts at, Leaf's layout, what it could not determine and the steps firn
cannot take. It writes nothing unless --apply.

` + ownFlags(
	[2]string{"--leaf-endpoints S", "Leaf's ZooKeeper servers (leaf.zk.list), host:port,…; read and fenced without credentials, as Leaf connects"},
	[2]string{"--leaf-name NAME", "leaf.name: the workers are under /snowflake/NAME"},
	[2]string{"--sample-id ID", "an ID the fleet issued, decoded with Leaf's layout and judged (repeat the flag for more)"},
	[2]string{"--leaf-skip-timestamp N", "leave worker N's last timestamp out of the floor (repeat for more): a worker whose clock jumped " +
		"puts the floor more than 1m ahead of now, or past the layout's end, which is refused, naming it. " +
		"Worker N stays reserved for good: firn admin unreserve refuses it. Needs --note"},
	[2]string{"--note TEXT", "the operator's record kept with each skipped worker (who, why, which ticket)"},
	[2]string{"--apply", "fence Leaf off, then record the reserved node IDs and the floor in firn's registry: " +
		"forever's child version is pushed past 1023 and every worker znode gets a timestamp no clock reaches; " +
		"then firn watches every worker znode for two heartbeats plus a margin (8s, always) and aborts, " +
		"writing nothing into the registry, if one changes (a Leaf instance is alive). Run again, it recognises its own fence. " +
		"Stop every Leaf instance, and delete workerID.properties on every Leaf host, first"},
	[2]string{"--store zookeeper, --endpoints, --namespace, --zk-*", "firn's registry, which keeps the reservation " +
		"(may be Leaf's ensemble); a store that keeps none is refused by --apply before anything is written. " +
		"--dial-timeout bounds each connection to both"},
) + `The layout is Leaf's, fixed in its code: the layout flags may only say
--layout twitter.
`

// leafFlags are --from leaf-zookeeper's own settings.
type leafFlags struct {
	endpoints, name, note string
	samples, skip         []uint64
}

// leafOnly are the flags of --from leaf-zookeeper alone; dbOnly those of
// the sources read from a database.
var (
	leafOnly = []string{"leaf-endpoints", "leaf-name", "sample-id", "leaf-skip-timestamp", "note"}
	dbOnly   = []string{"dsn", "dialect", "old-table", "token-table", "floor", "max-id-from", "nodes", "segments", "segment-table", "set", "segment-store", "segment-dsn"}
)

func (l *leafFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&l.endpoints, "leaf-endpoints", "", "")
	fs.StringVar(&l.name, "leaf-name", "", "")
	fs.StringVar(&l.note, "note", "", "")
	fs.Func("sample-id", "", appendUint(&l.samples, "want a non-negative ID"))
	fs.Func("leaf-skip-timestamp", "", appendUint(&l.skip, "want a Leaf worker ID, a non-negative number"))
}

// appendUint is a flag's function that appends each value given, a
// decimal number, to dst; want says what a value that is not one should be.
func appendUint(dst *[]uint64, want string) func(string) error {
	return func(s string) error {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return errors.New(want)
		}
		*dst = append(*dst, v)
		return nil
	}
}

// checkLeaf refuses --from leaf-zookeeper's flags when incomplete, and a
// layout other than Leaf's.
func (f *migrateFlags) checkLeaf() error {
	switch {
	case f.leaf.endpoints == "":
		return usagef("--leaf-endpoints is required: Leaf's ZooKeeper servers (leaf.zk.list), host:port,…")
	case f.leaf.name == "":
		return usagef("--leaf-name is required: Leaf's leaf.name (its workers are under /snowflake/NAME)")
	}
	if !f.explicit["layout"] {
		f.layout.Preset = migrate.Leaf.Layout()
	}
	got, err := f.layout.Snowflake()
	if err != nil {
		return err
	}
	if leaf := leafLayout(); got.Fingerprint() != leaf.Fingerprint() {
		return usagef("the layout flags describe %s; Leaf's layout is fixed in its code (SnowflakeIDGenImpl.java): %s; leave them out", got, leaf)
	}
	return f.stores.CheckDataDir()
}

// leafLayout is Leaf's layout, the preset migrate names for Leaf.
func leafLayout() snowflake.Layout {
	l, _ := snowflake.Preset(migrate.Leaf.Layout())
	return l
}

// runLeafZooKeeper reads Leaf's tree, applies the takeover when asked, and
// prints the plan. A registry that keeps no reservation is refused before
// anything is opened; the registry is opened (and so reached) before the
// fence is written.
func runLeafZooKeeper(f *migrateFlags, stdout io.Writer) (err error) {
	if f.apply {
		if err := f.stores.CheckReserves(); err != nil {
			return err
		}
	}
	ctx := context.Background()
	tree, err := f.stores.OpenTree(ctx, "--leaf-endpoints", f.leaf.endpoints, migrate.LeafRoot(f.leaf.name))
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, tree.Close()) }()
	p, err := migrate.CheckLeaf(ctx, migrate.LeafOptions{Tree: tree, Servers: f.leaf.endpoints, Name: f.leaf.name, Samples: f.leaf.samples,
		SkipTimestamps: f.leaf.skip, Note: f.leaf.note})
	if err != nil {
		return migrateErr(err)
	}
	if f.apply {
		reg, closeReg, err := f.stores.OpenNodes(ctx)
		if err != nil {
			return err
		}
		defer func() { err = errors.Join(err, closeReg()) }()
		o := migrate.LeafApplyOptions{Tree: tree, Registry: reg, Name: f.stores.Describe(), Space: config.SpaceID(leafLayout(), nil)}
		if err := p.Apply(ctx, o); err != nil {
			return migrateErr(err)
		}
	}
	cfg, err := leafConfig(f)
	if err != nil {
		return err
	}
	_, err = io.WriteString(stdout, leafPlanText(p, f, cfg))
	return err
}
