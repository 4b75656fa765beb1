package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// TinyidTokenOptions configures TinyidTokens. The zero value means the
// defaults.
type TinyidTokenOptions struct {
	// Table is Tinyid's token table. Default "tiny_id_token".
	Table string
	// Every is how often the table is read again. Default one minute, as
	// Tinyid's @Scheduled(cron = "0 0/1 * * * ?").
	Every time.Duration
	// MissEvery bounds the reads a token not in the set may cause: at
	// most one per MissEvery. Default one second (firn's own addition;
	// Tinyid reads only on its schedule).
	MissEvery time.Duration
	// Timeout bounds Start's read and each scheduled one. Default 5
	// seconds.
	Timeout time.Duration
	// Log receives the reads that fail, at most one per MissEvery besides
	// the scheduled ones (never a token).
	// Default slog.Default().
	Log *slog.Logger
}

// TinyidTokens is Didi Tinyid's tiny_id_token table, read as Tinyid's
// TinyIdTokenServiceImpl reads it: every row's token and biz_type, held
// in memory; a token may use the bizTypes of its rows. The table is read
// at Start (an unreadable table is an error), then every minute, and on
// a token not in the set at most once a second. A read that fails keeps
// the last set read.
type TinyidTokens struct {
	db      *sql.DB
	dialect Dialect
	opt     TinyidTokenOptions

	set     atomic.Pointer[tokenSet]
	err     atomic.Pointer[error] // the last read's error, nil after a good one
	miss    chan struct{}         // a semaphore: one read on a miss at a time
	lastMis time.Time             // the last read on a miss, under miss

	started   bool
	stop      context.CancelFunc
	done      chan struct{}
	closeOnce sync.Once
}

// tokenSet maps a token to the bizTypes it may use.
type tokenSet map[string]map[string]bool

// NewTinyidTokens returns the reader of Tinyid's token table in db. It
// does no I/O; Start reads the table and starts the refresh loop.
func NewTinyidTokens(db *sql.DB, d Dialect, opt TinyidTokenOptions) (*TinyidTokens, error) {
	if opt.Table == "" {
		opt.Table = "tiny_id_token"
	}
	if err := checkTable(opt.Table); err != nil {
		return nil, err
	}
	if d != Postgres && d != MySQL {
		return nil, fmt.Errorf("sqlstore: unknown dialect %d", d)
	}
	if opt.Every == 0 {
		opt.Every = time.Minute
	}
	if opt.MissEvery == 0 {
		opt.MissEvery = time.Second
	}
	if opt.Timeout == 0 {
		opt.Timeout = 5 * time.Second
	}
	if opt.Every < 0 || opt.MissEvery < 0 || opt.Timeout < 0 {
		return nil, fmt.Errorf("sqlstore: token table %s: negative interval", opt.Table)
	}
	if opt.Log == nil {
		opt.Log = slog.Default()
	}
	return &TinyidTokens{db: db, dialect: d, opt: opt, miss: make(chan struct{}, 1), done: make(chan struct{})}, nil
}

// Table returns the name of the token table.
func (t *TinyidTokens) Table() string { return t.opt.Table }

// Start reads the table, waiting at most Timeout, and returns
// ErrTokenTable when it cannot be read: a server must not start without
// its tokens, which would let every token through, or none. The error
// says how to create a missing table, or (ErrDenied) which grant the
// account lacks. Then it reads the table again every Every until Close.
// It is called once.
func (t *TinyidTokens) Start(ctx context.Context) error {
	t.started = true
	rctx, cancel := context.WithTimeout(ctx, t.opt.Timeout)
	defer cancel()
	if err := t.Refresh(rctx); err != nil {
		close(t.done)
		if !errors.Is(err, ErrDenied) { // the table is there; the account may not read it
			err = fmt.Errorf("%w; create Tinyid's table (its tinyid-server/db.sql)", err)
		}
		return err
	}
	loop, stop := context.WithCancel(context.Background())
	t.stop = stop
	go t.loop(loop)
	return nil
}

func (t *TinyidTokens) loop(ctx context.Context) {
	defer close(t.done)
	tick := time.NewTicker(t.opt.Every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		rctx, cancel := context.WithTimeout(ctx, t.opt.Timeout)
		if err := t.Refresh(rctx); err != nil && ctx.Err() == nil {
			t.opt.Log.Warn("tinyid tokens: keeping the last set read", "table", t.opt.Table, "err", err)
		}
		cancel()
	}
}

// Refresh reads the table now. On failure the set read last stays in
// use, and Err returns the error until a read succeeds.
func (t *TinyidTokens) Refresh(ctx context.Context) error {
	set, err := t.read(ctx)
	if err != nil {
		err = fmt.Errorf("%w: %s: %w", ErrTokenTable, t.opt.Table, err)
		t.err.Store(&err)
		return err
	}
	t.set.Store(&set)
	t.err.Store(nil)
	return nil
}

// read is Tinyid's TinyIdTokenDAOImpl.selectAll, of the two columns
// canVisit reads.
func (t *TinyidTokens) read(ctx context.Context) (tokenSet, error) {
	q := "SELECT token, biz_type FROM " + t.opt.Table
	if t.dialect == MySQL {
		q = strings.ReplaceAll(q, t.opt.Table, "`"+t.opt.Table+"`")
	}
	rows, err := t.db.QueryContext(ctx, q)
	if err != nil {
		return nil, refusal(ctx, t.db, t.dialect, ModeTinyid, Tables{TinyidTokens: t.opt.Table}, t.opt.Table, "SELECT", err)
	}
	defer rows.Close()
	set := tokenSet{}
	for rows.Next() {
		var token, bizType sql.NullString
		if err := rows.Scan(&token, &bizType); err != nil {
			return nil, err
		}
		// canVisit refuses an empty token or bizType: such rows grant nothing.
		if token.String == "" || bizType.String == "" {
			continue
		}
		if set[token.String] == nil {
			set[token.String] = map[string]bool{}
		}
		set[token.String][bizType.String] = true
	}
	return set, rows.Err()
}

// Err returns the error of the last read, or nil if it succeeded.
func (t *TinyidTokens) Err() error {
	if p := t.err.Load(); p != nil {
		return *p
	}
	return nil
}

// Allows reports whether token may use bizType (Tinyid's canVisit), and
// whether token is in the table at all. A token not allowed makes the
// table be read again first, unless a miss read it less than MissEvery
// ago; ctx bounds that read, and its failure keeps the last set.
func (t *TinyidTokens) Allows(ctx context.Context, bizType, token string) (allowed, known bool) {
	if token == "" {
		return false, false
	}
	if allowed, known = t.lookup(bizType, token); allowed || bizType == "" {
		return allowed, known
	}
	select {
	case t.miss <- struct{}{}:
	case <-ctx.Done():
		return allowed, known
	}
	if now := time.Now(); now.Sub(t.lastMis) >= t.opt.MissEvery {
		t.lastMis = now
		if err := t.Refresh(ctx); err != nil && ctx.Err() == nil {
			t.opt.Log.Warn("tinyid tokens: keeping the last set read", "table", t.opt.Table, "err", err)
		}
	}
	<-t.miss
	return t.lookup(bizType, token)
}

func (t *TinyidTokens) lookup(bizType, token string) (allowed, known bool) {
	p := t.set.Load()
	if p == nil {
		return false, false
	}
	types, known := (*p)[token]
	return types[bizType], known
}

// Close stops the refresh loop and waits for it. It is idempotent.
func (t *TinyidTokens) Close(ctx context.Context) error {
	t.closeOnce.Do(func() {
		switch {
		case t.stop != nil:
			t.stop()
		case !t.started:
			close(t.done) // never started: no loop to wait for
		}
	})
	select {
	case <-t.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// TokenBizTypes reads Tinyid's token table as TinyidTokens does and
// returns the bizTypes its tokens cover, sorted.
func TokenBizTypes(ctx context.Context, db *sql.DB, d Dialect, table string) ([]string, error) {
	t, err := NewTinyidTokens(db, d, TinyidTokenOptions{Table: table})
	if err != nil {
		return nil, err
	}
	set, err := t.read(ctx)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrTokenTable, t.opt.Table, err)
	}
	var out []string
	for _, biz := range set {
		for b := range biz {
			if !slices.Contains(out, b) {
				out = append(out, b)
			}
		}
	}
	slices.Sort(out)
	return out, nil
}
