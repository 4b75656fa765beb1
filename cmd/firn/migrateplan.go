package main

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/firn-id/firn/internal/backend"
	"github.com/firn-id/firn/internal/config"
	"github.com/firn-id/firn/migrate"
	"github.com/firn-id/firn/segment"
	"github.com/firn-id/firn/sqlstore"
)

// The printing of firn migrate check's plan (package migrate works it
// out).

// noCollision says why firn's segment IDs cannot collide with the old
// system's, per segment format.
var noCollision = map[string]string{
	"leaf": "Leaf hands out [max_id - step, max_id) after adding the step to max_id (IDAllocMapper.java lines 27 and 30), so every ID " +
		"Leaf issued or holds in a buffer is below max_id; firn reserves from the same rows with the same UPDATE, so its first ID " +
		"is max_id and its ranges stay apart from Leaf's even while Leaf's servers still run beside it.",
	"tinyid": "Tinyid hands out (max_id, max_id + step] after moving max_id under its version check (TinyIdInfoDAOImpl.java " +
		"line 37), so every ID Tinyid issued or holds is at most max_id; firn reserves from the same rows the same way, so its " +
		"first ID is the next of the row's residue class past max_id, and its ranges stay apart from Tinyid's while both run.",
}

// planText is the plan as firn migrate check prints it, ending with
// config, a configuration that carries it. after are the privileges of
// the node table read again once --apply wrote it, if it did.
func planText(p *migrate.Plan, after []sqlstore.PrivilegeCheck, config string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "firn migrate check --from %s (%s)\n", p.From, p.Dialect)
	if len(p.Privileges) > 0 {
		when := "tried"
		if len(p.Applied) > 0 {
			when = "read before --apply wrote anything, tried"
		}
		fmt.Fprintf(&b, "\nprivileges firn serve (and --apply) needs, %s with statements that change no row:\n", when)
		writePrivileges(&b, p.Privileges)
	}
	writeSegments(&b, p)
	writeSnowflake(&b, p)
	if len(p.Unknown) > 0 {
		b.WriteString("\nnot determined:\n")
		for _, u := range p.Unknown {
			b.WriteString("  - " + u + "\n")
		}
	}
	b.WriteString("\n")
	if len(p.Applied) == 0 {
		b.WriteString("nothing written (--apply records the floor)\n")
	}
	for _, a := range p.Applied {
		b.WriteString("applied: " + a + "\n")
	}
	if len(after) > 0 {
		b.WriteString("read again after --apply:\n")
		writePrivileges(&b, after)
	}
	b.WriteString("\nconfiguration (save it as a file; firn config check --config FILE checks it):\n" + config)
	return b.String()
}

// writePrivileges writes one line per check: ok, REFUSED, or UNREADABLE
// once per table.
func writePrivileges(b *strings.Builder, checks []sqlstore.PrivilegeCheck) {
	unreadable := map[string]bool{}
	for _, c := range checks {
		u := c.Use
		var pe *sqlstore.PrivilegeError
		switch {
		case unreadable[u.Table]: // said once per table
		case c.Err == nil:
			fmt.Fprintf(b, "  ok       %s on %s: %s\n", strings.Join(u.Privileges, ", "), u.Table, u.Statement)
		case errors.As(c.Err, &pe):
			fmt.Fprintf(b, "  REFUSED  %s\n", oneLine(c.Err.Error()))
		default:
			unreadable[u.Table] = true
			fmt.Fprintf(b, "  UNREADABLE %s: %s; firn creates a missing table on first use if its account may CREATE, "+
				"or its owner runs the DDL of firn schema --mode %s\n", u.Table, oneLine(c.Err.Error()), modeOfTable(u.Table))
		}
	}
}

// modeOfTable names the firn schema mode of a table the plan checked.
func modeOfTable(table string) string {
	if strings.HasPrefix(table, "firn_nodes") {
		return "nodes"
	}
	return "leaf|tinyid"
}

func writeSegments(b *strings.Builder, p *migrate.Plan) {
	format := p.From.Format()
	if format == "" {
		return
	}
	if p.NoSegments {
		fmt.Fprintf(b, "\nsegments: none: the database has no table %s, as a Leaf that runs in snowflake mode only "+
			"(leaf.segment.enable=false); the configuration serves no segments\n", p.OldTable)
		return
	}
	fmt.Fprintf(b, "\nsegments: firn serves these rows as they are (--segments %s), from the first ID shown:\n", format)
	tw := tabwriter.NewWriter(b, 2, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "  TAG\tFIRST ID\tSTEP\tDELTA\tREMAINDER")
	var refused []string
	for _, t := range p.Tags {
		first := strconv.FormatInt(t.Next, 10)
		if err := segment.CheckResidue(t.Delta, t.Remainder); err != nil {
			first = "REFUSED"
			refused = append(refused, fmt.Sprintf("  REFUSED  %s: %s: firn serve answers the tag with an error until the row is fixed\n", t.Tag, err))
		}
		fmt.Fprintf(tw, "  %s\t%s\t%d\t%d\t%d\n", t.Tag, first, t.Step, t.Delta, t.Remainder)
	}
	_ = tw.Flush() // into a strings.Builder, which does not fail
	if len(p.Tags) == 0 {
		b.WriteString("  (no rows)\n")
	}
	for _, r := range refused {
		b.WriteString(r)
	}
	b.WriteString("  why they cannot collide: " + noCollision[format] + "\n")
	if p.From == migrate.Tinyid {
		if len(p.TokenBizTypes) == 0 {
			b.WriteString("  tokens: the token table grants no bizType: with segments.check_tokens every token= is refused\n")
		} else {
			b.WriteString("  tokens: the token table covers bizTypes " + strings.Join(p.TokenBizTypes, ", ") +
				"; firn checks token= against it (segments.check_tokens)\n")
		}
	}
}

func writeSnowflake(b *strings.Builder, p *migrate.Plan) {
	if p.From == migrate.Tinyid && p.Floor == 0 {
		return
	}
	fmt.Fprintf(b, "\nsnowflake, layout %s:\n", p.Layout)
	if p.LayoutErr != nil {
		fmt.Fprintf(b, "  firn cannot issue IDs in this layout: %s\n", oneLine(p.LayoutErr.Error()))
	}
	for _, s := range p.Samples {
		verdict := "fits the layout"
		if s.Verdict != "" {
			verdict = "IMPLAUSIBLE: " + s.Verdict
		}
		fmt.Fprintf(b, "  %s = %d: time %s, node %d, sequence %d: %s\n", s.What, s.ID,
			s.Parts.Time.Format(timeFormat), s.Parts.Node, s.Parts.Sequence, verdict)
	}
	if p.Floor == 0 {
		b.WriteString("  floor: not determined; snowflake stays off in the configuration below\n")
	} else {
		fmt.Fprintf(b, "  floor: %d, from %s\n", p.Floor, strings.Join(p.FloorFrom, ", "))
		if tick, least, err := p.FloorTicks(); err == nil {
			now := time.Now()
			nowTick := uint64(0)
			if now.After(p.Layout.Epoch) {
				nowTick = uint64(now.Sub(p.Layout.Epoch) / p.Layout.Tick)
			}
			first, _ := p.Layout.Compose(max(tick, nowTick), p.FirstNode, 0)
			fmt.Fprintf(b, "  first ID: every ID firn issues is at least %d, past the floor: its nodes start at the tick after "+
				"the floor's (%s), the HWM snowflake.floor and --apply enforce; issued now on node %d the first would be about %d\n",
				least, p.Layout.TickTime(tick).Format(timeFormat), p.FirstNode, first)
		}
	}
	switch {
	case len(p.Reserved) > 0:
		fmt.Fprintf(b, "  node IDs to reserve (registry.reserved_nodes): %s — the workers %s assigned, any of which may still run; "+
			"firn takes node %d first\n", joinUints(p.Reserved), p.From, p.FirstNode)
	case p.From == migrate.UIDGenerator:
		b.WriteString("  node IDs to reserve: none (WORKER_NODE is empty)\n")
	}
	switch p.From {
	case migrate.UIDGenerator:
		fmt.Fprintf(b, "  restarts: uid-generator gives every start a new worker, the next AUTO_INCREMENT of %s "+
			"(DisposableWorkerIdAssigner.java lines 49–57), which may be a node firn serves; --apply first runs "+
			"ALTER TABLE %s AUTO_INCREMENT = %d, past the layout's last node %d, so a uid-generator process that starts "+
			"after it refuses to (DefaultUidGenerator.java lines 91–92: a worker ID above the layout's maximum throws), and "+
			"inserts a row %q at ID %d, which keeps the fence when MySQL 5.7 or MariaDB 10.2.3 and earlier set "+
			"AUTO_INCREMENT back to MAX(ID)+1 on a restart (uid-generator reads no row of the table); "+
			"it needs ALTER and INSERT on %s (GRANT ALTER, INSERT ON %s TO firn's account), checked above\n",
			p.OldTable, p.OldTable, p.FenceAt(), p.Layout.MaxNode(), migrate.FenceHost, p.FenceAt(), p.OldTable, p.OldTable)
	case migrate.Leaf:
		b.WriteString("  new Leaf servers: stop adding them. Leaf gives a server whose ip:port ZooKeeper has never seen the next " +
			"worker ID, the sequence number of a new persistent sequential node under /snowflake/{leaf.name}/forever " +
			"(SnowflakeZookeeperHolder.java lines 85–89); a server seen before keeps its own (lines 71–76). Take the workers over " +
			"with firn migrate check --from leaf-zookeeper, which fences ZooKeeper so a new Leaf server is refused, and start " +
			"no Leaf server on a new address until then\n")
	}
}

// joinUints writes 1, 2, 3.
func joinUints(vs []uint64) string {
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = strconv.FormatUint(v, 10)
	}
	return strings.Join(s, ", ")
}

// configSnippet is a configuration for firn serve that carries the plan:
// the old layout, the registry with the reserved nodes, the old segment
// table, and the floor (snowflake off without one), written as
// config.Config.Excerpt writes every configuration firn proposes.
func (f *migrateFlags) configSnippet(p *migrate.Plan) (string, error) {
	c := config.Default()
	c.Layout, c.Registry = f.layout, f.stores.Registry
	c.Registry.ReservedNodes = p.Reserved
	e := config.Excerpt{Keep: []string{"snowflake.enabled"}, Comments: map[string]string{}}
	if c.Registry.Store != f.dialect { // the registry is elsewhere: the DSN is the old database's
		c.Registry.DSN = ""
	}
	if format := p.From.Format(); format != "" && !p.NoSegments {
		c.Segments.Format, c.Segments.Table, c.Segments.TokenTable = format, f.oldTable, f.tokenTable
		e.Keep = append(e.Keep, "segments.format", "segments.table")
		if c.Registry.DSN == "" { // the segments stay in the old database
			c.Segments.Store, c.Segments.DSN = f.dialect, f.dsn
		}
	}
	if backend.Redact(f.dialect, f.dsn) != f.dsn {
		hidden := "# the DSN's password is not printed: put it back before use"
		e.Comments["registry.dsn"], e.Comments["segments.dsn"] = hidden, hidden
	}
	snowflakeOn := p.Floor != 0 && p.LayoutErr == nil
	c.Snowflake.Enabled, c.Snowflake.Floor = snowflakeOn, p.Floor
	if !snowflakeOn {
		c.Snowflake.Floor = 0
	}
	if p.From == migrate.Leaf {
		leafReach(&c, &e, p, snowflakeOn)
	}
	out, err := c.Excerpt(backend.Redact, e)
	return string(out), err
}

// leafPort is the port Leaf's clients call: leaf-server sets no
// server.port (application.properties), so Spring Boot's 8080, which
// Leaf's README uses (README.md line 52, Meituan-Dianping/Leaf 86a6441).
const leafPort = "8080"

// leafReach sets what lets Leaf's clients, which send no credentials,
// reach firn: Leaf's port on an address the reader names (config check
// refuses the placeholder until then), and anonymous grants for exactly
// the routes they call — each tag found, and snowflake IDs when served;
// never "*" or admin.
func leafReach(c *config.Config, e *config.Excerpt, p *migrate.Plan, snowflakeOn bool) {
	c.HTTP.Listen = config.AddressPlaceholder + ":" + leafPort
	e.Comments["http.listen"] = "# put the address Leaf's clients reach in place of the placeholder (0.0.0.0: every interface)"
	if snowflakeOn {
		c.Auth.Anonymous = append(c.Auth.Anonymous, "snowflake")
	}
	for _, t := range p.Tags {
		c.Auth.Anonymous = append(c.Auth.Anonymous, "tag:"+t.Tag)
	}
	e.Comments["auth.anonymous"] = "# warning: Leaf's clients send no credentials, so anyone who reaches this address may take IDs of these\n" +
		"# routes, auth.anonymous_rate requests per second per client address; restrict it with a firewall, or give tokens"
}
