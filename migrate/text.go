package migrate

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/firn-id/firn/segment"
	"github.com/firn-id/firn/sqlstore"
)

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

// Text is the plan written for the operator who makes the switch: the
// privileges tried, the segment rows firn serves and why they cannot
// collide with the old system's, the snowflake floor and the nodes to
// reserve, what could not be determined, and what Apply wrote. after are
// the node table's privileges read again once Apply wrote it, if it did.
// An error's message is written on one line, as it is.
func (p *Plan) Text(after []sqlstore.PrivilegeCheck) string {
	var b strings.Builder
	if len(p.Privileges) > 0 {
		when := "tried"
		if len(p.Applied) > 0 {
			when = "read before --apply wrote anything, tried"
		}
		fmt.Fprintf(&b, "\nprivileges firn serve (and --apply) needs, %s with statements that change no row:\n", when)
		writePrivileges(&b, p.Privileges)
	}
	p.writeSegments(&b)
	p.writeSnowflake(&b)
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
	return b.String()
}

// oneLine is a message on one line.
func oneLine(s string) string { return strings.ReplaceAll(s, "\n", "; ") }

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

func (p *Plan) writeSegments(b *strings.Builder) {
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
	if p.From == Tinyid {
		if len(p.TokenBizTypes) == 0 {
			b.WriteString("  tokens: the token table grants no bizType: with segments.check_tokens every token= is refused\n")
		} else {
			b.WriteString("  tokens: the token table covers bizTypes " + strings.Join(p.TokenBizTypes, ", ") +
				"; firn checks token= against it (segments.check_tokens)\n")
		}
	}
}

// writeSamples writes each sample with its verdict; node names the
// system's word for the node field.
func writeSamples(b *strings.Builder, samples []Sample, node string) {
	for _, s := range samples {
		verdict := "fits the layout"
		if s.Verdict != "" {
			verdict = "IMPLAUSIBLE: " + s.Verdict
		}
		fmt.Fprintf(b, "  %s = %d: time %s, %s %d, sequence %d: %s\n", s.What, s.ID,
			s.Parts.Time.Format(timeFormat), node, s.Parts.Node, s.Parts.Sequence, verdict)
	}
}

func (p *Plan) writeSnowflake(b *strings.Builder) {
	if p.From == Tinyid && p.Floor == 0 {
		return
	}
	fmt.Fprintf(b, "\nsnowflake, layout %s:\n", p.Layout)
	if p.LayoutErr != nil {
		fmt.Fprintf(b, "  firn cannot issue IDs in this layout: %s\n", oneLine(p.LayoutErr.Error()))
	}
	writeSamples(b, p.Samples, "node")
	if p.Floor == 0 {
		b.WriteString("  floor: not determined; snowflake stays off in the configuration below\n")
	} else {
		p.writeFloor(b, time.Now())
	}
	switch {
	case len(p.Reserved) > 0:
		fmt.Fprintf(b, "  node IDs to reserve (registry.reserved_nodes): %s — the workers %s assigned, any of which may still run; "+
			"firn takes node %d first\n", joinUints(p.Reserved), p.From, p.FirstNode)
	case p.From == UIDGenerator:
		b.WriteString("  node IDs to reserve: none (WORKER_NODE is empty)\n")
	}
	p.writeOldWorkers(b)
}

// writeFloor writes the floor, and the first ID firn would issue at now.
func (p *Plan) writeFloor(b *strings.Builder, now time.Time) {
	fmt.Fprintf(b, "  floor: %d, from %s\n", p.Floor, strings.Join(p.FloorFrom, ", "))
	tick, least, err := p.FloorTicks()
	if err != nil {
		return
	}
	nowTick := uint64(0)
	if now.After(p.Layout.Epoch) {
		nowTick = uint64(now.Sub(p.Layout.Epoch) / p.Layout.Tick)
	}
	first, _ := p.Layout.Compose(max(tick, nowTick), p.FirstNode, 0)
	fmt.Fprintf(b, "  first ID: every ID firn issues is at least %d, past the floor: its nodes start at the tick after "+
		"the floor's (%s), the HWM snowflake.floor and --apply enforce; issued now on node %d the first would be about %d\n",
		least, p.Layout.TickTime(tick).Format(timeFormat), p.FirstNode, first)
}

// writeOldWorkers says how the old system hands out worker IDs after the
// switch, and what stops it.
func (p *Plan) writeOldWorkers(b *strings.Builder) {
	switch p.From {
	case UIDGenerator:
		fmt.Fprintf(b, "  restarts: uid-generator gives every start a new worker, the next AUTO_INCREMENT of %s "+
			"(DisposableWorkerIdAssigner.java lines 49–57), which may be a node firn serves; --apply first runs "+
			"ALTER TABLE %s AUTO_INCREMENT = %d, past the layout's last node %d, so a uid-generator process that starts "+
			"after it refuses to (DefaultUidGenerator.java lines 91–92: a worker ID above the layout's maximum throws), and "+
			"inserts a row %q at ID %d, which keeps the fence when MySQL 5.7 or MariaDB 10.2.3 and earlier set "+
			"AUTO_INCREMENT back to MAX(ID)+1 on a restart (uid-generator reads no row of the table); "+
			"it needs ALTER and INSERT on %s (GRANT ALTER, INSERT ON %s TO firn's account), checked above\n",
			p.OldTable, p.OldTable, p.FenceAt(), p.Layout.MaxNode(), FenceHost, p.FenceAt(), p.OldTable, p.OldTable)
	case Leaf:
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

// Text is the plan written for the operator who makes the switch, at
// now: Leaf's workers in ZooKeeper, the worker IDs to reserve and the
// floor, the IDs given decoded with Leaf's layout, and what could not be
// determined.
func (p *LeafPlan) Text(now time.Time) string {
	var b strings.Builder
	p.writeWorkers(&b, now)
	p.writeReserve(&b)
	fmt.Fprintf(&b, "layout: %s (Leaf's, SnowflakeIDGenImpl.java)\n", p.Layout)
	writeSamples(&b, p.Samples, "worker")
	b.WriteString("\nnot determined:\n")
	for _, u := range p.Unknown {
		b.WriteString("  - " + u + "\n")
	}
	return b.String()
}

func (p *LeafPlan) writeWorkers(b *strings.Builder, now time.Time) {
	fmt.Fprintf(b, "\nworkers under %s/forever (sequence %d, the worker ID ZooKeeper gives next, read before any fence", p.Root, p.Sequence)
	if p.FencedSequence != p.Sequence {
		fmt.Fprintf(b, "; now %d, fenced", p.FencedSequence)
	}
	b.WriteString("):\n")
	tw := tabwriter.NewWriter(b, 2, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "  ADDRESS\tWORKER\tLAST TIMESTAMP\tAGE\tFENCED")
	for _, w := range p.Workers {
		id := fmt.Sprint(w.ID)
		if w.ID >= LeafWorkers {
			id += " (refused by Leaf)"
		}
		at := time.UnixMilli(w.Timestamp)
		fmt.Fprintf(tw, "  %s\t%s\t%s (%d)\t%s\t%t\n", w.Addr, id, at.UTC().Format(timeFormat), w.Timestamp, now.Sub(at).Round(time.Second), w.Fenced)
	}
	_ = tw.Flush() // into a strings.Builder, which does not fail
	if len(p.Workers) == 0 {
		b.WriteString("  (none)\n")
	}
}

func (p *LeafPlan) writeReserve(b *strings.Builder) {
	fmt.Fprintf(b, "\nnode IDs to reserve in firn's registry: %s — every worker ID below min(sequence %d, %d): ZooKeeper "+
		"numbered every worker it ever created below it, deleted ones too, and any of them may still issue from a cached "+
		"workerID.properties\n", NodeRanges(p.Reserved), p.Sequence, LeafWorkers)
	last := int64(0)
	for _, w := range p.Workers {
		if !slices.Contains(p.Skipped, w.ID) {
			last = max(last, w.Timestamp)
		}
	}
	if len(p.Skipped) > 0 {
		fmt.Fprintf(b, "left out of the floor (--leaf-skip-timestamp): worker %s, reserved for good (firn admin unreserve "+
			"refuses them: their IDs are not below the floor); note: %s\n", NodeRanges(p.Skipped), p.Note)
	}
	fmt.Fprintf(b, "floor: %d (%s): the later of the last worker timestamp (%d) and the time of the check, plus Leaf's "+
		"heartbeat %s and a clock-skew margin %s; --apply computes it again at its own time and records it in the registry, "+
		"so every claim of every node starts at or after it and every firn ID is above every Leaf ID\n",
		p.Floor, time.UnixMilli(p.Floor).UTC().Format(timeFormat), last, LeafHeartbeat, LeafSkewMargin)
}

// NodeRanges writes sorted node IDs as runs, 0–2, 5, 7–9, or "none" for
// no node: how a plan and a reservation name the nodes they keep.
func NodeRanges(nodes []uint64) string {
	var parts []string
	for i := 0; i < len(nodes); {
		j := i
		for j+1 < len(nodes) && nodes[j+1] == nodes[j]+1 {
			j++
		}
		part := strconv.FormatUint(nodes[i], 10)
		if j > i {
			part += "–" + strconv.FormatUint(nodes[j], 10)
		}
		parts = append(parts, part)
		i = j + 1
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}
