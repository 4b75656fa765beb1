package legacytest

import "strings"

// LeafSampleTag is the biz_tag of Leaf's sample row: max_id 1, step 2000, so
// the first ID Leaf (and firn) issues is 1.
const LeafSampleTag = "leaf-segment-test"

// ddl is Leaf's leaf_alloc, verbatim from github.com/Meituan-Dianping/Leaf
// scripts/leaf_alloc.sql lines 3–10 (commit
// 86a6441d263497b9f9ee321de13422b9c63f0c06).
const ddl = "CREATE TABLE `leaf_alloc` (\n" +
	"  `biz_tag` varchar(128)  NOT NULL DEFAULT '',\n" +
	"  `max_id` bigint(20) NOT NULL DEFAULT '1',\n" +
	"  `step` int(11) NOT NULL,\n" +
	"  `description` varchar(256)  DEFAULT NULL,\n" +
	"  `update_time` timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP,\n" +
	"  PRIMARY KEY (`biz_tag`)\n" +
	") ENGINE=InnoDB;"

// ddlPostgres is the same table for PostgreSQL (Leaf ships MySQL's DDL
// only): the columns and defaults of leaf_alloc.sql, without MySQL's
// ON UPDATE, engine and quoting.
const ddlPostgres = `CREATE TABLE leaf_alloc (
  biz_tag     VARCHAR(128) NOT NULL DEFAULT '' PRIMARY KEY,
  max_id      BIGINT       NOT NULL DEFAULT 1,
  step        INT          NOT NULL,
  description VARCHAR(256) DEFAULT NULL,
  update_time TIMESTAMP    NOT NULL DEFAULT CURRENT_TIMESTAMP
)`

// sampleRow is Leaf's sample row, verbatim from README.md line 91 (same
// commit).
const sampleRow = "insert into leaf_alloc(biz_tag, max_id, step, description) values('leaf-segment-test', 1, 2000, 'Test leaf Segment Mode Get Id')"

// LeafTable returns the statements that create Leaf's table under the name
// table, with its sample row, for dialect "mysql" or "postgres".
func LeafTable(dialect, table string) []string {
	stmts := []string{ddl, sampleRow}
	if dialect == "postgres" {
		stmts[0] = ddlPostgres
	}
	for i, s := range stmts {
		stmts[i] = strings.ReplaceAll(s, "leaf_alloc", table)
	}
	return stmts
}
