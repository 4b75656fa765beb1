// Package localstore keeps firn's single-machine state in a data
// directory: node HWMs, written durably ahead of use, and the layout's
// fingerprint. An OS file lock keeps a second process off the directory,
// so two processes on one machine never share a node. Store.Segments keeps
// segment mode's counters in the same directory, one file replaced and
// fsynced before each range is handed out.
//
// The default directory is fixed per user — $XDG_STATE_HOME/firn, or
// ~/.local/state/firn — never relative to the working directory, so
// commands started from different places share one lock.
package localstore
