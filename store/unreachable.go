package store

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/firn-id/firn/internal/secret"
)

// UnreachableError is a store that refused, did not answer within the
// dial timeout, or answered a connection with an error that is not bad
// settings: an outage, which a server waits out. Its message names the
// store's address (never a password) and the cause.
type UnreachableError struct {
	Store    string // the kind's name
	Endpoint string // host:port, or the endpoints, redacted
	Timeout  time.Duration
	Err      error
}

func (e *UnreachableError) Error() string {
	if errors.Is(e.Err, context.DeadlineExceeded) {
		return fmt.Sprintf("%s %s: no answer within %s (--dial-timeout)", e.Store, e.Endpoint, e.Timeout)
	}
	if Answered(e.Err) {
		// The database is reachable: saying otherwise sends the operator
		// to the network when the cause is in the DSN or the server.
		return fmt.Sprintf("%s %s: answered with an error: %s", e.Store, e.Endpoint, secret.Scrub(e.Err.Error()))
	}
	return fmt.Sprintf("%s %s: unreachable: %s", e.Store, e.Endpoint, secret.Scrub(e.Err.Error()))
}

func (e *UnreachableError) Unwrap() error { return e.Err }

// Answered reports whether err holds a store's own answer (a MySQL error
// number, a SQLSTATE), as against a connection that failed: a SQLSTATE,
// or what a registered kind's Answered recognises.
func Answered(err error) bool {
	var se interface{ SQLState() string }
	if errors.As(err, &se) {
		return true
	}
	for _, k := range Kinds() {
		if k.Answered != nil && k.Answered(err) {
			return true
		}
	}
	return false
}

// TimedOut is the cause of a store client's attempt that waited out the
// dial timeout: the refusal, when every server refused the connection
// (nothing listens there: a client that retries until its deadline would
// say only that no answer came), or else err marked as a deadline.
func TimedOut(endpoints []string, err error) error {
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
		_, hostport, err := DialAddr(ep)
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

// DialAddr is what an endpoint dials: a URL's host (u set), or the
// endpoint itself, host:port (u nil).
func DialAddr(ep string) (u *url.URL, hostport string, err error) {
	if !strings.Contains(ep, "://") {
		return nil, ep, nil
	}
	u, err = url.Parse(ep)
	if err != nil {
		return nil, "", err
	}
	return u, u.Host, nil
}
