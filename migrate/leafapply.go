package migrate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/firn-id/firn/nodeid"
)

// LeafApplyOptions says where Apply records the reservation.
type LeafApplyOptions struct {
	// Tree is the fleet's ZooKeeper, as CheckLeaf read it.
	Tree LeafTree
	// Registry is firn's registry; Name names it in messages. A registry
	// that keeps no reservation of its own is refused before anything is
	// written: in configuration only, a firn started without it would
	// take a Leaf worker's ID.
	Registry nodeid.Store
	Name     string
	// Space is Leaf's layout as the registry records it.
	Space nodeid.LayoutID
}

// Apply takes the fleet over: it fences Leaf off, watches every worker
// znode for two heartbeats plus the margin, and only if none moved
// records the reserved worker IDs and the floor in the registry. Run again
// it recognises its own fence and records the same reservation. It reads
// the tree again first, so what it fences is what is there now.
func (p *LeafPlan) Apply(ctx context.Context, o LeafApplyOptions) error {
	reg, ok := o.Registry.(nodeid.Reserver)
	if !ok {
		return &RefusedError{fmt.Sprintf("--apply: %s keeps no reservation of its own (only --store zookeeper does): Leaf's worker "+
			"IDs would be reserved in configuration only, and a firn started without it would take one; nothing written", o.Name)}
	}
	fresh, err := CheckLeaf(ctx, LeafOptions{Tree: o.Tree, Servers: p.Servers, Name: p.Name, SkipTimestamps: p.Skipped, Note: p.Note})
	if err != nil {
		return err
	}
	*p = *fresh
	if err := p.fence(ctx, o.Tree); err != nil {
		return err
	}
	if err := p.watch(ctx, o.Tree); err != nil {
		return err
	}
	return p.record(ctx, reg, o)
}

// fence pushes forever's sequence past 1023, so a new Leaf instance
// is given a worker ID its constructor refuses (SnowflakeIDGenImpl.java:
// 57), recording the sequence read before in the marker in the same
// Multi; then writes LeafFenceBase + its timestamp into every worker
// znode, so a returning instance fails its start check
// (SnowflakeZookeeperHolder.java:77-79, 131-136).
func (p *LeafPlan) fence(ctx context.Context, tree LeafTree) error {
	if p.Marked && !slices.ContainsFunc(p.Workers, func(w LeafWorker) bool { return !w.Fenced && w.ID < LeafWorkers }) {
		p.Applied = append(p.Applied, fmt.Sprintf("the fence a previous --apply wrote is in place (%s, sequence %d, every worker znode "+
			"fenced): recognised, nothing rewritten", p.marker(), p.FencedSequence))
		return nil
	}
	if err := p.pushSequence(ctx, tree); err != nil {
		return fmt.Errorf("--apply: fence %s's sequence (ZooKeeper %s): %w; run --apply again", p.forever(), p.Servers, err)
	}
	p.Applied = append(p.Applied, fmt.Sprintf("%s's sequence is past %d: a new Leaf instance gets a worker ID its constructor refuses", p.forever(), LeafWorkers-1))
	// The push ran from the sequence the marker records, so every
	// worker ID ZooKeeper gave out before it is below that version and
	// reserved. Read the workers again, now that no new one can get an ID
	// below 1024, so that every one is fenced.
	if err := p.readWorkers(ctx, tree); err != nil {
		return err
	}
	p.reserve()
	for i, w := range p.Workers {
		if w.Fenced || w.ID >= LeafWorkers {
			continue
		}
		ip, port := splitAddr(w.Addr)
		// A skipped worker's timestamp may be past any fence: the largest
		// time fails Leaf's start check as well, and never wraps negative.
		fenced := int64(math.MaxInt64)
		if w.Timestamp <= math.MaxInt64-LeafFenceBase {
			fenced = LeafFenceBase + w.Timestamp
		}
		val, _ := json.Marshal(leafEndpoint{IP: ip, Port: port, Timestamp: fenced})
		if err := tree.Set(ctx, p.forever()+"/"+w.Znode, val, w.Version); err != nil {
			return p.fenceFailed(ctx, tree, w, err)
		}
		p.Workers[i].Fenced = true
	}
	p.Applied = append(p.Applied, fmt.Sprintf("every worker znode holds a timestamp %d ms ahead of its own: a returning Leaf instance fails its start check", LeafFenceBase))
	return nil
}

// fenceFailed says why the fence of w failed: a znode rewritten since it
// was read is a live instance.
func (p *LeafPlan) fenceFailed(ctx context.Context, tree LeafTree, w LeafWorker, err error) error {
	_, version, _, _, found, rerr := tree.Get(ctx, p.forever()+"/"+w.Znode)
	if rerr == nil && found && version != w.Version {
		return p.alive(w, "rewrote its znode while the fence was written")
	}
	return fmt.Errorf("--apply: fence worker %d (%s): %w; run --apply again; nothing written to firn's registry", w.ID, w.Addr, err)
}

// pushSequence pushes forever's sequence past 1023 from the
// one read, with the marker recording it, in one Multi that fails if the
// sequence moved (a Leaf instance registered since the read). Each
// round reads the root again: a Multi whose answer was lost may have
// landed, and then the marker is there and proves it; otherwise the next
// round starts from the sequence read now.
func (p *LeafPlan) pushSequence(ctx context.Context, tree LeafTree) error {
	var err error
	for range 3 {
		if p.Marked {
			return nil
		}
		data, _ := json.Marshal(leafMarkerValue{Sequence: p.Sequence})
		n := max(0, LeafWorkers-int(p.Sequence))
		err = tree.BumpChildren(ctx, p.forever(), p.foreverData, p.Sequence, n, p.marker(), data)
		if rerr := p.readRoot(ctx, tree); rerr != nil {
			return errors.Join(err, rerr)
		}
	}
	if p.Marked {
		return nil
	}
	return fmt.Errorf("the sequence changed under three attempts (Leaf instances are registering: stop them): %w", err)
}

// watch reads every worker znode after the fence, waits two heartbeats
// plus the margin, and reads again: a Leaf instance alive rewrites its
// znode every heartbeat whatever it holds (its loop compares against its
// own last write, SnowflakeZookeeperHolder.java:154-160), and a new one
// appears as a new child. Either refuses, naming the worker.
func (p *LeafPlan) watch(ctx context.Context, tree LeafTree) error {
	before := *p
	if err := before.readWorkers(ctx, tree); err != nil {
		return err
	}
	wait := leafWait()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(wait):
	}
	after := *p
	if err := after.readWorkers(ctx, tree); err != nil {
		return err
	}
	for _, w := range after.Workers {
		i := slices.IndexFunc(before.Workers, func(b LeafWorker) bool { return b.Znode == w.Znode })
		switch {
		case i < 0 && w.ID < LeafWorkers && !slices.Contains(p.Reserved, w.ID):
			return p.alive(w, "appeared during the takeover")
		case i >= 0 && (before.Workers[i].Version != w.Version || before.Workers[i].MTime != w.MTime):
			return p.alive(w, fmt.Sprintf("rewrote its znode within %s", wait))
		}
	}
	return nil
}

func (p *LeafPlan) alive(w LeafWorker, what string) error {
	return &RefusedError{fmt.Sprintf("--apply: Leaf worker %d (%s) %s: a Leaf instance is alive; stop every Leaf instance of %q, "+
		"then run --apply again (the fence stays; it is recognised); nothing written to firn's registry", w.ID, w.Addr, what, p.Name)}
}

// record writes the reservation and the floor into the registry.
func (p *LeafPlan) record(ctx context.Context, reg nodeid.Reserver, o LeafApplyOptions) error {
	floor, err := p.floorAt(time.Now())
	if err != nil {
		return fmt.Errorf("%w; the fence stays, nothing written to firn's registry", err)
	}
	p.Floor = floor
	note := fmt.Sprintf("Leaf %s %s (ZooKeeper %s)", p.Name, p.Root, p.Servers)
	var pins []nodeid.Pinned
	for _, id := range p.Skipped {
		pins = append(pins, nodeid.Pinned{Node: id, Note: fmt.Sprintf("%s worker %d: its last timestamp is not under the floor "+
			"(--leaf-skip-timestamp); operator: %s", note, id, p.Note)})
	}
	before, err := reg.Reservation(ctx)
	if err != nil {
		return fmt.Errorf("--apply (%s): %w; the fence stays, run --apply again", o.Name, err)
	}
	// One namespace per Leaf fleet: a node let out of another fleet's
	// reservation would be skipped by Merge here, silently, while this
	// fleet's worker of that ID may still issue.
	if own := fmt.Sprintf("Leaf %s %s ", p.Name, p.Root); before.Note != "" && !strings.HasPrefix(before.Note, own) {
		return &RefusedError{fmt.Sprintf("--apply: %s already holds another reservation (%s): take each Leaf fleet over into a "+
			"namespace of its own (--namespace); the fence stays, nothing written to firn's registry", o.Name, before.Note)}
	}
	r, err := reg.Reserve(ctx, nodeid.Reservation{Nodes: p.Reserved, Floor: p.Floor, Note: note, Pinned: pins, Layout: o.Space})
	if errors.Is(err, nodeid.ErrNodeHeld) {
		return fmt.Errorf("--apply (%s): %w; stop the firn holding it, then run --apply again (the fence stays)", o.Name, err)
	}
	if err != nil {
		return fmt.Errorf("--apply (%s): %w; the fence stays, run --apply again", o.Name, err)
	}
	again := ""
	if !slices.ContainsFunc(p.Reserved, func(n uint64) bool { return !before.Holds(n) && !before.Let(n) }) {
		again = " (a previous --apply had reserved them: nothing new)"
	}
	p.Applied = append(p.Applied, fmt.Sprintf("%s reserves %d Leaf worker IDs%s and starts every claim at or after %s (floor %d)",
		o.Name, len(r.Nodes), again, time.UnixMilli(r.Floor).UTC().Format(timeFormat), r.Floor))
	return nil
}

// splitAddr splits Leaf's ip:port at its last colon.
func splitAddr(addr string) (ip, port string) {
	i := strings.LastIndexByte(addr, ':')
	if i < 0 {
		return addr, ""
	}
	return addr[:i], addr[i+1:]
}
