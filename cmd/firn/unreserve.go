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

	"github.com/firn-id/firn/cmd/firn/internal/backend"
	"github.com/firn-id/firn/migrate"
	"github.com/firn-id/firn/nodeid"
)

var unreserveUsage = `unreserve:
Lets one node the registry reserves be claimed again: a worker ID of
Meituan Leaf that firn migrate check --from leaf-zookeeper --apply
reserved, for a caller that depended on that Leaf instance's own order.
A Leaf host that still has workerID.properties for it starts on it past
every fence, and would issue the same IDs as firn: delete that file on
every Leaf host first, and say so with --confirm-caches-deleted. The
registry records the note beside the node; the floor still applies to it.
Only a registry that keeps a reservation of its own (--store zookeeper)
has one.

` + ownFlags(
	[2]string{"--node N", "the node to let out"},
	[2]string{"--confirm-caches-deleted", "workerID.properties is gone from every Leaf host (required)"},
	[2]string{"--note TEXT", "the operator's record: who, when, which ticket (required)"},
)

// unreserveUses are the settings firn admin unreserve takes.
var unreserveUses = storeUses

// runUnreserve is firn admin unreserve.
func runUnreserve(args []string, stdout io.Writer) (err error) {
	cfg, err := loadFor(args[1:], unreserveUses...)
	if err != nil {
		return err
	}
	fs := flag.NewFlagSet("admin unreserve", flag.ContinueOnError)
	bindConfig(fs, cfg, unreserveUses...)
	nodeArg, note := fs.String("node", "", ""), fs.String("note", "", "")
	confirmed := fs.Bool("confirm-caches-deleted", false, "")
	rest, err := parseFlags(fs, args[1:])
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return extraArg("admin", rest[0])
	}
	node, err := strconv.ParseUint(*nodeArg, 10, 64)
	switch {
	case err != nil:
		return usagef("--node %q: want a node value, a non-negative number", *nodeArg)
	case !*confirmed:
		return usagef("--confirm-caches-deleted is required: delete workerID.properties on every Leaf host first; a Leaf "+
			"instance that starts from it issues on node %d past every fence, the same IDs as firn", node)
	case strings.TrimSpace(*note) == "":
		return usagef("--note is required: the record kept beside the node (who deleted the caches, when, which ticket)")
	}
	sf := storeOf(cfg)
	return unreserve(sf, node, *note, stdout)
}

// unreserve lets node out of sf's reservation with the operator's note.
func unreserve(sf backend.Options, node uint64, note string, stdout io.Writer) (err error) {
	if err := sf.CheckReserves(); err != nil {
		return err
	}
	store, closeStore, err := sf.OpenNodes(context.Background())
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, closeStore()) }()
	reg, ok := store.(nodeid.Reserver)
	if !ok { // CheckReserves and the backend table say otherwise
		return fmt.Errorf("%s keeps no reservation", sf.Describe())
	}
	record := fmt.Sprintf("%s: workerID.properties deleted on every Leaf host (--confirm-caches-deleted): %s",
		time.Now().UTC().Format(timeFormat), strings.TrimSpace(note))
	r, err := reg.Unreserve(context.Background(), node, record)
	switch {
	case errors.Is(err, nodeid.ErrNotReserved), errors.Is(err, nodeid.ErrUnknownNamespace):
		return usagef("%s (%s)", err, sf.Describe())
	case err != nil:
		return err
	}
	_, err = fmt.Fprintf(stdout, "node %d: no longer reserved in %s; recorded beside it: %q; still reserved: %s; floor %s (%d) applies to it\n",
		node, sf.Describe(), record, migrate.NodeRanges(r.Nodes), time.UnixMilli(r.Floor).UTC().Format(timeFormat), r.Floor)
	return err
}
