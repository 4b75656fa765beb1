package history

import "errors"

// ErrBadRecord is returned by Scan for a line that is not a record of a
// known kind.
var ErrBadRecord = errors.New("history: bad record")
