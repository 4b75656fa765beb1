package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/firn-id/firn/sqlstore"
)

var schemaUsage = `Usage: firn schema --dialect postgres|mysql [--table NAME] [--segment-table NAME] [--tinyid-table NAME]

Prints the DDL of firn's tables, for teams whose application user may not
create tables (firn creates them on first use otherwise): the node tables,
the segment tables of Leaf and Tinyid (their own DDL for MySQL, its
equivalent for PostgreSQL), and firn's own segment table.

  --dialect D            postgres or mysql (MariaDB)
  --table NAME           the node table (default firn_nodes); its namespace
                         table is NAME_namespaces
  --segment-table NAME   Leaf's segment table (default leaf_alloc)
  --tinyid-table NAME    Tinyid's segment table (default tiny_id_info)
`

func runSchema(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("schema", flag.ContinueOnError)
	dialect := fs.String("dialect", "", "")
	table := fs.String("table", "firn_nodes", "")
	segTable := fs.String("segment-table", "leaf_alloc", "")
	tinyTable := fs.String("tinyid-table", "tiny_id_info", "")
	rest, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usagef("unexpected argument %q; usage: firn schema --dialect postgres|mysql", rest[0])
	}
	if *dialect == "" {
		return usagef("--dialect is required: postgres or mysql")
	}
	d, err := sqlstore.ParseDialect(*dialect)
	if err != nil {
		return usagef("--dialect %q: want postgres or mysql", *dialect)
	}
	ddl, err := sqlstore.Schema(d, *table)
	if err != nil {
		return usagef("--table: %s", err)
	}
	seg, err := sqlstore.SegmentSchema(d, *segTable)
	if err != nil {
		return usagef("--segment-table: %s", err)
	}
	tiny, err := sqlstore.TinyidSchema(d, *tinyTable)
	if err != nil {
		return usagef("--tinyid-table: %s", err)
	}
	own, _ := sqlstore.SetSchema(d, "firn_segments")
	_, err = fmt.Fprintf(stdout, "-- node IDs and their high-water marks\n%s\n-- segments, Meituan Leaf's table (--segments leaf)\n%s\n"+
		"-- segments, Didi Tinyid's table (--segments tinyid)\n%s\n-- segments, firn's own table (--segments set)\n%s", ddl, seg, tiny, own)
	return err
}
