package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/firn-id/firn/cmd/firn/internal/backend"
	"github.com/firn-id/firn/cmd/firn/internal/config"
	"github.com/firn-id/firn/migrate"
)

// The printing of firn migrate check --from leaf-zookeeper's plan.

// leafPlanText is the plan as printed, ending with a configuration that
// carries it, cfg.
func leafPlanText(p *migrate.LeafPlan, f *migrateFlags, cfg string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "firn migrate check --from leaf-zookeeper: Leaf %q, %s on ZooKeeper %s\n", p.Name, p.Root, p.Servers)
	b.WriteString(p.Text(time.Now()))
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
