// Package localstore keeps firn's single-machine state in a data
// directory: node HWMs, written durably ahead of use, and the layout's
// fingerprint. An OS file lock keeps a second process off the directory,
// and a claim of a node holds that node's OS lock in the user's node
// directory, which every data directory of the user shares (Config.NodeDir),
// where the node's HWM is written too: Stores given one user's node
// directory never share a node, whichever data directories and layouts
// they use, and each claim starts past every HWM any of them wrote. The
// node directory records one layout per ID bits, and refuses another
// naming of the same bits. Store.Segments keeps segment mode's counters
// in the same directory, one file replaced and fsynced before each range
// is handed out.
//
// The default directory is fixed per user — $XDG_STATE_HOME/firn, or
// ~/.local/state/firn — never relative to the working directory, so
// commands started from different places share one lock; its nodes/
// subdirectory is the default node directory.
package localstore
