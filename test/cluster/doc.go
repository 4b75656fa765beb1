// Package cluster is firn's fault harness: it builds firn from the tree,
// starts a node store on loopback ports (Config.Store: a real 3-member
// etcd, a PostgreSQL or MariaDB server of its own, or a 3-member ZooKeeper
// ensemble) and several `firn serve` processes on it, each also serving a
// segment tag from a set of two databases (PostgreSQL and MariaDB, one
// residue class each) through fault proxies of its own, and, beside them
// on the same node pool (Config.Embedded), processes of cmd/embedded, an
// application that embeds firn through package ids and hands its IDs out
// on firn serve's batch route; it drives load over HTTP and through the
// Go client, injects faults with the production build (kill -9, SIGSTOP
// past the lease TTL, a pause just after an HWM write, a partition from
// the node store, the store crashed — etcd's or ZooKeeper's leader, the
// database server — rolling restarts, a process cut off from the segment
// databases, the databases down for all, one of the two down; kill -9,
// SIGSTOP and the partition also on each embedding process) and records
// every request to a history that package history checks. Every process
// runs the test build, which records its node-store operations for
// package storecheck's linearizability check, unless
// FIRN_CHAOS_BUILD=production (IDs checked, no store history).
//
// A cluster can also be one site of several (Config.Site;
// docs/operations.md, "Several sites"): its store is the site's
// registry, its processes carry the site's setting on SiteLayout and
// reach a ledger shared by the sites (StartLedger, a 3-member etcd of its
// own) through fault proxies of their own, and Start claims the site's
// value with `firn site claim` first. TestChaosSites runs two such sites
// on etcd under load from both, with every fault above that hits firn
// serve or its node store on each site in turn (a site's processes serve
// no segment tag and none embeds firn), plus the site cut off from the
// ledger (Faults.LedgerCut) and the ledger's leader killed
// (Faults.LedgerCrash), and checks both sites' histories as one: no ID
// twice over the two, each carrying its site's value.
//
// It is a module of its own so that library users do not inherit it;
// `make chaos-short` and `make chaos` run it.
package cluster
