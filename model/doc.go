// Package model holds Spin (Promela) models of firn's uniqueness protocol
// and the test that checks them: nodeid.pml (leases, fenced monotone HWM
// writes, claims that read the HWM under the row lock, reservations that
// advance only on confirmed writes, one generator per lease),
// segment.pml (ranges from several stores, each issuing the residue class
// its own row records) and site.pml (sites: registries of their own that
// serve only their site's value, and a release that writes its marker,
// then reads the floor the next site starts at). Each model comes with
// mutants, one broken rule each, for which Spin must find a duplicate ID.
// docs/guarantees.md maps every property and mutant to the code. The
// package has no Go API; run the checks with `make model` (they also run
// in `make test`).
package model
