package config

import (
	"cmp"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/firn-id/firn/node"
	"github.com/firn-id/firn/nodeid"
	"github.com/firn-id/firn/opaque"
	"github.com/firn-id/firn/snowflake"
	"github.com/firn-id/firn/store"
)

// Site is the site a process belongs to (docs/operations.md, "Several
// sites"): the node fields it fixes, the rest leased from its own
// registry. Every command that claims, reserves or advances a node takes
// it, and a namespace with a site record refuses one without it.
type Site struct {
	Name   string `yaml:"name" flag:"site" arg:"NAME" help:"the site this process belongs to (letters, digits, '.', '_' and '-'); its registry's namespace records it at firn site claim, and refuses every command without it"`
	Fields string `yaml:"fields" flag:"site-fields" arg:"F=V" help:"the node fields the site fixes, the leading ones in the layout's order, such as datacenter=3; the rest are leased from the site's registry"`
}

// Ledger is the store of the ledger of site values, which only firn site
// reads and writes: never a process that issues IDs.
type Ledger struct {
	Store     string   `yaml:"store" flag:"ledger-store" arg:"KIND" help:"firn site: the store of the ledger of site values: etcd, postgres or mysql (a store that keeps what it confirmed; never local)"`
	Endpoints []string `yaml:"endpoints" flag:"ledger-endpoints" arg:"URLS" help:"firn site: the ledger's etcd client URLs"`
	DSN       string   `yaml:"dsn" flag:"ledger-dsn" secret:"true" arg:"DSN" help:"firn site: the ledger's database, with the provisioning credentials; its password is redacted wherever firn shows it"`
	Namespace string   `yaml:"namespace" flag:"ledger-namespace" arg:"NAME" help:"firn site: the ledger's namespace (default firn-ledger, in etcd /firn/firn-ledger/)"`
	Table     string   `yaml:"table" flag:"ledger-table" arg:"NAME" help:"firn site: SQL: the ledger's table (default firn_nodes)"`
}

// Nodes reads the site into the node range it fixes in layout l: the
// zero nodeid.Site when no site is set. A name without fields, or fields
// without a name, are refused, and so are fields the layout cannot fix
// (snowflake.Layout.SiteNodes).
func (s Site) Nodes(l snowflake.Layout) (nodeid.Site, error) {
	fail := func(field, format string, args ...any) error {
		return &FieldError{Field: field, Reason: fmt.Sprintf(format, args...)}
	}
	switch {
	case s.Name == "" && s.Fields == "":
		return nodeid.Site{}, nil
	case s.Name == "":
		return nodeid.Site{}, fail("site.name", "site.fields %q is set: name the site too", s.Fields)
	case nodeid.CheckSiteName(s.Name) != nil:
		return nodeid.Site{}, fail("site.name", "%s", (&nodeid.SiteNameError{Name: s.Name}).Reason())
	case s.Fields == "":
		return nodeid.Site{}, fail("site.fields", "site %q fixes no node field: name the leading fields and their values, such as %s=0", s.Name, firstField(l))
	}
	var fixed []snowflake.FieldValue
	for _, part := range strings.Split(s.Fields, ",") {
		name, val, ok := strings.Cut(strings.TrimSpace(part), "=")
		v, err := strconv.ParseUint(val, 10, 64)
		if !ok || err != nil {
			return nodeid.Site{}, fail("site.fields", "%q: want FIELD=VALUE, comma-separated, such as %s=3", part, firstField(l))
		}
		fixed = append(fixed, snowflake.FieldValue{Name: name, Value: v})
	}
	site, err := node.Site(l, s.Name, fixed)
	var fe *snowflake.SiteFieldsError
	if errors.As(err, &fe) {
		return nodeid.Site{}, fail("site.fields", "%s", fe.Why())
	}
	return site, err
}

func firstField(l snowflake.Layout) string {
	if len(l.Node) == 0 {
		return "datacenter"
	}
	return l.Node[0].Name
}

// SiteNodes is the process's site in the configured layout (Site.Nodes):
// the zero nodeid.Site when no site is set.
func (c *Config) SiteNodes() (nodeid.Site, error) {
	if c.Site == (Site{}) {
		return nodeid.Site{}, nil
	}
	l, err := c.Layout.Snowflake()
	if err != nil {
		return nodeid.Site{}, err
	}
	return c.Site.Nodes(l)
}

// SiteSpace is the process's site in the configured layout, and the ID
// space it presents to its registry (SpaceID: the layout, opaque or
// plain), for firn site.
func (c *Config) SiteSpace() (nodeid.Site, nodeid.LayoutID, error) {
	l, err := c.Layout.Snowflake()
	if err != nil {
		return nodeid.Site{}, nodeid.LayoutID{}, err
	}
	perm, err := c.Opaque.Permutation(l)
	if err != nil {
		return nodeid.Site{}, nodeid.LayoutID{}, err
	}
	s, err := c.Site.Nodes(l)
	return s, SpaceID(l, perm), err
}

// SiteSpace is the ID space a process of site s presents to its
// registry: SpaceID's, bound to the site (nodeid.SiteLayout).
func SiteSpace(l snowflake.Layout, perm *opaque.Permutation, s nodeid.Site) nodeid.LayoutID {
	return nodeid.SiteLayout(SpaceID(l, perm), s)
}

// LedgerName names the ledger's namespace when ledger.namespace is
// empty, spelled as its store kind spells a namespace (store.Namespace):
// firn-ledger in SQL, /firn/firn-ledger/ in etcd.
const LedgerName = "firn-ledger"

// Settings are the ledger's settings as the store table reads them, in
// the section ledger.
func (g Ledger) Settings() store.Settings {
	ns := cmp.Or(g.Namespace, store.Namespace(g.Store, LedgerName))
	return store.Settings{Store: g.Store, Section: "ledger", Endpoints: g.Endpoints, DSN: g.DSN, Namespace: ns, Table: g.Table, DialTimeout: DefaultDialTimeout, Flags: flagOf}
}

// SiteStores is the number of segment stores a site serves tags from:
// those of segments.stores, or one.
func (s Segments) SiteStores() int64 { return int64(max(len(s.Stores), 1)) }
