// Package migrate plans, and applies, a switch to firn from a previous
// system's database: Meituan Leaf (leaf_alloc), Didi Tinyid (tiny_id_info
// and tiny_id_token) or Baidu uid-generator (WORKER_NODE).
//
// Check reads the old tables — it writes nothing — and returns a Plan: the
// segment rows firn will serve from and their first IDs, the snowflake
// floor (the largest ID the old system issued, given or read with
// MAX over a column) decoded with the old layout, the node IDs the old
// system may still hold, the privileges firn will need, and what could not
// be determined. Plan.Apply records the floor: it first stops
// uid-generator from handing out a worker ID firn serves, then moves the
// HWM of the nodes firn will take past the floor in the registry it is
// given, so no firn ID can fall below an ID the old system issued.
//
// The caller opens the database with a driver; this package imports none,
// and reads the database's errors through sqlstore.Classify.
package migrate
