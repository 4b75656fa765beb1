package zkstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/firn-id/firn/nodeid"
)

// claim is a node held by one acquisition: its session, the version of
// owner/N its claim wrote and the layout znode's version its claim
// checked, which fence every extension.
type claim struct {
	*session
	node   uint64
	token  string
	owner  int32 // owner/N's version as this claim set it
	layout int32 // the layout znode's version as this claim checked it
	hwm    int64 // the HWM when the node was taken
	ttl    time.Duration

	mu         sync.Mutex
	stored     int64 // hwm/N as last read or written
	hwmVersion int32 // and its version
	lost       bool
	expiry     time.Time // a TTL after the last confirmed write was sent
	timer      *time.Timer
}

func (s *Store) newClaim(sess *session, n uint64, token string, owner int32, hwm int64, hwmVersion, layout int32, ttl time.Duration, sent time.Time) *claim {
	return &claim{session: sess, node: n, token: token, owner: owner, layout: layout, hwm: hwm, ttl: ttl,
		stored: hwm, hwmVersion: hwmVersion, expiry: sent.Add(ttl)}
}

func (c *claim) lastHWM() (int64, int32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stored, c.hwmVersion
}

func (c *claim) sawHWM(hwm int64, version int32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if hwm >= c.stored {
		c.stored, c.hwmVersion = hwm, version
	}
}

// keep starts the claim's watchdog and session watch; false if the store
// is closed.
func (s *Store) keep(c *claim) bool {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return false
	}
	s.claims[c.token] = c
	c.mu.Lock()
	c.timer = time.AfterFunc(time.Until(c.expiry), func() { s.expire(c) })
	c.mu.Unlock()
	s.mu.Unlock()
	c.watch(func(ev zk.Event) {
		// The client calls this for every session event, from its own
		// goroutine: mark the claim lost here, so no Renew passes after
		// the event, and close the session elsewhere.
		if ev.Type == zk.EventSession && (ev.State == zk.StateExpired || ev.State == zk.StateHasSession && c.conn.SessionID() != c.id) {
			if c.setLost() {
				go s.finish(c)
			}
		}
	})
	// An expiry before the watch began is seen here.
	if c.conn.SessionID() != c.id || c.conn.State() == zk.StateExpired {
		s.lose(c)
	}
	return true
}

// expire is the watchdog: the lease is firn's, not the session's, so a
// claim with no confirmed write for a TTL is closed even though the client
// still pings and the ephemeral node would live on.
func (s *Store) expire(c *claim) {
	c.mu.Lock()
	if c.lost {
		c.mu.Unlock()
		return
	}
	if left := time.Until(c.expiry); left > 0 {
		c.timer.Reset(left)
		c.mu.Unlock()
		return
	}
	c.mu.Unlock()
	s.lose(c)
}

// lose ends the claim for good: it is never revived, its session is
// closed (the server deletes held/N), and its token writes no more. A
// session that expired or that the client replaced is lost the same way:
// nothing held under the old session carries over to the new one.
func (s *Store) lose(c *claim) {
	if c.setLost() {
		s.finish(c)
	}
}

// setLost marks the claim lost; true if it was not already.
func (c *claim) setLost() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.lost {
		return false
	}
	c.lost = true
	if c.timer != nil {
		c.timer.Stop()
	}
	return true
}

func (s *Store) finish(c *claim) {
	s.mu.Lock()
	delete(s.claims, c.token)
	s.mu.Unlock()
	c.close()
}

// live reports whether the claim is neither lost nor past its expiry. The
// watchdog's timer can fire late (a starved machine): the clock, not the
// timer, says when the lease ended.
func (c *claim) live() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return !c.lost && time.Now().Before(c.expiry)
}

// renewed moves the watchdog to a TTL after sent, the time the confirmed
// write was sent; false if the claim was lost meanwhile or the write was
// sent after the lease had expired (it is not a renewal: a lease never
// revives).
func (c *claim) renewed(sent time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.lost || !sent.Before(c.expiry) {
		return false
	}
	if e := sent.Add(c.ttl); e.After(c.expiry) {
		c.expiry = e
	}
	return true
}

// lookup finds the live claim behind nc. A token this store does not hold
// (released, expired, forged, or another process's) has no session here
// and can write nothing.
func (s *Store) lookup(nc nodeid.Claim) *claim {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.claims[nc.Token]
	if c == nil || c.node != nc.Node {
		return nil
	}
	return c
}

// Renew implements nodeid.Store: one Multi on the claim's session checks
// owner/N's version, held/N and the layout znode's version (the record
// the claim was taken under: a Rerecord ends the claim) and sets hwm/N,
// never lowering it. The versions are the ones this Store keeps for the
// claim's token; c.Fence is the layout's, for callers to see.
func (s *Store) Renew(ctx context.Context, nc nodeid.Claim, hwm int64) (int64, error) {
	c := s.lookup(nc)
	if c == nil {
		return 0, nodeid.ErrLeaseLost
	}
	if !c.live() {
		s.lose(c)
		return 0, nodeid.ErrLeaseLost
	}
	ctx, cancel := s.withDeadline(ctx)
	defer cancel()
	sent := time.Now()
	stored, err := s.extend(ctx, c, hwm)
	// ErrLeaseLost is a refusal: the store wrote nothing. extend answers
	// it only so; a write that landed, or may have, before the lease
	// ended is reported as such, and the lease ends all the same (the
	// next Renew finds it lost).
	switch {
	case errors.Is(err, nodeid.ErrLeaseLost):
		s.lose(c)
		return 0, err
	case err != nil:
		return 0, err
	}
	if c.conn.SessionID() != c.id || !c.renewed(sent) {
		s.lose(c)
		return 0, s.fail(fmt.Sprintf("renew node %d", c.node), fmt.Errorf("%w: the HWM is %d", ErrLateWrite, stored))
	}
	return stored, nil
}

// extend raises hwm/N to at least hwm in one Multi fenced by owner/N's
// version (the owner this claim made), held/N and the layout znode's
// version (the record this claim was taken under). A Multi that fails, or
// whose answer is lost, is decided by a read after a Sync, never assumed.
func (s *Store) extend(ctx context.Context, c *claim, hwm int64) (int64, error) {
	op := fmt.Sprintf("renew node %d", c.node)
	fence := []any{
		&zk.CheckVersionRequest{Path: s.ownerPath(c.node), Version: c.owner},
		&zk.CheckVersionRequest{Path: s.heldPath(c.node), Version: 0},
		// A Rerecord sets the layout znode in one write: no extension
		// that reaches the leader after it lands, whenever it was sent.
		&zk.CheckVersionRequest{Path: s.layoutPath(), Version: c.layout},
	}
	// The HWM and its version as last seen: only this claim writes hwm/N
	// while it holds the node, so they are usually right, and a stale
	// version only makes the Multi fail and the read below correct it.
	stored, version := c.lastHWM()
	for range maxRounds {
		ops := fence
		if stored < hwm {
			ops = append(slices.Clip(fence), &zk.SetDataRequest{Path: s.hwmPath(c.node), Data: []byte(strconv.FormatInt(hwm, 10)), Version: version})
		}
		_, err := s.multi(ctx, c.conn, ops...)
		if err == nil {
			if stored < hwm {
				stored, version = hwm, version+1
				c.sawHWM(stored, version)
			}
			return stored, nil
		}
		owned, st, rerr := s.owned(ctx, c)
		switch {
		case rerr != nil && definite(err):
			return 0, s.fail(op, rerr)
		case rerr != nil:
			return 0, s.fail(op, fmt.Errorf("%w: %w; then: %w", ErrOutcomeUnknown, err, rerr))
		case !owned && (definite(err) || st.hwm < hwm):
			// The Multi failed whole, or did not land: the HWM never
			// goes down, and with the claim gone it cannot land later
			// (owner/N's version, the layout znode's, or the expired
			// session fences it).
			return 0, nodeid.ErrLeaseLost
		case !owned:
			// The claim is gone and the HWM at the target: by this
			// Multi before the claim ended, or by a later owner.
			return 0, s.fail(op, fmt.Errorf("%w: the claim ended, and the HWM is %d, at or past %d: %w", ErrOutcomeUnknown, st.hwm, hwm, err))
		case st.hwmStat == nil:
			return 0, s.fail(op, errors.New("HWM znode missing under a held node"))
		}
		stored, version = st.hwm, st.hwmStat.Version
		c.sawHWM(stored, version)
		if stored >= hwm {
			// Stored, by this Multi or before it, while this claim held
			// the node: a next owner's claim reads at least this much.
			return stored, nil
		}
		// The write did not land, or the version was stale: again.
	}
	return 0, s.fail(op, fmt.Errorf("the HWM changed under %d attempts", maxRounds))
}

// owned reads, after a Sync, whether c still holds its node under the
// record it was taken under, and the node's znodes.
func (s *Store) owned(ctx context.Context, c *claim) (bool, nodeState, error) {
	if err := syncPath(ctx, c.conn, s.prefix); err != nil {
		return false, nodeState{}, err
	}
	st, err := s.readNode(ctx, c.conn, c.node)
	if err != nil {
		return false, st, err
	}
	_, layout, err := get(ctx, c.conn, s.layoutPath())
	if err != nil {
		return false, st, err
	}
	ok := c.conn.SessionID() == c.id && st.held != nil && st.held.EphemeralOwner == c.id &&
		st.owner != nil && st.owner.Version == c.owner && string(st.ownerData) == c.token &&
		layout != nil && layout.Version == c.layout
	return ok, st, nil
}

// Release implements nodeid.Store: it closes the claim's session, which
// deletes held/N; owner/N and the HWM stay. A claim this store does not
// hold is left alone.
func (s *Store) Release(ctx context.Context, nc nodeid.Claim) error {
	if c := s.lookup(nc); c != nil {
		s.lose(c)
	}
	return nil
}
