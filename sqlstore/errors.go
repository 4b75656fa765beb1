package sqlstore

import (
	"errors"
	"strings"
)

// ErrTokenTable is returned by TinyidTokens.Start and Refresh when
// Tinyid's token table cannot be read: Start's caller must not serve
// without its tokens, and a failed Refresh keeps the set read last.
var ErrTokenTable = errors.New("sqlstore: cannot read Tinyid's token table")

// ErrFenceDialect is returned by FenceWorkerNodes and
// CheckWorkerNodeFence on a database other than MySQL: uid-generator's
// WORKER_NODE is MySQL's only (its AUTO_INCREMENT is the worker ID), and
// firn moves no other kind of counter for it.
var ErrFenceDialect = errors.New("sqlstore: uid-generator's WORKER_NODE is MySQL's only: move its ID counter past the layout's last node by hand")

// ErrOwnTable is returned by a Tinyid store on firn's own segment table
// (NewSetStore's): Tinyid's columns carry neither the permutation an
// opaque tag records nor its store set, so it would serve such a tag's
// counter plain beside servers that permute it.
var ErrOwnTable = errors.New("sqlstore: firn's own segment table, not Tinyid's: serve it with segments.format set")

// ErrDenied is matched by a *PrivilegeError: the database refused a
// statement for want of a privilege.
var ErrDenied = errors.New("sqlstore: permission denied")

// PrivilegeError is a statement the database refused for want of a
// privilege (Classify's Denied), with the GRANT that allows it. Its
// message is one line.
type PrivilegeError struct {
	// Statement is the statement refused, in short (see Uses).
	Statement string
	// Grant is the statement that allows it, run as the table's owner.
	Grant string
	// Err is the database's error.
	Err error
}

func (e *PrivilegeError) Error() string {
	return "sqlstore: permission denied for " + e.Statement + "; to allow it: " + e.Grant +
		" (the database: " + strings.Join(strings.Fields(e.Err.Error()), " ") + ")"
}

// Unwrap returns the database's error and ErrDenied.
func (e *PrivilegeError) Unwrap() []error { return []error{e.Err, ErrDenied} }
