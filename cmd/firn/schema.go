package main

import (
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/firn-id/firn/cmd/firn/internal/config"
	"github.com/firn-id/firn/sqlstore"
	"github.com/firn-id/firn/store"
)

var schemaUsage = `Usage: firn schema --dialect postgres|mysql [--mode MODE] [--grantee USER] [table flags] [--config FILE]
       firn schema --store zookeeper [--namespace PATH] [--zk-digest-file FILE] [--config FILE]

Prints, for each way firn uses a database, the DDL of its tables, the
statements firn runs on them with the privileges each needs, and the GRANT
statements that allow exactly those: for teams whose application user may
not create tables (firn creates a missing table on first use otherwise,
and never runs CREATE on a table that exists) or holds only the privileges
of the original system. Each mode touches its own tables only.

  --dialect D            postgres or mysql (MariaDB)
  --mode MODE            one mode (default: all of them):
                         nodes   snowflake node IDs (--store postgres|mysql;
                                 a program embedding package ids)
                         leaf    segments on Meituan Leaf's table (--segments leaf)
                         tinyid  segments on Didi Tinyid's table and its tokens
                                 (--segments tinyid)
                         set     segments on firn's own table (--segments set)
                         ledger  the ledger of site values (--ledger-store
                                 postgres|mysql): firn site's GRANTs, and the
                                 read access a site's firn serve needs
  --grantee USER         the account the GRANTs name, as the database spells
                         it (default firn; on MySQL 'firn'@'%')
  --table NAME           the node table (default firn_nodes); its namespace
                         table is NAME_namespaces
  --segment-table NAME   Leaf's segment table (default leaf_alloc)
  --tinyid-table NAME    Tinyid's segment table (default tiny_id_info)
  --token-table NAME     Tinyid's token table (default tiny_id_token)
  --set-table NAME       firn's own segment table (default firn_segments)
  --config FILE          firn serve's configuration file (docs/config.md): its
                         registry.table and segments.token_table apply, FIRN_…
                         variables override them, flags override both

With --store zookeeper it prints ZooKeeper's equivalent: every znode firn
creates under the namespace (default /firn/default), persistent or
ephemeral, with the ACL it sets — the digest identity's alone with
--zk-digest-file or FIRN_ZOOKEEPER_DIGEST (its password never shown),
anyone's otherwise — for an operator who creates the namespace beforehand
or checks its ACLs. ZooKeeper holds no segments: --dialect and --mode do
not apply.
`

// modeTitles say what each mode is, in firn schema's headings.
var modeTitles = map[sqlstore.Mode]string{
	sqlstore.ModeNodes:  "node IDs and their high-water marks (--store postgres|mysql, snowflake on)",
	sqlstore.ModeLeaf:   "segments, Meituan Leaf's table (--segments leaf)",
	sqlstore.ModeTinyid: "segments, Didi Tinyid's table and its tokens (--segments tinyid)",
	sqlstore.ModeSet:    "segments, firn's own table (--segments set)",
	sqlstore.ModeLedger: "the ledger of site values (--ledger-store postgres|mysql): firn site writes it, a site's firn serve reads it",
}

// schemaUses are the settings firn schema takes: the node table and
// Tinyid's token table are serve's; the segment tables are named one per
// format here, as every mode is printed.
var schemaUses = []string{"registry.table", "segments.token_table", "registry.store", "registry.namespace", "zookeeper.digest_file"}

// schemaOwn are firn schema's own flags.
type schemaOwn struct {
	dialect, mode, grantee *string
	tables                 sqlstore.Tables
}

// schemaFlagSet is firn schema's flag set, bound to cfg.
func schemaFlagSet(cfg *config.Config) (*flag.FlagSet, *schemaOwn) {
	fs := flag.NewFlagSet("schema", flag.ContinueOnError)
	bindConfig(fs, cfg, schemaUses...)
	o := &schemaOwn{dialect: fs.String("dialect", "", ""), mode: fs.String("mode", "", ""), grantee: fs.String("grantee", "", "")}
	fs.StringVar(&o.tables.Leaf, "segment-table", "leaf_alloc", "")
	fs.StringVar(&o.tables.Tinyid, "tinyid-table", "tiny_id_info", "")
	fs.StringVar(&o.tables.Set, "set-table", "firn_segments", "")
	return fs, o
}

func runSchema(args []string, stdout io.Writer) error {
	cfg, err := loadFor(args, schemaUses...)
	if err != nil {
		return err
	}
	fs, own := schemaFlagSet(cfg)
	dialect, mode, grantee := own.dialect, own.mode, own.grantee
	rest, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	t := own.tables
	t.Nodes, t.TinyidTokens = cfg.Registry.Table, cfg.Segments.TokenTable
	if t.Nodes == "" { // the store's default, as serve's
		d, _ := sqlstore.Tables{}.WithDefaults()
		t.Nodes = d.Nodes
	}
	if len(rest) > 0 {
		return extraArg("schema", rest[0])
	}
	if schema, of, ok, err := storeOf(cfg).Schema(); ok {
		k, _ := store.Lookup(cfg.Registry.Store)
		if *dialect != "" || *mode != "" {
			return usagef("--store %s: --dialect and --mode are for SQL databases; %s's schema is %s", k.Name, k.Title, of)
		}
		if err != nil {
			return err
		}
		_, err = io.WriteString(stdout, schema)
		return err
	}
	if *dialect == "" {
		return usagef("--dialect is required: postgres or mysql")
	}
	d, err := sqlstore.ParseDialect(*dialect)
	if err != nil {
		return usagef("--dialect %q: want postgres or mysql", *dialect)
	}
	modes := sqlstore.Modes
	if *mode != "" {
		m, err := sqlstore.ParseMode(*mode)
		if err != nil {
			return usagef("--mode %q: want nodes, leaf, tinyid or set", *mode)
		}
		modes = []sqlstore.Mode{m}
	}
	if *grantee == "" {
		*grantee = map[sqlstore.Dialect]string{sqlstore.Postgres: "firn", sqlstore.MySQL: "'firn'@'%'"}[d]
	}
	var b strings.Builder
	for _, m := range modes {
		if err := writeMode(&b, d, m, t, *grantee); err != nil {
			return err
		}
	}
	_, err = io.WriteString(stdout, b.String())
	return err
}

// writeMode writes one mode's DDL, statements and GRANTs.
func writeMode(b *strings.Builder, d sqlstore.Dialect, m sqlstore.Mode, t sqlstore.Tables, grantee string) error {
	ddl, err := sqlstore.ModeSchema(d, m, t)
	if err != nil {
		return usagef("%s: %s", modeTableFlag[m], err)
	}
	uses, err := sqlstore.Statements(m, t)
	if err != nil {
		return usagef("%s", err)
	}
	serve, admin, err := sqlstore.Grants(d, m, t, grantee)
	if err != nil {
		return usagef("%s", err)
	}
	fmt.Fprintf(b, "-- mode %s: %s\n%s", m, modeTitles[m], ddl)
	if m == sqlstore.ModeTinyid {
		fmt.Fprintf(b, "-- Tinyid's token table %s is Tinyid's own (tinyid-server/db.sql); firn only reads it\n", t.TinyidTokens)
	}
	b.WriteString("-- statements firn runs, in short (… for what a dialect varies; on MySQL a tag is also\n-- matched byte for byte, CAST(… AS BINARY)), and the privileges each needs:\n")
	for _, u := range uses {
		fmt.Fprintf(b, "--   %s on %s, by %s:\n--       %s\n", strings.Join(u.Privileges, ", "), u.Table, u.By, u.Statement)
	}
	fmt.Fprintf(b, "-- what %s in mode %s:\n%s\n", sqlstore.ServingNeeds(m), m, strings.Join(serve, "\n"))
	if len(admin) > 0 {
		fmt.Fprintf(b, "-- and what %s:\n%s\n", sqlstore.AdminAdds(m), strings.Join(admin, "\n"))
	}
	if d == sqlstore.Postgres {
		b.WriteString("-- (and USAGE on the tables' schema, which every role holds on public)\n")
	}
	b.WriteString("\n")
	return nil
}

// modeTableFlag is the flag naming each mode's table, for messages.
var modeTableFlag = map[sqlstore.Mode]string{sqlstore.ModeNodes: "--table", sqlstore.ModeLeaf: "--segment-table",
	sqlstore.ModeTinyid: "--tinyid-table", sqlstore.ModeSet: "--set-table"}
