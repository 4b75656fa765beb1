package migrate

import "errors"

// ErrFenceDialect is returned by FenceWorkerNodes and
// CheckWorkerNodeFence on a database other than MySQL: uid-generator's
// WORKER_NODE is MySQL's only (its AUTO_INCREMENT is the worker ID), and
// firn moves no other kind of counter for it.
var ErrFenceDialect = errors.New("migrate: uid-generator's WORKER_NODE is MySQL's only: move its ID counter past the layout's last node by hand")

// RefusedError is a plan or an apply refused because what it was given
// cannot make a switch safe: a layout whose time is not its top part, an
// apply with no floor or with an implausible one, a plan read before a
// uid-generator worker started. It is bad input, never an outage;
// nothing was written but, in the last case, the AUTO_INCREMENT fence
// (the reason says so), which a new plan's apply writes again.
type RefusedError struct {
	// Reason says what was refused and why, in one line.
	Reason string
}

// Error returns the reason, prefixed "migrate: ".
func (e *RefusedError) Error() string { return "migrate: " + e.Reason }
