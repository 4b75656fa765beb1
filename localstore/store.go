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

// Store is a data directory opened and locked by this process. A claim of
// node N also holds node N's lock in the user's node directory
// (Config.NodeDir), which every data directory of the user shares,
// whatever its layout, so no two Stores — in one process or two, on one
// directory or two, of one layout or two — hold a node at once, and every
// claim starts past every HWM any of them wrote for it. Its claims
// expire by time as in the shared stores: a claim not renewed within its
// TTL is lost (a TTL of 0 never expires), so a process whose lease was
// lost, say to a disk that refused the HWM, can claim its node again; the
// node's lock stays with the Store until Release or Close. It implements
// nodeid.Store.
type Store struct {
	dir      string
	nodeRoot string // Config.NodeDir
	lock     *os.File

	mu     sync.Mutex
	held   map[uint64]claim      // node -> its live claim
	nodes  map[uint64][]heldLock // node -> its locks: every node of held, and those whose claim expired unreleased
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

// Config says where a Store keeps its state. Both directories are
// required, absolute or made so against the working directory, and
// created (mode 0700) if missing.
type Config struct {
	// Dir is the data directory: its lock, the layout, a copy of each
	// node's HWM, and the segment counters.
	Dir string
	// NodeDir is the user's node directory, one for every data directory
	// of the user on the machine (DefaultNodeDir: nodes/ in the default
	// data directory): node-N.lock, the OS lock a claim of node N holds,
	// and node-N.hwm, node N's HWM whichever data directory and layout
	// wrote it; and, per ID bits (nodeid.LayoutID.Bits), the layout
	// recorded for them, which refuses another naming or split of the
	// same bits. Stores with one NodeDir never hold one node at once;
	// Stores with two NodeDirs (two users, two values of XDG_STATE_HOME)
	// cannot see each other, like two static nodes. There is no default:
	// a Store whose nodes were its own would hand out node 0 beside every
	// other directory's.
	NodeDir string
}

// Open creates the directories if needed, locks the data directory, and
// returns the store. A data directory locked by another process, or by
// another Open in this one, gives a *LockedError.
func Open(cfg Config) (*Store, error) {
	if cfg.Dir == "" {
		return nil, errors.New("localstore: no data directory")
	}
	if cfg.NodeDir == "" {
		return nil, errors.New("localstore: no node directory (Config.NodeDir; DefaultNodeDir gives the user's)")
	}
	dir, err := filepath.Abs(cfg.Dir)
	if err != nil {
		return nil, fmt.Errorf("open data directory: %w", err)
	}
	nodeDir, err := filepath.Abs(cfg.NodeDir)
	if err != nil {
		return nil, fmt.Errorf("open node directory: %w", err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "nodes"), 0o700); err != nil {
		return nil, fmt.Errorf("open data directory: %w", err)
	}
	if err := os.MkdirAll(nodeDir, 0o700); err != nil {
		return nil, fmt.Errorf("open node directory: %w", err)
	}
	lock, busy, heldBy, err := tryLock(filepath.Join(dir, "lock"), strconv.Itoa(os.Getpid())+"\n")
	switch {
	case err != nil:
		return nil, fmt.Errorf("lock data directory: %w", err)
	case busy:
		return nil, &LockedError{Dir: dir, PID: heldBy[0]}
	}
	return &Store{dir: dir, nodeRoot: nodeDir, lock: lock, held: map[uint64]claim{}, nodes: map[uint64][]heldLock{}}, nil
}

// Dir returns the data directory's absolute path.
func (s *Store) Dir() string { return s.dir }

// NodeDir returns the user's node directory's absolute path
// (Config.NodeDir).
func (s *Store) NodeDir() string { return s.nodeRoot }

// Close releases the locks, the data directory's and every node's.
// Claims still held end with it.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	for node := range s.nodes {
		s.unlockNode(node)
	}
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
	// Read under the node's lock: no other Store can raise either HWM
	// between this read and the claim.
	hwm, err := s.readHWM(node)
	if err != nil {
		s.unlockNode(node)
		return nodeid.Claim{}, err
	}
	token := newToken()
	s.held[node] = newClaim(token, req.TTL)
	return nodeid.Claim{Node: node, Token: token, HWM: hwm, TTL: req.TTL}, nil
}

// pick takes the lock of req.Node, or with req.AnyNode of the lowest
// node of the pool whose lock is free. The pool is the layout's node
// values, so no node past its node bits is ever taken.
func (s *Store) pick(req nodeid.ClaimRequest) (uint64, error) {
	if !req.AnyNode {
		if _, ok := s.live(req.Node); ok {
			return 0, &nodeid.ConflictError{Node: req.Node}
		}
		return req.Node, s.lockNode(req.Node)
	}
	held := 0
	for node := req.First; node < req.Pool; node++ {
		if slices.Contains(req.Reserved, node) {
			continue
		}
		if _, ok := s.live(node); ok {
			held++
			continue
		}
		err := s.lockNode(node)
		var nh *NodeHeldError
		switch {
		case err == nil:
			return node, nil
		case !errors.As(err, &nh):
			return 0, err
		}
		held++
	}
	return 0, fmt.Errorf("%w: every other node's lock in %s is held by a process of this user: stop one, or ask a running "+
		"firn serve for IDs, or give several servers a shared registry (etcd, SQL, ZooKeeper)", &nodeid.PoolFullError{Pool: req.Size(), Held: held, Reserved: len(req.Reserved)}, s.nodeRoot)
}

// checkLayout records the layout on first use and refuses another in
// the data directory (one layout per data directory: its HWMs and
// segment counters are one ID space's), and records it, or refuses it,
// in the user's node directory as the layout of its ID bits
// (recordSpace), after marking that directory (markRoot) and comparing
// it with the layouts older firns recorded there (checkOlder). A refused
// layout is recorded nowhere.
func (s *Store) checkLayout(want nodeid.LayoutID) error {
	stored, ok, err := s.readLayout()
	switch {
	case err != nil:
		return err
	case ok && stored.Fingerprint != want.Fingerprint:
		// Another data directory would not take the same bits either:
		// say so when the node directory refuses them too.
		if err := checkSpace(s.nodeRoot, want); err != nil {
			return err
		}
		var sm *SpaceMismatchError
		older, olderOK := readOlder(s.nodeRoot)
		if err := checkOlder(s.nodeRoot, want, older, olderOK); errors.As(err, &sm) {
			return err
		}
		return &nodeid.LayoutMismatchError{Stored: stored.Description, Want: want.Description}
	}
	older, olderOK, err := markRoot(s.nodeRoot)
	if err != nil {
		return err
	}
	if err := checkOlder(s.nodeRoot, want, older, olderOK); err != nil {
		return err
	}
	if err := recordSpace(s.nodeRoot, want); err != nil {
		return err
	}
	if !ok {
		if err := writeFile(s.layoutPath(), layoutRecord(want)); err != nil {
			return fmt.Errorf("record layout: %w", err)
		}
	}
	return nil
}

func (s *Store) layoutPath() string { return filepath.Join(s.dir, "layout") }

// readLayout reads the recorded layout; ok is false if none is recorded.
func (s *Store) readLayout() (l nodeid.LayoutID, ok bool, err error) {
	return readLayoutFile(s.layoutPath())
}

func layoutRecord(id nodeid.LayoutID) []byte {
	return []byte(id.Fingerprint + "\n" + id.Description + "\n")
}

func readLayoutFile(path string) (l nodeid.LayoutID, ok bool, err error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return l, false, nil
	}
	if err != nil {
		return l, false, fmt.Errorf("read layout: %w", err)
	}
	l.Fingerprint, l.Description, _ = strings.Cut(strings.TrimRight(string(b), "\n"), "\n")
	return l, true, nil
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
	// Checked after the write: while node-N.lock is the file this Store
	// locked, no other Store can have locked the node, and one that does
	// later reads this write. Once it is not, another Store may have read
	// the HWM before this write: nothing more is confirmed.
	if !s.lockIntact(c.Node) {
		delete(s.held, c.Node)
		s.unlockNode(c.Node)
		return 0, fmt.Errorf("%w: node %d's lock file %s was removed or replaced while held: another process may hold the node now", nodeid.ErrLeaseLost, c.Node, s.nodeLockPath(c.Node))
	}
	if err == nil {
		s.held[c.Node] = newClaim(c.Token, c.TTL)
	}
	return stored, err
}

// Release implements nodeid.Store: the node's lock goes with the claim,
// or with a claim that expired unreleased.
func (s *Store) Release(_ context.Context, c nodeid.Claim) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	h, ok := s.held[c.Node]
	if ok && h.token != c.Token {
		return nil
	}
	delete(s.held, c.Node)
	s.unlockNode(c.Node)
	return nil
}

// Advance implements nodeid.Store. It holds the node's lock while it
// writes, so a node another Store holds is refused as one of this Store's
// claims is.
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
	// The node is the user's whatever the layout, as in a claim: the same
	// locks, the same HWMs, and a node directory recording no layout yet
	// is marked, never given this one.
	if _, _, err := markRoot(s.nodeRoot); err != nil {
		return 0, err
	}
	if _, ok := s.live(req.Node); ok {
		return 0, &nodeid.ConflictError{Node: req.Node}
	}
	_, ours := s.nodes[req.Node]
	if err := s.lockNode(req.Node); err != nil { // a kept lock whose file was replaced is taken again
		return 0, err
	}
	if !ours {
		defer s.unlockNode(req.Node)
	}
	return s.raise(req.Node, req.HWM)
}

func newToken() string {
	b := make([]byte, 16)
	rand.Read(b)
	return hex.EncodeToString(b)
}
