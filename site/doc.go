// Package site makes a site a checked part of a deployment: a fixed value
// of the leading node fields, claimed for one site for ever in a ledger
// and recorded in the site's own registry, which enforces it on every
// claim (nodeid.Config.Site). Claim and Release are provisioning
// operations (`firn site claim`, `firn site release`): nothing here is on
// the path that issues IDs, and processes of a site never read the
// ledger. docs/operations.md, "Several sites", is the guide;
// docs/design.md §3 the argument.
package site
