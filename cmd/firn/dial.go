package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"github.com/firn-id/firn/internal/config"
	"io"
	"log"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/firn-id/firn/sqlstore"
)

func init() {
	// The MySQL driver logs to standard error on its own ("packets.go:
	// read: connection refused"); firn reports one line instead.
	_ = mysql.SetLogger(log.New(io.Discard, "", 0))
}

// unreachableError is a store that refused or did not answer within the
// dial timeout: an outage, so the command exits 1. Its message names the
// store's address (never a password) and the cause.
type unreachableError struct {
	store    string // postgres, mysql, etcd
	endpoint string // host:port, or the etcd endpoints, redacted
	timeout  time.Duration
	err      error
}

func (e *unreachableError) Error() string {
	if errors.Is(e.err, context.DeadlineExceeded) {
		return fmt.Sprintf("%s %s: no answer within %s (--dial-timeout)", e.store, e.endpoint, e.timeout)
	}
	return fmt.Sprintf("%s %s: unreachable: %s", e.store, e.endpoint, scrub(e.err.Error()))
}

func (e *unreachableError) Unwrap() error { return e.err }

// sqlEndpoint reads a DSN with its driver's parser and returns the
// address it dials, for messages; a DSN the driver cannot read is bad
// input, reported without quoting it.
func sqlEndpoint(kind, dsn string) (string, error) {
	shown := redact(kind, dsn) // also remembers the password for scrub
	if kind == "mysql" {
		cfg, err := mysql.ParseDSN(dsn)
		if err != nil {
			return "", usagef("--dsn %s: not a MySQL DSN (user:password@tcp(host:3306)/db): %s", shown, scrub(err.Error()))
		}
		return cfg.Net + " " + cfg.Addr, nil
	}
	cfg, err := pgconn.ParseConfig(dsn)
	if err != nil {
		// pgx's message quotes the DSN with a partial redaction: give
		// only its cause.
		cause := "cannot parse it"
		if inner := errors.Unwrap(err); inner != nil {
			cause = scrub(inner.Error())
		}
		return "", usagef("--dsn %s: not a PostgreSQL DSN (postgres://user@host:5432/db or host=… dbname=…): %s", shown, cause)
	}
	hosts := []string{net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port)))}
	for _, fb := range cfg.Fallbacks {
		if h := net.JoinHostPort(fb.Host, strconv.Itoa(int(fb.Port))); h != hosts[len(hosts)-1] {
			hosts = append(hosts, h)
		}
	}
	return strings.Join(hosts, ","), nil
}

// pingSQL waits up to timeout for the database to answer.
func pingSQL(db *sql.DB, kind, endpoint string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if err := db.PingContext(ctx); err != nil {
		if why, ok := sqlstore.RefusedConnection(err); ok {
			return usagef("%s %s: %s", kind, endpoint, scrub(why))
		}
		if ctx.Err() != nil {
			err = errors.Join(context.DeadlineExceeded, err)
		}
		return &unreachableError{store: kind, endpoint: endpoint, timeout: timeout, err: err}
	}
	return nil
}

// checkEndpoints refuses an etcd endpoint that is not a URL with a host
// and port, or host:port: bad input, exit 2.
func checkEndpoints(endpoints []string) error {
	for _, ep := range endpoints {
		hostport := ep
		if strings.Contains(ep, "://") {
			u, err := url.Parse(ep)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				return usagef("--endpoints %s: want http://host:port or https://host:port", redact("endpoint", ep))
			}
			hostport = u.Host
		}
		host, port, err := net.SplitHostPort(hostport)
		if _, perr := strconv.ParseUint(port, 10, 16); err != nil || host == "" || perr != nil {
			return usagef("--endpoints %s: want host:port, such as http://127.0.0.1:2379", redact("endpoint", ep))
		}
	}
	return nil
}

// pingEtcd waits up to timeout for one of the endpoints to answer a read
// of key (in the namespace, so a role limited to it may read it).
func pingEtcd(cli *clientv3.Client, endpoints []string, key string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	shown := make([]string, len(endpoints))
	for i, ep := range endpoints {
		shown[i] = redact("endpoint", ep)
	}
	// A linearizable read answers only once the client reaches a member
	// that is part of a quorum.
	_, err := cli.Get(ctx, key, clientv3.WithCountOnly())
	if err != nil {
		if ctx.Err() != nil {
			err = errors.Join(context.DeadlineExceeded, err)
		}
		return &unreachableError{store: "etcd", endpoint: strings.Join(shown, ","), timeout: timeout, err: err}
	}
	return nil
}

// openDB opens and pings a database: a malformed DSN is bad input, a
// database that does not answer within the dial timeout an outage.
func (f *storeFlags) openDB(kind, dsn string) (*sql.DB, error) {
	if err := f.checkDialTimeout(); err != nil {
		return nil, err
	}
	endpoint, err := sqlEndpoint(kind, dsn)
	if err != nil {
		return nil, err
	}
	driver := map[string]string{"postgres": "pgx", "mysql": "mysql"}[kind]
	db, err := sql.Open(driver, dsn)
	if err != nil {
		return nil, usagef("--dsn %s: %s", redact(kind, dsn), scrub(err.Error()))
	}
	if err := pingSQL(db, kind, endpoint, f.dialTimeout); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// checkDialTimeout applies config.CheckDialTimeout to --dial-timeout.
func (f *storeFlags) checkDialTimeout() error {
	if err := config.CheckDialTimeout(f.dialTimeout); err != nil {
		return usagef("--dial-timeout %s", err)
	}
	return nil
}
