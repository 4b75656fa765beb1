package main

import (
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/firn-id/firn/internal/backend"
	"github.com/firn-id/firn/internal/config"
	"github.com/firn-id/firn/migrate"
)

// The printing of firn migrate check --from leaf-zookeeper's plan.

// leafPlanText is the plan as printed, ending with a configuration that
// carries it, cfg.
func leafPlanText(p *migrate.LeafPlan, f *migrateFlags, cfg string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "firn migrate check --from leaf-zookeeper: Leaf %q, %s on ZooKeeper %s\n", p.Name, p.Root, p.Servers)
	writeLeafWorkers(&b, p, time.Now())
	writeLeafReserve(&b, p)
	writeLeafSamples(&b, p)
	b.WriteString("\nnot determined:\n")
	for _, u := range p.Unknown {
		b.WriteString("  - " + u + "\n")
	}
	writeLeafSteps(&b, p, f)
	b.WriteString("\n")
	if len(p.Applied) == 0 {
		b.WriteString("nothing written (--apply fences Leaf off, then records the reservation and the floor in the registry)\n")
	}
	for _, a := range p.Applied {
		b.WriteString("applied: " + a + "\n")
	}
	b.WriteString("\nconfiguration (save it as a file; firn config check --config FILE checks it):\n" + cfg)
	return b.String()
}

func writeLeafWorkers(b *strings.Builder, p *migrate.LeafPlan, now time.Time) {
	fmt.Fprintf(b, "\nworkers under %s/forever (sequence %d, the worker ID ZooKeeper gives next, read before any fence", p.Root, p.Sequence)
	if p.FencedSequence != p.Sequence {
		fmt.Fprintf(b, "; now %d, fenced", p.FencedSequence)
	}
	b.WriteString("):\n")
	tw := tabwriter.NewWriter(b, 2, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "  ADDRESS\tWORKER\tLAST TIMESTAMP\tAGE\tFENCED")
	for _, w := range p.Workers {
		id := fmt.Sprint(w.ID)
		if w.ID >= migrate.LeafWorkers {
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

func writeLeafReserve(b *strings.Builder, p *migrate.LeafPlan) {
	fmt.Fprintf(b, "\nnode IDs to reserve in firn's registry: %s — every worker ID below min(sequence %d, %d): ZooKeeper "+
		"numbered every worker it ever created below it, deleted ones too, and any of them may still issue from a cached "+
		"workerID.properties\n", orNone(joinRanges(p.Reserved)), p.Sequence, migrate.LeafWorkers)
	last := int64(0)
	for _, w := range p.Workers {
		if !slices.Contains(p.Skipped, w.ID) {
			last = max(last, w.Timestamp)
		}
	}
	if len(p.Skipped) > 0 {
		fmt.Fprintf(b, "left out of the floor (--leaf-skip-timestamp): worker %s, reserved for good (firn admin unreserve "+
			"refuses them: their IDs are not below the floor); note: %s\n", joinRanges(p.Skipped), p.Note)
	}
	fmt.Fprintf(b, "floor: %d (%s): the later of the last worker timestamp (%d) and the time of the check, plus Leaf's "+
		"heartbeat %s and a clock-skew margin %s; --apply computes it again at its own time and records it in the registry, "+
		"so every claim of every node starts at or after it and every firn ID is above every Leaf ID\n",
		p.Floor, time.UnixMilli(p.Floor).UTC().Format(timeFormat), last, migrate.LeafHeartbeat, migrate.LeafSkewMargin)
}

func writeLeafSamples(b *strings.Builder, p *migrate.LeafPlan) {
	fmt.Fprintf(b, "layout: %s (Leaf's, SnowflakeIDGenImpl.java)\n", p.Layout)
	for _, s := range p.Samples {
		verdict := "fits the layout"
		if s.Verdict != "" {
			verdict = "IMPLAUSIBLE: " + s.Verdict
		}
		fmt.Fprintf(b, "  %s = %d: time %s, worker %d, sequence %d: %s\n", s.What, s.ID,
			s.Parts.Time.Format(timeFormat), s.Parts.Node, s.Parts.Sequence, verdict)
	}
}

// writeLeafSteps lists the operator's steps, those firn cannot take
// marked so.
func writeLeafSteps(b *strings.Builder, p *migrate.LeafPlan, f *migrateFlags) {
	b.WriteString("\nsteps (firn cannot take 1, 2 and 5):\n")
	fmt.Fprintf(b, "  1. stop every Leaf instance of %q\n", p.Name)
	fmt.Fprintf(b, "  2. on EVERY Leaf host delete java.io.tmpdir/%s/leafconf/{port}/workerID.properties: any start error "+
		"of Leaf falls back to it and issues on the cached worker ID past every fence firn writes\n", p.Name)
	switch err := f.stores.CheckReserves(); {
	case len(p.Applied) > 0:
		b.WriteString("  3. --apply: done (below)\n")
	case err != nil:
		fmt.Fprintf(b, "  3. --apply with a registry that keeps the reservation: %s\n", err)
	default:
		fmt.Fprintf(b, "  3. run this command again with --apply: it records the reservation in %s\n", f.stores.Describe())
	}
	b.WriteString("  4. run firn serve with the configuration below\n")
	fmt.Fprintf(b, "  5. never delete %s: without forever a Leaf instance started later takes worker 0 again, and the fence "+
		"and firn's marker go with it\n", p.Root)
	b.WriteString("  serving one of Leaf's worker IDs from firn is a per-node opt-in after step 2: firn admin unreserve --node N " +
		"--confirm-caches-deleted --note TEXT\n")
}

// leafConfig is a configuration for firn serve: Leaf's layout on the
// registry. The reservation and the floor are in the registry, not here.
func leafConfig(f *migrateFlags) (string, error) {
	c := config.Default()
	c.Layout.Preset, c.Registry = migrate.Leaf.Layout(), f.stores.Registry
	out, err := c.Excerpt(backend.Redact, config.Excerpt{Keep: []string{"layout.preset", "snowflake.enabled"},
		Comments: map[string]string{"snowflake": "# Leaf's worker IDs and the floor: in the registry itself (--apply), for every process on it"}})
	return string(out), err
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
