package main

import (
	"fmt"

	"github.com/firn-id/firn/cmd/firn/internal/backend"
	"github.com/firn-id/firn/cmd/firn/internal/config"
	"github.com/firn-id/firn/internal/secret"
	"github.com/firn-id/firn/migrate"
	"github.com/firn-id/firn/sqlstore"
)

// planText is the plan as firn migrate check prints it, ending with
// config, a configuration that carries it. after are the privileges of
// the node table read again once --apply wrote it, if it did. Every
// password the command has seen is hidden.
func planText(p *migrate.Plan, after []sqlstore.PrivilegeCheck, config string) string {
	head := fmt.Sprintf("firn migrate check --from %s (%s)\n", p.From, p.Dialect)
	return secret.Scrub(head+p.Text(after)) + "\nconfiguration (save it as a file; firn config check --config FILE checks it):\n" + config
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
		c.Segments.Format, c.Segments.Table, c.Segments.TokenTable = format, p.OldTable, p.TokenTable
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
