package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/firn-id/firn/sqlstore"
)

var schemaUsage = `Usage: firn schema --dialect postgres|mysql [--table NAME]

Prints the DDL of the node tables, for teams whose application user may not
create tables (firn creates them on first use otherwise).

  --dialect D    postgres or mysql (MariaDB)
  --table NAME   the node table (default firn_nodes); its namespace table
                 is NAME_namespaces
`

func runSchema(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("schema", flag.ContinueOnError)
	dialect := fs.String("dialect", "", "")
	table := fs.String("table", "firn_nodes", "")
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
	_, err = fmt.Fprint(stdout, ddl)
	return err
}
