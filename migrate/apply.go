package migrate

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/firn-id/firn/nodeid"
	"github.com/firn-id/firn/sqlstore"
)

// ApplyOptions says where Apply records the floor.
type ApplyOptions struct {
	// Open opens the registry, the nodeid.Store firn will serve from, and
	// returns what closes it. Apply opens it only once the old system is
	// fenced off.
	Open func() (nodeid.Store, func() error, error)
	// Registry names the registry in messages ("mysql namespace
	// \"default\"").
	Registry string
	// Source names the previous system's database in messages, with no
	// password.
	Source string
	// Space is the layout as the registry records it.
	Space nodeid.LayoutID
	// Nodes is how many nodes besides the reserved ones get the floor:
	// the lowest others, which firn takes first.
	Nodes int
	// Timeout bounds each statement: the fence and each node's advance
	// get twice it.
	Timeout time.Duration
}

// Apply records the plan's floor: for uid-generator (MySQL), WORKER_NODE's
// AUTO_INCREMENT first moves past the layout's last node, held there by a
// row (FenceWorkerNodes); then the HWM of the reserved nodes and of the
// o.Nodes lowest others moves past the floor, as firn admin advance
// --past-id. It refuses (*RefusedError, nothing written) a plan with no
// floor, a layout firn cannot issue IDs in, or a floor that does not
// decode plausibly; and, once the fence is in place, a plan that does not
// reserve every worker WORKER_NODE then holds (no node advanced). Every
// firn process of the namespace must be stopped first: one holding a node
// keeps issuing below any new HWM, and its node is refused
// (nodeid.ErrNodeHeld).
func (p *Plan) Apply(ctx context.Context, db *sql.DB, o ApplyOptions) (err error) {
	switch {
	case p.Floor == 0:
		return &RefusedError{"--apply needs a floor (--floor or --max-id-from): without one firn cannot prove its IDs pass the old system's; nothing written"}
	case p.LayoutErr != nil:
		return p.LayoutErr
	}
	if bad := slices.IndexFunc(p.Samples, func(s Sample) bool { return s.Verdict != "" }); bad >= 0 {
		s := p.Samples[bad]
		return &RefusedError{fmt.Sprintf("--apply: %s %d %s; nothing written", s.What, s.ID, s.Verdict)}
	}
	parts, err := p.Layout.Decompose(p.Floor)
	if err != nil {
		return &RefusedError{fmt.Sprintf("--apply: the floor %d does not fit layout %s", p.Floor, p.Layout.Name)}
	}
	if err := p.fenceWorkers(ctx, db, o); err != nil {
		return err
	}
	hwm := parts.Time.Add(p.Layout.Tick).UnixMilli()
	store, closeStore, err := o.Open()
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, closeStore()) }()
	nodes := slices.Clone(p.Reserved)
	for n := uint64(0); n <= p.Layout.MaxNode() && len(nodes) < len(p.Reserved)+o.Nodes; n++ {
		if !slices.Contains(p.Reserved, n) {
			nodes = append(nodes, n)
		}
	}
	for i, n := range nodes {
		if err := advancePast(ctx, store, o, p.Layout.MaxNode()+1, n, hwm); err != nil {
			done := "no node advanced yet"
			if i > 0 {
				done = fmt.Sprintf("nodes %v already advanced (moving an HWM forward again is harmless)", nodes[:i])
			}
			hint := ""
			if errors.Is(err, nodeid.ErrNodeHeld) {
				hint = "; stop the process holding it first (it keeps issuing below any new HWM), then run --apply again"
			}
			return fmt.Errorf("--apply, node %d (%s): %w%s; %s", n, o.Registry, err, hint, done)
		}
	}
	noun := "nodes"
	if len(nodes) == 1 {
		noun = "node"
	}
	p.Applied = append(p.Applied, fmt.Sprintf("the HWM of %d %s in %s is at least %s, past the floor %d",
		len(nodes), noun, o.Registry, time.UnixMilli(hwm).UTC().Format(timeFormat), p.Floor))
	return nil
}

// fenceWorkers moves uid-generator's WORKER_NODE AUTO_INCREMENT past the
// layout's last node, before any HWM: DisposableWorkerIdAssigner gives
// every start the next AUTO_INCREMENT as its worker ID, so an old process
// that restarts during the switch would otherwise take a node firn
// serves; past the last node, DefaultUidGenerator refuses to start.
func (p *Plan) fenceWorkers(ctx context.Context, db *sql.DB, o ApplyOptions) error {
	if p.From != UIDGenerator {
		return nil
	}
	if p.Dialect != sqlstore.MySQL {
		return &RefusedError{fmt.Sprintf("--apply --from uid-generator: %s; nothing written", ErrFenceDialect)}
	}
	ctx, cancel := context.WithTimeout(ctx, 2*o.Timeout)
	defer cancel()
	if err := FenceWorkerNodes(ctx, db, p.Dialect, p.OldTable, p.FenceAt()); err != nil {
		return fmt.Errorf("--apply (%s): %w; no node advanced", o.Source, err)
	}
	p.Applied = append(p.Applied, fmt.Sprintf("the AUTO_INCREMENT of %s is past %d, held across a restart by a row at ID %d: a "+
		"uid-generator process that starts now is given a worker past the layout's last node %d, and refuses to start",
		p.OldTable, p.FenceAt(), p.FenceAt(), p.Layout.MaxNode()))
	return p.checkNoNewWorkers(ctx, db, o)
}

// checkNoNewWorkers refuses a plan whose WORKER_NODE read is stale: a
// process that started between Check's read and the fence took a worker
// ID the plan does not reserve, and may be issuing on it, while Apply
// would advance it as one of the lowest others and the reserved nodes
// printed would let firn take it. The table is read after the fence,
// whose ALTER TABLE waits for every transaction that inserted into it
// to end (the table's metadata lock), so no worker below the fence can
// be missing from this read.
func (p *Plan) checkNoNewWorkers(ctx context.Context, db *sql.DB, o ApplyOptions) error {
	workers, err := WorkerNodes(ctx, db, p.Dialect, p.OldTable)
	if err != nil {
		return fmt.Errorf("--apply (%s): %w; the fence is in place, no node advanced", o.Source, err)
	}
	for _, w := range workers {
		if w.ID >= 0 && uint64(w.ID) <= p.Layout.MaxNode() && !slices.Contains(p.Reserved, uint64(w.ID)) {
			return &RefusedError{fmt.Sprintf("--apply: uid-generator worker %d (%s %s) started after the plan was made, which does not "+
				"reserve it; the fence is in place (%s's AUTO_INCREMENT is %d), no node advanced: run the check again and apply its plan",
				w.ID, w.Host, w.Port, p.OldTable, p.FenceAt())}
		}
	}
	return nil
}

// advancePast raises node's HWM to hwm (nodeid.Store.Advance, as firn
// admin advance). A namespace never used has no layout recorded, so
// Advance refuses it: one claim of the node, released at once, records
// it first.
func advancePast(ctx context.Context, store nodeid.Store, o ApplyOptions, pool, node uint64, hwm int64) error {
	ctx, cancel := context.WithTimeout(ctx, 2*o.Timeout)
	defer cancel()
	req := nodeid.AdvanceRequest{Node: node, HWM: hwm, Layout: o.Space, Pool: pool}
	_, err := store.Advance(ctx, req)
	if errors.Is(err, nodeid.ErrUnknownNamespace) {
		c, cerr := store.Claim(ctx, nodeid.ClaimRequest{Node: node, Pool: req.Pool, Layout: req.Layout, TTL: time.Second})
		if cerr != nil {
			return cerr
		}
		if rerr := store.Release(ctx, c); rerr != nil {
			return rerr
		}
		_, err = store.Advance(ctx, req)
	}
	return err
}
