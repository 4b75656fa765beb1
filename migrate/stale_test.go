package migrate_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/firn-id/firn/internal/legacytest"
	"github.com/firn-id/firn/migrate"
	"github.com/firn-id/firn/nodeid/nodeidtest"
	"github.com/firn-id/firn/snowflake"
)

// TestApplyStalePlanWorkerStartedAfterCheck: uid-generator gives every
// start the next AUTO_INCREMENT of WORKER_NODE. A start between Check's
// read of WORKER_NODE and Apply's fence (MaxID's full scan of a large
// table can take minutes) gets worker 4, which the plan does not reserve.
// Apply must refuse before advancing anything: otherwise it advances
// worker 4 as one of "the lowest others" and the configuration lets firn
// take the node that uid-generator process issues on.
func TestApplyStalePlanWorkerStartedAfterCheck(t *testing.T) {
	db := newDatabase(t, "mysql")
	exec(t, db.admin, legacytest.UidgenTable("WORKER_NODE", 3)...)
	l, _ := snowflake.Preset("baidu")
	l.TimeBits, l.Node[0].Bits = 29, 21
	floor, _ := l.Compose(uint64(time.Since(l.Epoch)/time.Second), 3, 100)
	exec(t, db.admin, "CREATE TABLE orders (id BIGINT PRIMARY KEY)", fmt.Sprintf("INSERT INTO orders VALUES (%d)", floor))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	p, err := migrate.Check(ctx, db.admin, migrate.Options{From: migrate.UIDGenerator, Dialect: db.dialect, Layout: l,
		MaxIDFrom: []migrate.Column{{Table: "orders", Column: "id"}}})
	if err != nil {
		t.Fatal(err)
	}
	// An old instance starts after the plan was made, before Apply.
	exec(t, db.admin, strings.Split(legacytest.UidgenTable("WORKER_NODE", 4)[4], "\x00")[0])
	var worker uint64
	if err := db.admin.QueryRow("SELECT MAX(ID) FROM WORKER_NODE").Scan(&worker); err != nil {
		t.Fatal(err)
	}
	opened := false
	err = p.Apply(ctx, db.admin, applyOptions(l, nodeidtest.NewMemStore(), &opened))
	if err == nil && !slices.Contains(p.Reserved, worker) {
		t.Errorf("Apply of a plan read before worker %d started succeeded; reserved %v, first node %d: firn may take the node "+
			"a running uid-generator issues on", worker, p.Reserved, p.FirstNode)
	}
	var re *migrate.RefusedError
	if !errors.As(err, &re) || !strings.Contains(err.Error(), fmt.Sprintf("worker %d ", worker)) || opened {
		t.Errorf("Apply of a stale plan = %v, registry opened %t; want a *RefusedError naming worker %d, no node advanced", err, opened, worker)
	}
}

// TestApplyFenceHeldByARow: MySQL 5.7 and earlier, and MariaDB before
// 10.2.4, set a table's AUTO_INCREMENT back to MAX(ID)+1 on a restart,
// which would give the next uid-generator start worker 4 again. Apply
// leaves a row at the fence, so MAX(ID)+1 is past the layout's last node
// too; a second Apply keeps one row.
func TestApplyFenceHeldByARow(t *testing.T) {
	db := newDatabase(t, "mysql")
	exec(t, db.admin, legacytest.UidgenTable("WORKER_NODE", 3)...)
	l, _ := snowflake.Preset("baidu")
	l.TimeBits, l.Node[0].Bits = 29, 21
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	floor, _ := l.Compose(uint64(time.Since(l.Epoch)/time.Second), 3, 100)
	p, err := migrate.Check(ctx, db.admin, migrate.Options{From: migrate.UIDGenerator, Dialect: db.dialect, Layout: l, Floor: floor})
	if err != nil {
		t.Fatal(err)
	}
	opened := false
	for range 2 {
		if err := p.Apply(ctx, db.admin, applyOptions(l, nodeidtest.NewMemStore(), &opened)); err != nil {
			t.Fatal(err)
		}
	}
	var highest, rows uint64
	if err := db.admin.QueryRow("SELECT MAX(ID), COUNT(*) FROM WORKER_NODE").Scan(&highest, &rows); err != nil {
		t.Fatal(err)
	}
	if highest != l.MaxNode()+1 || rows != 4 {
		t.Errorf("after two applies WORKER_NODE has %d rows, the highest ID %d; want 4, the highest %d (the layout's last node + 1), "+
			"so that MAX(ID)+1 after a restart is past the layout", rows, highest, l.MaxNode()+1)
	}
	exec(t, db.admin, strings.Split(legacytest.UidgenTable("WORKER_NODE", 4)[4], "\x00")[0])
	if err := db.admin.QueryRow("SELECT MAX(ID) FROM WORKER_NODE").Scan(&highest); err != nil {
		t.Fatal(err)
	}
	if highest <= l.MaxNode() {
		t.Errorf("a uid-generator start after Apply got worker %d, within the layout's %d", highest, l.MaxNode())
	}
}
