package sqlstore

import "errors"

// ErrTokenTable is returned by TinyidTokens.Start and Refresh when
// Tinyid's token table cannot be read: Start's caller must not serve
// without its tokens, and a failed Refresh keeps the set read last.
var ErrTokenTable = errors.New("sqlstore: cannot read Tinyid's token table")
