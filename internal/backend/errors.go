package backend

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/firn-id/firn/internal/secret"
)

// ErrConfig is matched by the errors of settings that open no store —
// a store that does not exist, a DSN the driver cannot read, a database
// that answers but refuses the user — as against an outage
// (*UnreachableError). The error's own message is the one to print.
var ErrConfig = errors.New("backend: invalid configuration")

// configError is bad input: its message says what to change.
type configError struct{ msg string }

func (e *configError) Error() string { return e.msg }

func (e *configError) Is(target error) bool { return target == ErrConfig }

func configf(format string, args ...any) error {
	return &configError{msg: fmt.Sprintf(format, args...)}
}

// UnreachableError is a store that refused, did not answer within the
// dial timeout, or answered a connection with an error that is not bad
// settings (RefusedConnection's): an outage, which a server waits out. Its message names
// the store's address (never a password) and the cause.
type UnreachableError struct {
	Store    string // postgres, mysql, etcd
	Endpoint string // host:port, or the etcd endpoints, redacted
	Timeout  time.Duration
	Err      error
}

func (e *UnreachableError) Error() string {
	if errors.Is(e.Err, context.DeadlineExceeded) {
		return fmt.Sprintf("%s %s: no answer within %s (--dial-timeout)", e.Store, e.Endpoint, e.Timeout)
	}
	if answered(e.Err) {
		// The database is reachable: saying otherwise sends the operator
		// to the network when the cause is in the DSN or the server.
		return fmt.Sprintf("%s %s: answered with an error: %s", e.Store, e.Endpoint, secret.Scrub(e.Err.Error()))
	}
	return fmt.Sprintf("%s %s: unreachable: %s", e.Store, e.Endpoint, secret.Scrub(e.Err.Error()))
}

// answered reports whether err is a SQL database's own answer (a MySQL
// error number, a SQLSTATE), as against a connection that failed.
func answered(err error) bool {
	var me *mysql.MySQLError
	var se interface{ SQLState() string }
	return errors.As(err, &me) || errors.As(err, &se)
}

func (e *UnreachableError) Unwrap() error { return e.Err }

// timedOut is the cause of a store client's attempt that waited out the
// dial timeout: the refusal, when every server refused the connection
// (nothing listens there: a client that retries until its deadline would
// say only that no answer came), or else err marked as a deadline.
func timedOut(endpoints []string, err error) error {
	if r := refusedAll(endpoints); r != nil {
		return r
	}
	return errors.Join(context.DeadlineExceeded, err)
}

// refuseProbe bounds refusedAll's dials: a refusal comes back at once.
const refuseProbe = 300 * time.Millisecond

// refusedAll dials each endpoint (host:port, or a URL with one) once, in
// parallel, and returns the first refusal when every one refused; nil
// when one answered, did not answer within refuseProbe, or is not a
// host:port this can dial.
func refusedAll(endpoints []string) error {
	if len(endpoints) == 0 {
		return nil
	}
	addrs := make([]string, len(endpoints))
	for i, ep := range endpoints {
		_, hostport, err := dialAddr(ep)
		if err != nil {
			return nil
		}
		if _, _, err := net.SplitHostPort(hostport); err != nil {
			return nil
		}
		addrs[i] = hostport
	}
	ctx, cancel := context.WithTimeout(context.Background(), refuseProbe)
	defer cancel()
	errs := make([]error, len(addrs))
	var wg sync.WaitGroup
	for i, hostport := range addrs {
		wg.Go(func() {
			var d net.Dialer
			c, err := d.DialContext(ctx, "tcp", hostport)
			if err == nil {
				_ = c.Close()
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for _, err := range errs {
		if !errors.Is(err, syscall.ECONNREFUSED) {
			return nil
		}
	}
	return errs[0]
}
