package nodeidtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"slices"
	"sync"
	"time"

	"github.com/firn-id/firn/nodeid"
)

// MemStore is an in-memory nodeid.Store for tests of code that uses a
// store. Its leases expire by time.Now, so inside a testing/synctest bubble
// they follow the bubble's clock. Fail makes every call return an error,
// as an outage would.
type MemStore struct {
	mu     sync.Mutex
	layout *nodeid.LayoutID
	nodes  map[uint64]*memNode
	fail   error
	cut    map[string]error
	writes int
	resv   nodeid.Reservation
	native string
}

var (
	_ nodeid.Reserver = (*MemStore)(nil)
	_ nodeid.Recorder = (*MemStore)(nil)
)

// Now implements nodeid.Clock.
func (s *MemStore) Now(context.Context) (time.Time, error) { return time.Now(), nil }

// SetIdentity sets what Identity returns, as a store restored elsewhere
// would have another.
func (s *MemStore) SetIdentity(native string) {
	s.mu.Lock()
	s.native = native
	s.mu.Unlock()
}

// Identity implements nodeid.Recorder.
func (s *MemStore) Identity(context.Context) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.native, s.fail
}

// Record implements nodeid.Recorder.
func (s *MemStore) Record(context.Context) (nodeid.LayoutID, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail != nil || s.layout == nil {
		return nodeid.LayoutID{}, s.fail
	}
	return *s.layout, nil
}

// Rerecord implements nodeid.Recorder: it ends every lease.
func (s *MemStore) Rerecord(_ context.Context, old, new nodeid.LayoutID) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail != nil {
		return s.fail
	}
	var stored nodeid.LayoutID
	if s.layout != nil {
		stored = *s.layout
	}
	if stored.Fingerprint != old.Fingerprint || stored.Description != old.Description {
		return &nodeid.RecordChangedError{Stored: stored}
	}
	if err := new.Check(); err != nil {
		return err
	}
	s.layout = &new
	for _, n := range s.nodes {
		n.token = ""
	}
	return nil
}

// HWMs implements nodeid.Recorder.
func (s *MemStore) HWMs(context.Context) (map[uint64]int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[uint64]int64{}
	for n, v := range s.nodes {
		out[n] = v.hwm
	}
	return out, s.fail
}

type memNode struct {
	token   string
	expires time.Time
	hwm     int64
}

// NewMemStore returns an empty store.
func NewMemStore() *MemStore { return &MemStore{nodes: map[uint64]*memNode{}} }

// Fail makes every call return err until Fail(nil).
func (s *MemStore) Fail(err error) {
	s.mu.Lock()
	s.fail = err
	s.mu.Unlock()
}

// Cut makes Renew calls with token fail with err, as if that one owner
// were cut off from the store (paused, partitioned); nil restores it.
func (s *MemStore) Cut(token string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cut == nil {
		s.cut = map[string]error{}
	}
	if err == nil {
		delete(s.cut, token)
		return
	}
	s.cut[token] = err
}

// Writes returns the number of successful Renew calls.
func (s *MemStore) Writes() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.writes
}

// HWM returns a node's stored HWM.
func (s *MemStore) HWM(node uint64) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n := s.nodes[node]; n != nil {
		return n.hwm
	}
	return 0
}

func (s *MemStore) live(n *memNode) bool {
	return n != nil && n.token != "" && time.Now().Before(n.expires)
}

// SetHWM stores a node's HWM as a previous owner would have left it.
func (s *MemStore) SetHWM(node uint64, hwm int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.nodes[node] == nil {
		s.nodes[node] = &memNode{}
	}
	s.nodes[node].hwm = hwm
}

// Claim implements nodeid.Store.
func (s *MemStore) Claim(_ context.Context, req nodeid.ClaimRequest) (nodeid.Claim, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail != nil {
		return nodeid.Claim{}, s.fail
	}
	if err := s.record(req.Layout); err != nil {
		return nodeid.Claim{}, err
	}
	reserved, err := s.resv.Claimable(req)
	if err != nil {
		return nodeid.Claim{}, err
	}
	req.Reserved = reserved
	node, err := s.pick(req)
	if err != nil {
		return nodeid.Claim{}, err
	}
	n := s.nodes[node]
	if n == nil {
		n = &memNode{}
		s.nodes[node] = n
	}
	n.token = newToken()
	n.expires = time.Now().Add(req.TTL)
	return nodeid.Claim{Node: node, Token: n.token, HWM: max(n.hwm, s.resv.Floor), TTL: req.TTL}, nil
}

// record records the namespace's layout on first use, and refuses another.
func (s *MemStore) record(l nodeid.LayoutID) error {
	if s.layout == nil {
		s.layout = &l
	} else if s.layout.Fingerprint != l.Fingerprint {
		return &nodeid.LayoutMismatchError{Stored: s.layout.Description, Want: l.Description}
	}
	return nil
}

// Reserve implements nodeid.Reserver.
func (s *MemStore) Reserve(_ context.Context, r nodeid.Reservation) (nodeid.Reservation, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail != nil {
		return nodeid.Reservation{}, s.fail
	}
	if err := s.record(r.Layout); err != nil {
		return nodeid.Reservation{}, err
	}
	for _, n := range r.Nodes {
		if s.live(s.nodes[n]) {
			return nodeid.Reservation{}, &nodeid.ConflictError{Node: n}
		}
	}
	s.resv = s.resv.Merge(r)
	return s.resv, nil
}

// Reservation implements nodeid.Reserver.
func (s *MemStore) Reservation(context.Context) (nodeid.Reservation, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail != nil {
		return nodeid.Reservation{}, s.fail
	}
	return s.resv, nil
}

// Unreserve implements nodeid.Reserver.
func (s *MemStore) Unreserve(_ context.Context, node uint64, note string) (nodeid.Reservation, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail != nil {
		return nodeid.Reservation{}, s.fail
	}
	r, err := s.resv.Unreserve(node, note)
	if err != nil {
		return nodeid.Reservation{}, err
	}
	s.resv = r
	return r, nil
}

func (s *MemStore) pick(req nodeid.ClaimRequest) (uint64, error) {
	if !req.AnyNode {
		if req.Node < req.First || req.Node >= req.Pool && req.Pool > 0 {
			return 0, &nodeid.NodeRangeError{Node: req.Node, Pool: req.Pool, First: req.First, Layout: req.Layout.Description}
		}
		if s.live(s.nodes[req.Node]) {
			return 0, &nodeid.ConflictError{Node: req.Node}
		}
		return req.Node, nil
	}
	held := 0
	for node := req.First; node < req.Pool; node++ {
		switch {
		case slices.Contains(req.Reserved, node):
		case s.live(s.nodes[node]):
			held++
		default:
			return node, nil
		}
	}
	return 0, &nodeid.PoolFullError{Pool: req.Size(), Held: held, Reserved: len(req.Reserved)}
}

// Renew implements nodeid.Store.
func (s *MemStore) Renew(_ context.Context, c nodeid.Claim, hwm int64) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail != nil {
		return 0, s.fail
	}
	if err := s.cut[c.Token]; err != nil {
		return 0, err
	}
	n := s.nodes[c.Node]
	if !s.live(n) || n.token != c.Token {
		return 0, nodeid.ErrLeaseLost
	}
	n.expires = time.Now().Add(c.TTL)
	n.hwm = max(n.hwm, hwm)
	s.writes++
	return n.hwm, nil
}

// Release implements nodeid.Store.
func (s *MemStore) Release(_ context.Context, c nodeid.Claim) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail != nil {
		return s.fail
	}
	if n := s.nodes[c.Node]; n != nil && n.token == c.Token {
		n.token = ""
	}
	return nil
}

// Advance implements nodeid.Store.
func (s *MemStore) Advance(_ context.Context, req nodeid.AdvanceRequest) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail != nil {
		return 0, s.fail
	}
	if s.layout == nil {
		return 0, &nodeid.UnknownNamespaceError{Namespace: "memory", Known: []string{}}
	}
	if fp := req.Layout.Fingerprint; fp != "" {
		if s.layout.Fingerprint != fp {
			return 0, &nodeid.LayoutMismatchError{Stored: s.layout.Description, Want: req.Layout.Description}
		}
		if err := req.CheckNode(); err != nil {
			return 0, err
		}
	}
	n := s.nodes[req.Node]
	if s.live(n) {
		return 0, &nodeid.ConflictError{Node: req.Node}
	}
	if n == nil {
		n = &memNode{}
		s.nodes[req.Node] = n
	}
	n.hwm = max(n.hwm, req.HWM)
	return n.hwm, nil
}

func newToken() string {
	b := make([]byte, 16)
	rand.Read(b)
	return hex.EncodeToString(b)
}
