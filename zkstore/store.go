package zkstore

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/firn-id/firn/nodeid"
)

// Config says where the ensemble is and how long to wait for it.
type Config struct {
	// Servers are the ensemble's client addresses, host:port. Required.
	Servers []string
	// Namespace is the path under which the store keeps its znodes, such
	// as "/firn/orders" ("firn/orders" and "/firn/orders/" are the same
	// namespace). Required; not the root, not under /zookeeper, and
	// clean: no empty, "." or ".." element, no control character, and no
	// element named owner, hwm, held, layout or reserved (the namespace's
	// own znodes).
	Namespace string
	// DialTimeout bounds each connection attempt to a server. Default
	// 5 s.
	DialTimeout time.Duration
	// CallTimeout bounds each call of the store whose context has no
	// deadline. Default 10 s.
	CallTimeout time.Duration
	// RetryPause is the pause between passes over Servers while none
	// answers (each connection attempt bounded by DialTimeout). Default
	// DefaultRetryPause, the client's own; MinRetryPause to
	// MaxRetryPause.
	RetryPause time.Duration
	// SessionTimeout is the session asked for by calls that hold no node
	// (Advance, Ping, Exposed); a claim's session asks for the claim's
	// TTL. The ensemble clamps it to 2 to 20 ticks. Default
	// DefaultSessionTimeout; MinSessionTimeout to MaxSessionTimeout.
	SessionTimeout time.Duration
	// Digest, when set, authenticates every session and gives every
	// znode the store creates under the namespace an ACL of this identity
	// alone. Without it anyone who reaches the ensemble can rewrite an
	// HWM: Exposed lists such znodes. Digest credentials travel in clear
	// unless the connection is TLS.
	Digest *Digest
	// TLS, when set, connects to the servers' TLS client port
	// (secureClientPort) with this configuration.
	TLS *tls.Config
}

// Store is a nodeid.Store on ZooKeeper. Its claims' sessions live in the
// process: Renew and Release work on claims this Store made, and a token
// it does not hold is a lost lease.
type Store struct {
	cfg     Config
	prefix  string
	servers string
	acl     []zk.ACL // of the namespace's znodes
	above   []zk.ACL // of the ancestors the store creates

	// multi sends the Multis of claims and extensions; tests lose its
	// answers.
	multi func(ctx context.Context, conn *zk.Conn, ops ...any) ([]zk.MultiResponse, error)

	mu     sync.Mutex
	claims map[string]*claim // by token
	closed bool
}

var _ nodeid.Store = (*Store)(nil)

// New validates cfg and returns a store. It does no I/O.
func New(cfg Config) (*Store, error) {
	if len(cfg.Servers) == 0 {
		return nil, &ConfigError{Words: "no ZooKeeper servers configured"}
	}
	for _, a := range cfg.Servers {
		host, port, err := net.SplitHostPort(a)
		if _, perr := strconv.ParseUint(port, 10, 16); err != nil || perr != nil || host == "" || strings.ContainsAny(a, ", /") {
			return nil, &ConfigError{Words: "server address", Reason: fmt.Sprintf("%q: want host:port, such as 127.0.0.1:2181", a)}
		}
	}
	prefix, err := namespace(cfg.Namespace)
	if err != nil {
		return nil, err
	}
	if cfg.DialTimeout == 0 {
		cfg.DialTimeout = 5 * time.Second
	}
	if cfg.CallTimeout == 0 {
		cfg.CallTimeout = 10 * time.Second
	}
	if cfg.SessionTimeout == 0 {
		cfg.SessionTimeout = DefaultSessionTimeout
	}
	if cfg.DialTimeout < 0 || cfg.CallTimeout < 0 {
		return nil, &ConfigError{Words: "negative timeout"}
	}
	if cfg.RetryPause == 0 {
		cfg.RetryPause = DefaultRetryPause
	}
	if err := CheckSessionTimeout(cfg.SessionTimeout); err != nil {
		return nil, err
	}
	if err := CheckRetryPause(cfg.RetryPause); err != nil {
		return nil, err
	}
	if cfg.Digest != nil {
		if err := cfg.Digest.validate(); err != nil {
			return nil, err
		}
	}
	own, above := acls(cfg.Digest)
	return &Store{cfg: cfg, prefix: prefix, servers: strings.Join(cfg.Servers, ","), acl: own, above: above,
		claims: map[string]*claim{}, multi: multi}, nil
}

// namespace gives a namespace one spelling, "/a/b", and refuses anything
// that is not plainly one path: two spellings of one namespace must not
// become two namespaces that each hand out node 0.
func namespace(ns string) (string, error) {
	p := "/" + strings.TrimSuffix(strings.TrimPrefix(ns, "/"), "/")
	bad := func(why string) error {
		return &ConfigError{Words: "invalid namespace", Reason: fmt.Sprintf("%q: %s", ns, why), Kind: ErrNamespace}
	}
	if p == "/" {
		return "", bad("the root is not a namespace")
	}
	for _, el := range strings.Split(p[1:], "/") {
		switch el {
		case "":
			return "", bad("empty path element")
		case ".", "..":
			return "", bad("relative path element")
		}
		if slices.Contains(znodeNames, el) {
			return "", bad(fmt.Sprintf("element %q is the name of a namespace's own znodes", el))
		}
	}
	for _, r := range p {
		// ZooKeeper refuses these in a path (C0, DEL and C1 controls,
		// surrogates, private use, specials); New refuses them first.
		if r < 0x20 || r >= 0x7f && r <= 0x9f || r >= 0xd800 && r <= 0xf8ff || r >= 0xfff0 {
			return "", bad("control or reserved character")
		}
	}
	if p == "/zookeeper" || strings.HasPrefix(p, "/zookeeper/") {
		return "", bad("/zookeeper is ZooKeeper's own")
	}
	return p, nil
}

// The names of the znodes a namespace holds. No namespace has an element
// of these names: one nested in another's znodes (X/held/0, X/hwm/3)
// would create persistent znodes where X keeps its own, holding a node of
// X for good or making its HWM unreadable.
const (
	ownerName  = "owner"
	hwmName    = "hwm"
	heldName   = "held"
	layoutName = "layout"
	// reservedName holds the namespace's reservation (nodeid.Reserver).
	reservedName = "reserved"
)

var znodeNames = []string{ownerName, hwmName, heldName, layoutName, reservedName}

func (s *Store) layoutPath() string        { return s.prefix + "/" + layoutName }
func (s *Store) ownerDir() string          { return s.prefix + "/" + ownerName }
func (s *Store) hwmDir() string            { return s.prefix + "/" + hwmName }
func (s *Store) heldDir() string           { return s.prefix + "/" + heldName }
func (s *Store) ownerPath(n uint64) string { return s.ownerDir() + "/" + strconv.FormatUint(n, 10) }
func (s *Store) hwmPath(n uint64) string   { return s.hwmDir() + "/" + strconv.FormatUint(n, 10) }
func (s *Store) heldPath(n uint64) string  { return s.heldDir() + "/" + strconv.FormatUint(n, 10) }

// Namespace returns the namespace's path.
func (s *Store) Namespace() string { return s.prefix }

// withDeadline gives ctx the store's call timeout unless it has a deadline.
func (s *Store) withDeadline(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, s.cfg.CallTimeout)
}

// Close ends every claim's session: their nodes are free at once. The
// HWMs stay.
func (s *Store) Close() error {
	s.mu.Lock()
	s.closed = true
	claims := make([]*claim, 0, len(s.claims))
	for _, c := range s.claims {
		claims = append(claims, c)
	}
	s.mu.Unlock()
	for _, c := range claims {
		s.lose(c)
	}
	return nil
}

// Claim implements nodeid.Store. Every claim opens a session of its own,
// asking for req.TTL as its timeout; a longer grant is refused
// (ErrTTLTooShort), and so is a TTL past nodeid.MaxTTL. The node's held/N is created in that session by the
// Multi that sets owner/N and checks the HWM it returns.
func (s *Store) Claim(ctx context.Context, req nodeid.ClaimRequest) (nodeid.Claim, error) {
	ctx, cancel := s.withDeadline(ctx)
	defer cancel()
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return nodeid.Claim{}, nodeid.ErrClosed
	}
	if req.TTL <= 0 || req.TTL > nodeid.MaxTTL {
		// The TTL is asked for as the session timeout, which the protocol
		// carries as int32 milliseconds: a TTL of weeks wrapped and the
		// claim waited out its deadline for a session never granted.
		return nodeid.Claim{}, fmt.Errorf("zkstore: claim TTL %s: want a positive TTL up to %s", req.TTL, nodeid.MaxTTL)
	}
	sess, err := s.open(ctx, req.TTL)
	if err != nil {
		return nodeid.Claim{}, err
	}
	if sess.timeout > req.TTL {
		sess.close()
		return nodeid.Claim{}, fmt.Errorf("%w: TTL %s, session timeout %s (ZooKeeper %s): a holder that vanished would keep its node up to about %s plus one tickTime; use a TTL of at least %s",
			ErrTTLTooShort, req.TTL, sess.timeout, s.servers, sess.timeout, sess.timeout)
	}
	c, err := s.take(ctx, sess, req)
	if err != nil {
		// Whatever the session may have created dies with it.
		sess.close()
		return nodeid.Claim{}, err
	}
	if !s.keep(c) {
		s.lose(c)
		return nodeid.Claim{}, nodeid.ErrClosed
	}
	return nodeid.Claim{Node: c.node, Token: c.token, HWM: c.hwm, TTL: req.TTL, Fence: int64(c.layout)}, nil
}

// prepare creates the namespace's persistent znodes and checks its layout,
// recording it on first use. It returns the layout znode's version as
// read: a claim checks it in its Multi, and so does every extension of
// the claim, so a Rerecord, which sets the znode, ends them all.
func (s *Store) prepare(ctx context.Context, conn *zk.Conn, want nodeid.LayoutID) (int32, error) {
	if err := s.makeZnodes(ctx, conn); err != nil {
		return 0, err
	}
	val := layoutValue(want)
	_, err := do(ctx, func() (string, error) { return conn.Create(s.layoutPath(), val, 0, s.acl) })
	if err == nil {
		return 0, nil
	}
	// Another claim recorded a layout, or this create's answer was lost:
	// the layout is whatever the namespace holds, read after a Sync (the
	// member this session talks to may not have the create yet).
	if err := syncPath(ctx, conn, s.prefix); err != nil {
		return 0, s.fail("check layout", err)
	}
	got, st, err := get(ctx, conn, s.layoutPath())
	if err != nil {
		return 0, s.fail("check layout", err)
	}
	if st == nil {
		return 0, s.fail("check layout", errors.New("layout znode vanished"))
	}
	return st.Version, compareLayout(got, want)
}

// makeZnodes creates the namespace's persistent znodes but the layout,
// and the ancestors above it, where missing.
func (s *Store) makeZnodes(ctx context.Context, conn *zk.Conn) error {
	paths := s.ancestors()
	above := len(paths)
	paths = append(paths, s.prefix, s.ownerDir(), s.hwmDir(), s.heldDir(), s.reservedPath())
	for i, p := range paths {
		acl := s.acl
		if i < above {
			acl = s.above
		}
		_, err := do(ctx, func() (string, error) { return conn.Create(p, nil, 0, acl) })
		if err != nil && !errors.Is(err, zk.ErrNodeExists) {
			return s.fail("create "+p, err)
		}
	}
	return nil
}

// layoutValue is the layout znode's value: the fingerprint quoted, a
// newline, the description. A fingerprint may hold any byte, a newline
// too; quoted, it cannot run into the description, so no fingerprint
// passes for a longer one that begins with it.
func layoutValue(l nodeid.LayoutID) []byte {
	return []byte(strconv.Quote(l.Fingerprint) + "\n" + l.Description)
}

// compareLayout refuses want unless it is the layout val records. A value
// that is not a quoted fingerprint and a description is refused too: the
// namespace's layout cannot be known from it.
func compareLayout(val []byte, want nodeid.LayoutID) error {
	got, err := parseLayout(val)
	if err != nil {
		return err
	}
	if got.Fingerprint != want.Fingerprint {
		return &nodeid.LayoutMismatchError{Stored: got.Description, Want: want.Description}
	}
	return nil
}

// parseLayout reads the layout znode's value (layoutValue).
func parseLayout(val []byte) (nodeid.LayoutID, error) {
	quoted, desc, ok := strings.Cut(string(val), "\n")
	fp, err := strconv.Unquote(quoted)
	if !ok || err != nil {
		return nodeid.LayoutID{}, fmt.Errorf("zkstore: layout znode holds %q: %w", val, ErrCorrupt)
	}
	return nodeid.LayoutID{Fingerprint: fp, Description: desc}, nil
}

// take claims req.Node, or the lowest free node, in sess. A claim whose
// Multi found the namespace's record replaced since prepare read it
// (a Rerecord) checks the record again: the new one may be another
// layout's, or a released site's.
func (s *Store) take(ctx context.Context, sess *session, req nodeid.ClaimRequest) (*claim, error) {
	token, err := newToken()
	if err != nil {
		return nil, err
	}
	for try := 1; ; try++ {
		layout, err := s.prepare(ctx, sess.conn, req.Layout)
		if err != nil {
			return nil, err
		}
		c, err := s.takeUnder(ctx, sess, req, token, layout)
		if errors.Is(err, errRecordMoved) && try < recordTries {
			continue
		}
		if errors.Is(err, errRecordMoved) {
			return nil, s.fail("claim", fmt.Errorf("%w, %d times", err, recordTries))
		}
		return c, err
	}
}

// recordTries bounds the claims one Claim makes while Rerecords keep
// replacing the namespace's record.
const recordTries = 3

// errRecordMoved: the layout znode changed between a claim's read of it
// and the Multi that takes a node, which wrote nothing.
var errRecordMoved = errors.New("zkstore: the namespace's record changed during the claim")

// takeUnder is take under the layout znode at version layout.
func (s *Store) takeUnder(ctx context.Context, sess *session, req nodeid.ClaimRequest, token string, layout int32) (*claim, error) {
	if !req.AnyNode {
		c, held, err := s.tryNode(ctx, sess, req.Node, token, req.TTL, layout)
		if err == nil && held {
			err = &nodeid.ConflictError{Node: req.Node}
		}
		return c, err
	}
	held, err := s.heldNodes(ctx, sess.conn)
	if err != nil {
		return nil, err
	}
	resv, _, err := s.readReservation(ctx, sess.conn)
	if err != nil {
		return nil, s.fail("read the reservation", err)
	}
	if req.Reserved, err = resv.Claimable(req); err != nil {
		return nil, err
	}
	var corrupt error
	order := nodeid.NewClaimOrder(req.Pool, func(n uint64) bool { return !held[n] && req.Free(n) }).From(req.First)
	for n, more := order.Next(); more; n, more = order.Next() {
		c, busy, err := s.tryNode(ctx, sess, n, token, req.TTL, layout)
		if errors.Is(err, nodeid.ErrNodeReserved) {
			continue // reserved in the store since the listing
		}
		if errors.Is(err, ErrCorrupt) {
			// Found on reading, before any write: the node is not
			// taken, and the rest of the pool is still free to take.
			if corrupt == nil {
				corrupt = err
			}
			continue
		}
		if err != nil || !busy {
			return c, err
		}
		held[n] = true // taken since the listing
		order.Lost()
	}
	count := 0
	for n := range held {
		if req.Free(n) {
			count++
		}
	}
	full := &nodeid.PoolFullError{Pool: req.Size(), Held: count, Reserved: len(req.Reserved)}
	if corrupt != nil {
		return nil, fmt.Errorf("%w; %w", full, corrupt)
	}
	return nil, full
}

// heldNodes lists the nodes whose held/N exists, after a Sync.
func (s *Store) heldNodes(ctx context.Context, conn *zk.Conn) (map[uint64]bool, error) {
	if err := syncPath(ctx, conn, s.heldDir()); err != nil {
		return nil, s.fail("list held nodes", err)
	}
	kids, err := do(ctx, func() ([]string, error) {
		k, _, err := conn.Children(s.heldDir())
		return k, err
	})
	if err != nil {
		return nil, s.fail("list held nodes", err)
	}
	held := map[uint64]bool{}
	for _, k := range kids {
		if n, err := strconv.ParseUint(k, 10, 64); err == nil {
			held[n] = true
		}
	}
	return held, nil
}

// maxRounds bounds the rounds of read-then-Multi one call makes when other
// writers keep moving the znodes it read.
const maxRounds = 20

// tryNode takes node n in sess unless held/N exists (held true). The Multi
// sets owner/N at the version read and checks hwm/N at the version read,
// so the HWM returned is the one stored when the node was taken: no
// extension of a previous owner lands between the read and the takeover.
// It also checks the layout znode at version layout, the record the
// caller compared: one replaced since gives errRecordMoved.
func (s *Store) tryNode(ctx context.Context, sess *session, n uint64, token string, ttl time.Duration, layout int32) (*claim, bool, error) {
	conn := sess.conn
	for range maxRounds {
		if err := syncPath(ctx, conn, s.prefix); err != nil {
			return nil, false, s.fail(fmt.Sprintf("claim node %d", n), err)
		}
		st, err := s.readNode(ctx, conn, n)
		if err != nil {
			return nil, false, s.fail(fmt.Sprintf("claim node %d", n), err)
		}
		if st.held != nil {
			return nil, true, nil
		}
		resv, resvVersion, err := s.readReservation(ctx, conn)
		if err != nil {
			return nil, false, s.fail(fmt.Sprintf("claim node %d", n), err)
		}
		if _, err := resv.Claimable(nodeid.ClaimRequest{Node: n}); err != nil {
			return nil, false, err
		}
		acl := s.acl
		// First, so that a refusal names it (ZooKeeper reports the first
		// op that fails): the layout compared before is still the
		// namespace's record. A Rerecord sets the znode, so a claim
		// taken under the record it replaced cannot land after it.
		ops := []any{&zk.CheckVersionRequest{Path: s.layoutPath(), Version: layout},
			&zk.CreateRequest{Path: s.heldPath(n), Data: []byte(token), Acl: acl, Flags: zk.FlagEphemeral}}
		if st.owner == nil {
			ops = append(ops, &zk.CreateRequest{Path: s.ownerPath(n), Data: []byte(token), Acl: acl})
		} else {
			ops = append(ops, &zk.SetDataRequest{Path: s.ownerPath(n), Data: []byte(token), Version: st.owner.Version})
		}
		if st.hwmStat == nil {
			ops = append(ops, &zk.CreateRequest{Path: s.hwmPath(n), Data: []byte("0"), Acl: acl})
		} else {
			ops = append(ops, &zk.CheckVersionRequest{Path: s.hwmPath(n), Version: st.hwmStat.Version})
		}
		// And the reservation read is still the namespace's: a node
		// reserved, or a floor raised, since then refuses the claim.
		ops = append(ops, &zk.CheckVersionRequest{Path: s.reservedPath(), Version: resvVersion})
		// The floor is stored in the reserved znode and never lowered, so
		// it is as durable a bound for this node as hwm/N: the claim's HWM
		// is the larger.
		hwm := max(st.hwm, resv.Floor)
		sent := time.Now()
		res, err := s.multi(ctx, conn, ops...)
		switch {
		case err == nil:
			owner, hwmVersion := int32(0), int32(0)
			if st.owner != nil {
				owner = st.owner.Version + 1
			}
			if st.hwmStat != nil {
				hwmVersion = st.hwmStat.Version
			}
			return s.newClaim(sess, n, token, owner, hwm, hwmVersion, layout, ttl, sent), false, nil
		case definite(err) && len(res) > 0 && definite(res[0].Error):
			// The record moved: reading the node again would not help,
			// the record must be compared again.
			return nil, false, errRecordMoved
		case definite(err):
			continue // something moved since the read: read again
		}
		c, err := s.reclaim(ctx, sess, n, token, ttl, layout, sent, err)
		return c, false, err
	}
	return nil, false, s.fail(fmt.Sprintf("claim node %d", n), fmt.Errorf("the node's znodes changed under %d attempts", maxRounds))
}

// reclaim decides a claim Multi whose answer was lost (cause) by reading
// after a Sync: it landed if held/N is this session's and owner/N holds
// the token. Otherwise the caller closes the session, so a Multi still
// in flight cannot leave a holder behind.
func (s *Store) reclaim(ctx context.Context, sess *session, n uint64, token string, ttl time.Duration, layout int32, sent time.Time, cause error) (*claim, error) {
	op := fmt.Sprintf("claim node %d", n)
	if err := syncPath(ctx, sess.conn, s.prefix); err != nil {
		return nil, s.fail(op, fmt.Errorf("%w: %w; then: %w", ErrOutcomeUnknown, cause, err))
	}
	st, err := s.readNode(ctx, sess.conn, n)
	if err != nil {
		return nil, s.fail(op, fmt.Errorf("%w: %w; then: %w", ErrOutcomeUnknown, cause, err))
	}
	if sess.conn.SessionID() != sess.id || st.held == nil || st.held.EphemeralOwner != sess.id ||
		st.owner == nil || string(st.ownerData) != token || st.hwmStat == nil {
		return nil, s.fail(op, fmt.Errorf("%w: %w; the re-read shows it did not land", ErrOutcomeUnknown, cause))
	}
	// Landed. Nobody but this claim writes hwm/N while held/N exists
	// (Advance checks it), so what is stored is what the Multi checked;
	// so was the reservation, whose floor only rises. The Multi checked
	// the layout znode at version layout too: the claim's fence, even if
	// a Rerecord has moved it since (its extensions then fail).
	resv, _, err := s.readReservation(ctx, sess.conn)
	if err != nil {
		return nil, s.fail(op, fmt.Errorf("%w: %w; then: %w", ErrOutcomeUnknown, cause, err))
	}
	return s.newClaim(sess, n, token, st.owner.Version, max(st.hwm, resv.Floor), st.hwmStat.Version, layout, ttl, sent), nil
}

// nodeState is what one read of node n's znodes found; nil stats are
// absent znodes.
type nodeState struct {
	held      *zk.Stat
	owner     *zk.Stat
	ownerData []byte
	hwm       int64
	hwmStat   *zk.Stat
}

func (s *Store) readNode(ctx context.Context, conn *zk.Conn, n uint64) (nodeState, error) {
	var st nodeState
	var err error
	if _, st.held, err = get(ctx, conn, s.heldPath(n)); err != nil {
		return st, err
	}
	if st.ownerData, st.owner, err = get(ctx, conn, s.ownerPath(n)); err != nil {
		return st, err
	}
	st.hwm, st.hwmStat, err = s.readHWM(ctx, conn, n)
	return st, err
}

// readHWM reads hwm/N; absent is 0.
func (s *Store) readHWM(ctx context.Context, conn *zk.Conn, n uint64) (int64, *zk.Stat, error) {
	data, st, err := get(ctx, conn, s.hwmPath(n))
	if err != nil || st == nil {
		return 0, nil, err
	}
	hwm, err := strconv.ParseInt(string(data), 10, 64)
	if err != nil {
		return 0, nil, fmt.Errorf("read HWM of node %d: value %q: %w", n, data, ErrCorrupt)
	}
	return hwm, st, nil
}

// newToken returns 128 random bits: a token unique to one acquisition.
func newToken() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("zkstore: new token: %w", err)
	}
	return hex.EncodeToString(b), nil
}
