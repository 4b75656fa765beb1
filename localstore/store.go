package localstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/firn-id/firn/nodeid"
)

// Store is a data directory opened and locked by this process, so no
// other process can hold its nodes. Its claims expire by time as in the
// shared stores: a claim not renewed within its TTL is free again (a TTL
// of 0 never expires), so a process whose lease was lost, say to a disk
// that refused the HWM, can claim its node again. It implements
// nodeid.Store.
type Store struct {
	dir  string
	lock *os.File

	mu     sync.Mutex
	held   map[uint64]claim // node -> its live claim
	closed bool
}

// claim is a node's holder and when its claim ends without a renewal.
type claim struct {
	token   string
	expires time.Time // monotonic: the process's own clock; zero: never (a TTL of 0)
}

func newClaim(token string, ttl time.Duration) claim {
	if ttl <= 0 {
		return claim{token: token}
	}
	return claim{token: token, expires: time.Now().Add(ttl)}
}

// live returns node's claim if it has not expired, dropping one that has.
func (s *Store) live(node uint64) (claim, bool) {
	c, ok := s.held[node]
	if ok && !c.expires.IsZero() && !time.Now().Before(c.expires) {
		delete(s.held, node)
		return claim{}, false
	}
	return c, ok
}

// Open creates dir if needed (mode 0700), locks it, and returns the store.
// A directory locked by another process, or by another Open in this one,
// gives a *LockedError.
func Open(dir string) (*Store, error) {
	if dir == "" {
		return nil, errors.New("localstore: no data directory")
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("open data directory: %w", err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "nodes"), 0o700); err != nil {
		return nil, fmt.Errorf("open data directory: %w", err)
	}
	lock, err := lockDir(dir)
	if err != nil {
		return nil, err
	}
	return &Store{dir: dir, lock: lock, held: map[uint64]claim{}}, nil
}

// Dir returns the data directory's absolute path.
func (s *Store) Dir() string { return s.dir }

// Close releases the lock. Claims still held end with it.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	return s.lock.Close()
}

func (s *Store) check() error {
	if s.closed {
		return nodeid.ErrClosed
	}
	return nil
}

// Claim implements nodeid.Store.
func (s *Store) Claim(_ context.Context, req nodeid.ClaimRequest) (nodeid.Claim, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(); err != nil {
		return nodeid.Claim{}, err
	}
	if err := s.checkLayout(req.Layout); err != nil {
		return nodeid.Claim{}, err
	}
	node, err := s.pick(req)
	if err != nil {
		return nodeid.Claim{}, err
	}
	hwm, err := s.readHWM(node)
	if err != nil {
		return nodeid.Claim{}, err
	}
	token := newToken()
	s.held[node] = newClaim(token, req.TTL)
	return nodeid.Claim{Node: node, Token: token, HWM: hwm, TTL: req.TTL}, nil
}

func (s *Store) pick(req nodeid.ClaimRequest) (uint64, error) {
	if !req.AnyNode {
		if _, ok := s.live(req.Node); ok {
			return 0, &nodeid.ConflictError{Node: req.Node}
		}
		return req.Node, nil
	}
	for node := uint64(0); node < req.Pool; node++ {
		if _, ok := s.live(node); !ok && !slices.Contains(req.Reserved, node) {
			return node, nil
		}
	}
	return 0, &nodeid.PoolFullError{Pool: req.Pool, Held: len(s.held), Reserved: len(req.Reserved)}
}

// checkLayout records the layout on first use and refuses another.
func (s *Store) checkLayout(want nodeid.LayoutID) error {
	stored, ok, err := s.readLayout()
	if err != nil {
		return err
	}
	if !ok {
		if err := writeFile(s.layoutPath(), []byte(want.Fingerprint+"\n"+want.Description+"\n")); err != nil {
			return fmt.Errorf("record layout: %w", err)
		}
		return nil
	}
	if stored.Fingerprint != want.Fingerprint {
		return &nodeid.LayoutMismatchError{Stored: stored.Description, Want: want.Description}
	}
	return nil
}

func (s *Store) layoutPath() string { return filepath.Join(s.dir, "layout") }

// readLayout reads the recorded layout; ok is false if none is recorded.
func (s *Store) readLayout() (l nodeid.LayoutID, ok bool, err error) {
	b, err := os.ReadFile(s.layoutPath())
	if errors.Is(err, os.ErrNotExist) {
		return l, false, nil
	}
	if err != nil {
		return l, false, fmt.Errorf("read layout: %w", err)
	}
	l.Fingerprint, l.Description, _ = strings.Cut(strings.TrimRight(string(b), "\n"), "\n")
	return l, true, nil
}

func (s *Store) hwmPath(node uint64) string {
	return filepath.Join(s.dir, "nodes", strconv.FormatUint(node, 10)+".hwm")
}

func (s *Store) readHWM(node uint64) (int64, error) {
	b, err := os.ReadFile(s.hwmPath(node))
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read HWM of node %d: %w", node, err)
	}
	hwm, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("read HWM of node %d: %s is corrupt: %q", node, s.hwmPath(node), b)
	}
	return hwm, nil
}

// raise writes hwm for node if it is above the stored value, durably, and
// returns the stored value after.
func (s *Store) raise(node uint64, hwm int64) (int64, error) {
	cur, err := s.readHWM(node)
	if err != nil || hwm <= cur {
		return cur, err
	}
	if err := writeFile(s.hwmPath(node), []byte(strconv.FormatInt(hwm, 10)+"\n")); err != nil {
		return cur, fmt.Errorf("write HWM of node %d: %w", node, err)
	}
	return hwm, nil
}

// Renew implements nodeid.Store: the claim lives with the lock, so only
// the HWM is written.
func (s *Store) Renew(_ context.Context, c nodeid.Claim, hwm int64) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(); err != nil {
		return 0, err
	}
	if h, ok := s.live(c.Node); !ok || h.token != c.Token || c.Token == "" {
		return 0, nodeid.ErrLeaseLost
	}
	stored, err := s.raise(c.Node, hwm)
	if err == nil {
		s.held[c.Node] = newClaim(c.Token, c.TTL)
	}
	return stored, err
}

// Release implements nodeid.Store.
func (s *Store) Release(_ context.Context, c nodeid.Claim) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if h, ok := s.held[c.Node]; ok && h.token == c.Token {
		delete(s.held, c.Node)
	}
	return nil
}

// Advance implements nodeid.Store. Only this Store can hold the
// directory's nodes (the lock keeps other processes out), so a node is
// held while one of its claims is.
func (s *Store) Advance(_ context.Context, req nodeid.AdvanceRequest) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(); err != nil {
		return 0, err
	}
	stored, ok, err := s.readLayout()
	switch {
	case err != nil:
		return 0, err
	case !ok:
		return 0, &nodeid.UnknownNamespaceError{Namespace: s.dir}
	case req.Layout.Fingerprint == "":
	case stored.Fingerprint != req.Layout.Fingerprint:
		return 0, &nodeid.LayoutMismatchError{Stored: stored.Description, Want: req.Layout.Description}
	default:
		if err := req.CheckNode(); err != nil {
			return 0, err
		}
	}
	if _, ok := s.live(req.Node); ok {
		return 0, &nodeid.ConflictError{Node: req.Node}
	}
	return s.raise(req.Node, req.HWM)
}

func newToken() string {
	b := make([]byte, 16)
	rand.Read(b)
	return hex.EncodeToString(b)
}
