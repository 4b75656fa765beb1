package zkstore

import (
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/firn-id/firn/nodeid"
)

// session is one ZooKeeper session, opened by the store.
type session struct {
	conn    *zk.Conn
	id      int64         // the session the store opened; another id is another session
	timeout time.Duration // as the ensemble granted it
	hook    atomic.Pointer[func(zk.Event)]
	passes  *passes

	mu     sync.Mutex
	closed bool
	nc     net.Conn // the connection the client dialed last
}

// close ends the session and its client's connection loop. The client's
// Close gives up on its close request when its queue is full (calls
// queued while no server answered) and does not end a connection it is
// still setting up: a connect answered after Close re-attached the
// session, which then lived on, pinging, with its held/N. So the
// connection is closed here too, and no other is dialed: the server
// ends the session at its timeout, as after a crash.
func (s *session) close() {
	s.passes.stop()
	s.conn.Close()
	s.mu.Lock()
	s.closed = true
	nc := s.nc
	s.mu.Unlock()
	if nc != nil {
		nc.Close()
	}
}

// dialed records the client's new connection, or closes it if the
// session was closed meanwhile.
func (s *session) dialed(c net.Conn) (net.Conn, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		c.Close()
		return nil, net.ErrClosed
	}
	s.nc = c
	return c, nil
}

// watch calls f for every session event from now on.
func (s *session) watch(f func(zk.Event)) { s.hook.Store(&f) }

// The bounds of Config.SessionTimeout. ZooKeeper grants 2 to 20 of its
// ticks whatever is asked; these keep what is asked sensible: not below
// a second (a session that expires on every pause of a busy machine),
// not past the longest lease a node may have (the protocol itself would
// carry up to 24 days in int32 milliseconds).
const (
	DefaultSessionTimeout = 10 * time.Second
	MinSessionTimeout     = time.Second
	MaxSessionTimeout     = nodeid.MaxTTL
)

// CheckSessionTimeout refuses a session timeout out of bounds: New calls
// it, and so does every check of a configuration before it opens a store.
func CheckSessionTimeout(d time.Duration) error {
	if d < MinSessionTimeout || d > MaxSessionTimeout {
		return &ConfigError{Words: "session timeout", Reason: fmt.Sprintf("%s: want %s to %s", d, MinSessionTimeout, MaxSessionTimeout)}
	}
	return nil
}

// open starts a session asking for timeout and waits until the ensemble
// has granted it.
func (s *Store) open(ctx context.Context, timeout time.Duration) (*session, error) {
	sniff := &grant{}
	sess := &session{passes: newPasses(s.cfg.RetryPause)}
	// The client drops events from its channel when nobody reads it
	// fast enough; its callback sees every one.
	events := func(ev zk.Event) {
		if f := sess.hook.Load(); f != nil {
			(*f)(ev)
		}
	}
	dial := func(network, addr string, limit time.Duration) (net.Conn, error) {
		d := &net.Dialer{Timeout: min(limit, s.cfg.DialTimeout)}
		var c net.Conn
		var err error
		if s.cfg.TLS != nil {
			c, err = tls.DialWithDialer(d, network, addr, s.cfg.TLS)
		} else {
			c, err = d.Dial(network, addr)
		}
		if err != nil {
			return nil, err
		}
		return sess.dialed(&sniffConn{Conn: c, grant: sniff})
	}
	ready := make(chan struct{}, 1)
	sess.watch(func(ev zk.Event) {
		if ev.Type == zk.EventSession && ev.State == zk.StateHasSession {
			select {
			case ready <- struct{}{}:
			default:
			}
		}
	})
	conn, _, err := zk.Connect(s.cfg.Servers, timeout, zk.WithDialer(dial), zk.WithHostProvider(sess.passes), zk.WithLogger(quiet{}), zk.WithLogInfo(false), zk.WithEventCallback(events))
	if err != nil {
		return nil, s.fail("connect", err)
	}
	sess.conn = conn
	select {
	case <-ready:
	case <-ctx.Done():
		go sess.close() // Close waits up to a second for the server
		return nil, s.fail("connect", ctx.Err())
	}
	granted, id := sniff.get()
	if granted <= 0 || id != conn.SessionID() {
		// The ensemble's grant could not be read: the TTL check would
		// rest on a guess, so refuse.
		sess.close()
		return nil, s.fail("connect", errors.New("session timeout granted by the ensemble not seen"))
	}
	sess.id, sess.timeout = id, granted
	sess.watch(func(zk.Event) {})
	if err := s.authenticate(ctx, conn); err != nil {
		sess.close()
		return nil, err
	}
	return sess, nil
}

// grant is what the last connect response said: the session timeout the
// server granted and the session id. The client keeps the timeout to
// itself, so the store reads it off the wire.
type grant struct {
	mu      sync.Mutex
	timeout time.Duration
	id      int64
}

func (g *grant) get() (time.Duration, int64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.timeout, g.id
}

// sniffConn reads the first answer on a connection, the connect response:
// length (4 bytes), protocol version (4), timeout in ms (4), session id (8).
type sniffConn struct {
	net.Conn
	grant *grant
	head  []byte
	done  bool
}

const connectHead = 4 + 4 + 4 + 8

func (c *sniffConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if !c.done && n > 0 {
		c.head = append(c.head, p[:min(n, connectHead-len(c.head))]...)
		if len(c.head) == connectHead {
			c.done = true
			c.grant.mu.Lock()
			c.grant.timeout = time.Duration(int32(binary.BigEndian.Uint32(c.head[8:12]))) * time.Millisecond
			c.grant.id = int64(binary.BigEndian.Uint64(c.head[12:20]))
			c.grant.mu.Unlock()
		}
	}
	return n, err
}

type quiet struct{}

func (quiet) Printf(string, ...any) {}

// do runs f, a call of the ZooKeeper client (which takes no context), and
// returns when it does or when ctx ends. A write cut off by ctx has an
// unknown outcome; its goroutine ends when the client answers or the
// session closes.
func do[T any](ctx context.Context, f func() (T, error)) (T, error) {
	type result struct {
		v   T
		err error
	}
	var zero T
	if err := ctx.Err(); err != nil {
		return zero, err
	}
	ch := make(chan result, 1)
	go func() {
		v, err := f()
		ch <- result{v, err}
	}()
	select {
	case r := <-ch:
		return r.v, r.err
	case <-ctx.Done():
		return zero, ctx.Err()
	}
}

// definite reports whether err is the server's refusal of a request, as
// opposed to a lost answer: only then is it known that nothing changed.
func definite(err error) bool {
	return errors.Is(err, zk.ErrNodeExists) || errors.Is(err, zk.ErrBadVersion) ||
		errors.Is(err, zk.ErrNoNode) || errors.Is(err, zk.ErrNotEmpty)
}

// get reads a znode after nothing; absent is (nil, nil, nil).
func get(ctx context.Context, conn *zk.Conn, path string) ([]byte, *zk.Stat, error) {
	type got struct {
		data []byte
		stat *zk.Stat
	}
	g, err := do(ctx, func() (got, error) {
		d, st, err := conn.Get(path)
		return got{d, st}, err
	})
	if errors.Is(err, zk.ErrNoNode) {
		return nil, nil, nil
	}
	return g.data, g.stat, err
}

// syncPath makes the member the session talks to catch up with the leader, so
// the reads after it see every write committed before it.
func syncPath(ctx context.Context, conn *zk.Conn, path string) error {
	_, err := do(ctx, func() (string, error) { return conn.Sync(path) })
	return err
}

// multi runs one Multi: all of ops or none.
func multi(ctx context.Context, conn *zk.Conn, ops ...any) ([]zk.MultiResponse, error) {
	return do(ctx, func() ([]zk.MultiResponse, error) { return conn.Multi(ops...) })
}

// fail names the operation and the ensemble in an error.
func (s *Store) fail(op string, err error) error {
	return fmt.Errorf("zkstore: %s (ZooKeeper %s): %w", op, s.servers, err)
}
