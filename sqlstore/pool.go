package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"time"
)

// EmbeddedMaxOpen is the most connections Embed lets one process open at
// once: a statement, and the privilege lookup a refused statement makes
// while its transaction still holds the first.
const EmbeddedMaxOpen = 2

// Embed sets db's pool to the rule of a process that embeds firn, one of
// a fleet on one database: no connection kept open between statements
// (SetMaxIdleConns(0)), at most EmbeddedMaxOpen open at once.
//
// The rule: a node store uses the database for one short statement or
// transaction per renewal (every min(TTL, window)/3: 1 s by default) and
// per claim; database/sql's default pool keeps the connection open
// between them, so a fleet of N processes holds N connections, and one
// past the database's limit (PostgreSQL's max_connections defaults to
// 100) cannot start. Without idle connections the fleet holds
// N × (connect + statement) / interval connections on average — a few
// per thousand processes on a loopback database — and pays a connection
// per renewal instead: N / interval connections opened per second, which
// is what bounds a fleet (docs/performance.md, "Fleets"). A refused
// connection (TooManyConnections) is retried within the call's deadline.
//
// Open applies it when store.Settings.Embedded is set (package ids sets
// it); firn serve keeps database/sql's default pool, one process holding
// its connection. A *sql.DB an application hands to firn (ids.FromDB) is
// the application's: see that function for what to set.
func Embed(db *sql.DB) {
	db.SetMaxIdleConns(0)
	db.SetMaxOpenConns(EmbeddedMaxOpen)
}

// conn takes one connection of the pool for one operation (a claim, a
// renewal, a release): the database refusing it for want of a free
// connection is retried until ctx ends, since connections come free
// within milliseconds; every statement of the operation then runs on it,
// so a pool without idle connections (Embed) opens one per operation,
// not one per statement.
func (s *Store) conn(ctx context.Context) (*sql.Conn, error) {
	var c *sql.Conn
	err := retryBusy(ctx, func() error {
		var err error
		c, err = s.db.Conn(ctx)
		return err
	})
	if err != nil && ctx.Err() != nil {
		// Waited on the pool itself: the application sharing it (FromDB)
		// holds every connection it allows.
		if st := s.db.Stats(); st.MaxOpenConnections > 0 && st.InUse >= st.MaxOpenConnections {
			err = fmt.Errorf("all %d connections of the pool in use, none came free: %w", st.MaxOpenConnections, err)
		}
	}
	return c, err
}

// retryBusy runs f until it returns anything but TooManyConnections, or
// ctx ends (then f's last error), pausing 20 ms doubling to 250 ms, each
// pause drawn from its upper half so that a fleet refused at once does
// not come back at once: a refused connection costs the database what an
// accepted one does (PostgreSQL starts a process for it), so quicker
// retries would only refuse more.
func retryBusy(ctx context.Context, f func() error) error {
	pause := 20 * time.Millisecond
	for {
		err := f()
		if err == nil || Classify(err) != TooManyConnections {
			return err
		}
		t := time.NewTimer(pause/2 + rand.N(pause/2+1))
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
		pause = min(2*pause, 250*time.Millisecond)
	}
}
