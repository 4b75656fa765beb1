package storecheck_test

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/firn-id/firn/internal/storelog"
	"github.com/firn-id/firn/internal/testenv"
	"github.com/firn-id/firn/nodeid"
	"github.com/firn-id/firn/sqlstore"
	"github.com/firn-id/firn/test/cluster/storecheck"
)

// The faults a faulty store makes; none is the store as it is.
const (
	none      = ""
	lowers    = "an advance retried with an older, lower target lowers the HWM"
	notMade   = "a renewal reported as done that was never made"
	liveTaken = "a claim granted while another holder's lease is live"
)

// faultNodes is the pool of the scripts' claims.
const faultNodes = 4

// faulty wraps a real store with one fault of its own making.
type faulty struct {
	nodeid.Store
	fault string
	pg    *pgStore
}

func (f *faulty) Advance(ctx context.Context, req nodeid.AdvanceRequest) (int64, error) {
	stored, err := f.Store.Advance(ctx, req)
	if f.fault != lowers || err != nil || stored <= req.HWM {
		return stored, err
	}
	// The retry is written as sent, over the higher value.
	if _, err := f.pg.db.ExecContext(ctx, "UPDATE "+f.pg.table+" SET hwm = $1 WHERE namespace = $2 AND node = $3",
		req.HWM, f.pg.namespace, req.Node); err != nil {
		return 0, err
	}
	return req.HWM, nil
}

func (f *faulty) Renew(ctx context.Context, c nodeid.Claim, hwm int64) (int64, error) {
	if f.fault == notMade && hwm >= 5000 {
		return hwm, nil
	}
	return f.Store.Renew(ctx, c, hwm)
}

func (f *faulty) Claim(ctx context.Context, req nodeid.ClaimRequest) (nodeid.Claim, error) {
	c, err := f.Store.Claim(ctx, req)
	if f.fault != liveTaken || !errors.Is(err, nodeid.ErrNodeHeld) {
		return c, err
	}
	var hwm int64
	if err := f.pg.db.QueryRowContext(ctx, "SELECT hwm FROM "+f.pg.table+" WHERE namespace = $1 AND node = $2",
		f.pg.namespace, req.Node).Scan(&hwm); err != nil {
		return c, err
	}
	return nodeid.Claim{Node: req.Node, Token: "granted-" + suffix(), HWM: hwm, TTL: req.TTL}, nil
}

// pgStore is a PostgreSQL node store on a table of its own.
type pgStore struct {
	*sqlstore.Store
	db               *sql.DB
	table, namespace string
}

func newPGStore(t *testing.T) *pgStore {
	t.Helper()
	db, err := sql.Open("pgx", testenv.Endpoint(t, "FIRN_TEST_POSTGRES"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	p := &pgStore{db: db, table: "firn_nodes_" + suffix(), namespace: "teeth-" + suffix()}
	p.Store, err = sqlstore.New(db, sqlstore.Postgres, sqlstore.Options{Table: p.table, Namespace: p.namespace})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, tb := range []string{p.table, p.table + "_namespaces"} {
			if _, err := db.Exec("DROP TABLE IF EXISTS " + tb); err != nil {
				t.Errorf("drop %s: %v", tb, err)
			}
		}
	})
	return p
}

func suffix() string {
	b := make([]byte, 6)
	rand.Read(b)
	return hex.EncodeToString(b)
}

var teethLayout = nodeid.LayoutID{Fingerprint: "teeth", Description: "the teeth test's"}

// actors records each process of a script to a log of its own.
type actors struct {
	t     *testing.T
	store nodeid.Store
	logs  map[string]*bytes.Buffer
	recs  map[string]*storelog.Recorder
}

func (a *actors) as(name string) nodeid.Store {
	if r, ok := a.recs[name]; ok {
		return r
	}
	a.logs[name] = &bytes.Buffer{}
	a.recs[name] = storelog.New(a.store, a.logs[name], func(err error) { a.t.Errorf("record %s: %v", name, err) })
	return a.recs[name]
}

func (a *actors) ops() []storelog.Op {
	var all []storelog.Op
	for name, log := range a.logs {
		ops, err := storelog.Read(log, name)
		if err != nil {
			a.t.Fatal(err)
		}
		all = append(all, ops...)
	}
	slices.SortFunc(all, func(x, y storelog.Op) int { return cmp.Compare(x.At, y.At) })
	return all
}

func claimNode(ctx context.Context, s nodeid.Store, n uint64) (nodeid.Claim, error) {
	return s.Claim(ctx, nodeid.ClaimRequest{Node: n, Pool: faultNodes, Layout: teethLayout, TTL: time.Minute})
}

// scripts are what each fault is tried on; each tolerates the refusals
// a correct store gives.
var scripts = map[string]func(ctx context.Context, a *actors) error{
	lowers: func(ctx context.Context, a *actors) error {
		c, err := claimNode(ctx, a.as("a"), 1)
		if err != nil {
			return err
		}
		if err := a.as("a").Release(ctx, c); err != nil {
			return err
		}
		adv := nodeid.AdvanceRequest{Node: 1, Layout: teethLayout, Pool: faultNodes}
		for _, hwm := range []int64{9000, 4000} { // the second a late retry
			adv.HWM = hwm
			if _, err := a.as("admin").Advance(ctx, adv); err != nil {
				return err
			}
		}
		_, err = claimNode(ctx, a.as("b"), 1)
		return err
	},
	notMade: func(ctx context.Context, a *actors) error {
		c, err := claimNode(ctx, a.as("a"), 2)
		if err != nil {
			return err
		}
		for _, hwm := range []int64{1000, 6000} {
			if _, err := a.as("a").Renew(ctx, c, hwm); err != nil {
				return err
			}
		}
		if err := a.as("a").Release(ctx, c); err != nil {
			return err
		}
		_, err = claimNode(ctx, a.as("b"), 2)
		return err
	},
	liveTaken: func(ctx context.Context, a *actors) error {
		c, err := claimNode(ctx, a.as("a"), 3)
		if err != nil {
			return err
		}
		if _, err := a.as("a").Renew(ctx, c, 1000); err != nil {
			return err
		}
		if _, err := claimNode(ctx, a.as("b"), 3); err != nil && !errors.Is(err, nodeid.ErrNodeHeld) {
			return err
		}
		_, err = a.as("a").Renew(ctx, c, 2000)
		return err
	},
}

// TestCheckerHasTeeth runs each script on a real PostgreSQL store twice:
// as it is, where the checker must find the history linearizable, and
// wrapped with the script's fault, where it must not.
func TestCheckerHasTeeth(t *testing.T) {
	for fault, script := range scripts {
		for _, wrap := range []string{none, fault} {
			name := fault
			if wrap == none {
				name += ", store as it is"
			}
			t.Run(name, func(t *testing.T) {
				pg := newPGStore(t)
				a := &actors{t: t, store: &faulty{Store: pg.Store, fault: wrap, pg: pg},
					logs: map[string]*bytes.Buffer{}, recs: map[string]*storelog.Recorder{}}
				if err := script(context.Background(), a); err != nil {
					t.Fatal(err)
				}
				r := storecheck.Check(a.ops(), time.Minute)
				t.Log(r)
				if legal := wrap == none; r.OK() != legal {
					t.Fatalf("the checker calls the history legal: %v, want %v", r.OK(), legal)
				}
				if !r.OK() {
					assertVisualized(t, r)
				}
			})
		}
	}
}

func assertVisualized(t *testing.T, r *storecheck.Result) {
	path := filepath.Join(t.TempDir(), "ops.html")
	if err := r.Visualize(path); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Size() == 0 {
		t.Errorf("no visualization written: %v", err)
	}
}
