package backend

import (
	"context"
	"database/sql"
	"errors"
	"net"
	"net/url"
	"strconv"
	"strings"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/firn-id/firn/internal/config"
	"github.com/firn-id/firn/internal/secret"
	"github.com/firn-id/firn/sqlstore"
)

// sqlEndpoint reads a DSN with its driver's parser and returns the
// address it dials, for messages; a DSN the driver cannot read, or a
// MySQL DSN whose parameters would have the driver send a statement firn
// does not allow (checkMySQLParams), is bad input, reported without
// quoting it. Every command reads its DSNs here before it dials.
func (o Options) sqlEndpoint(kind, dsn string) (string, error) {
	shown := Redact(kind, dsn) // also remembers the password for scrub
	if kind == "mysql" {
		cfg, err := mysql.ParseDSN(dsn)
		if err != nil {
			return "", configf("--dsn %s: not a MySQL DSN (user:password@tcp(host:3306)/db): %s", shown, secret.Scrub(err.Error()))
		}
		if err := checkMySQLParams(cfg); err != nil {
			return "", configf("--dsn %s: %s", shown, err)
		}
		return cfg.Net + " " + cfg.Addr, nil
	}
	const notPostgres = "--dsn %s: not a PostgreSQL DSN (postgres://user@host:5432/db or host=… dbname=…): %s"
	if _, _, ok := secret.Postgres(dsn); !ok {
		// pgx would take a word that is not keyword=value as part of a
		// keyword, send it to the server as a setting and pass on the
		// server's refusal, which quotes it, password and all.
		return "", configf(notPostgres, shown, "want keyword=value pairs separated by spaces, or a postgres:// URL")
	}
	cfg, err := pgconn.ParseConfig(dsn)
	if err != nil {
		// pgx's message quotes the DSN with a partial redaction: give
		// only its cause.
		cause := "cannot parse it"
		if inner := errors.Unwrap(err); inner != nil {
			cause = secret.Scrub(inner.Error())
		}
		return "", configf(notPostgres, shown, cause)
	}
	hosts := []string{net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port)))}
	for _, fb := range cfg.Fallbacks {
		if h := net.JoinHostPort(fb.Host, strconv.Itoa(int(fb.Port))); h != hosts[len(hosts)-1] {
			hosts = append(hosts, h)
		}
	}
	return strings.Join(hosts, ","), nil
}

// pingSQL waits up to the dial timeout for the database to answer.
func (o Options) pingSQL(ctx context.Context, db *sql.DB, kind, endpoint string) error {
	timeout := o.Registry.DialTimeout
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := db.PingContext(ctx); err != nil {
		if why, ok := sqlstore.RefusedConnection(err); ok {
			return configf("%s %s: %s", kind, endpoint, secret.Scrub(why))
		}
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			err = errors.Join(context.DeadlineExceeded, err)
		}
		return &UnreachableError{Store: kind, Endpoint: endpoint, Timeout: timeout, Err: err}
	}
	return nil
}

// checkEndpoints refuses an etcd endpoint that is not a URL with a host
// and port, or host:port: bad input.
func (o Options) checkEndpoints(endpoints []string) error {
	for _, ep := range endpoints {
		u, hostport, err := dialAddr(ep)
		if err != nil || u != nil && (u.Scheme != "http" && u.Scheme != "https" || u.Host == "") {
			return configf("--endpoints %s: want http://host:port or https://host:port", Redact("endpoint", ep))
		}
		host, port, err := net.SplitHostPort(hostport)
		if _, perr := strconv.ParseUint(port, 10, 16); err != nil || host == "" || perr != nil {
			return configf("--endpoints %s: want host:port, such as http://127.0.0.1:2379", Redact("endpoint", ep))
		}
	}
	return nil
}

// dialAddr is what an endpoint dials: a URL's host (u set), or the
// endpoint itself, host:port (u nil).
func dialAddr(ep string) (u *url.URL, hostport string, err error) {
	if !strings.Contains(ep, "://") {
		return nil, ep, nil
	}
	u, err = url.Parse(ep)
	if err != nil {
		return nil, "", err
	}
	return u, u.Host, nil
}

// pingEtcd waits up to the dial timeout for one of the endpoints to
// answer a read of key (in the namespace, so a role limited to it may
// read it).
func (o Options) pingEtcd(ctx context.Context, cli *clientv3.Client, endpoints []string, key string) error {
	timeout := o.Registry.DialTimeout
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	shown := make([]string, len(endpoints))
	for i, ep := range endpoints {
		shown[i] = Redact("endpoint", ep)
	}
	// A linearizable read answers only once the client reaches a member
	// that is part of a quorum.
	_, err := cli.Get(ctx, key, clientv3.WithCountOnly())
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			err = timedOut(endpoints, err)
		}
		return &UnreachableError{Store: "etcd", Endpoint: strings.Join(shown, ","), Timeout: timeout, Err: err}
	}
	return nil
}

// drivers are the database/sql driver names of the SQL backends, which
// the binary registers.
var drivers = map[string]string{"postgres": "pgx", "mysql": "mysql"}

// OpenDB opens and pings a database of kind postgres or mysql: a
// malformed DSN is bad input, a database that does not answer within
// the dial timeout an outage.
func (o Options) OpenDB(ctx context.Context, kind, dsn string) (*sql.DB, error) {
	if err := o.checkDB(kind, dsn); err != nil {
		return nil, err
	}
	endpoint, err := o.sqlEndpoint(kind, dsn)
	if err != nil {
		return nil, err
	}
	db, err := sql.Open(drivers[kind], dsn)
	if err != nil {
		return nil, configf("--dsn %s: %s", Redact(kind, dsn), secret.Scrub(err.Error()))
	}
	if err := o.pingSQL(ctx, db, kind, endpoint); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// checkDB refuses, without I/O, what OpenDB would refuse before it
// dials: a dial timeout out of range, a DSN its driver cannot read.
func (o Options) checkDB(kind, dsn string) error {
	if err := o.checkDialTimeout(); err != nil {
		return err
	}
	_, err := o.sqlEndpoint(kind, dsn)
	return err
}

// checkDialTimeout applies config.CheckDialTimeout to the dial timeout.
func (o Options) checkDialTimeout() error {
	if err := config.CheckDialTimeout(o.Registry.DialTimeout); err != nil {
		return configf("--dial-timeout %s", err)
	}
	return nil
}
