package server

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/firn-id/firn/api"
	"github.com/firn-id/firn/snowflake"
)

// service is what the adapters serve: the configuration with its
// defaults, and the node currently held.
type service struct {
	Config

	node atomic.Pointer[nodeState] // set by Replace
	// order is the api.Order of every snowflake batch, from the layout
	// and opaque mode: a generator Replace installs is of the same layout
	// (one namespace, one layout).
	order  string
	wide   wideGen      // UUIDv7 and ULID over the node's generator (wide.go)
	panics atomic.Int64 // handlers that panicked

	started time.Time       // when New built the service
	rate    *throughputRing // IDs issued per second, per mode (/v1/status)
	recent  recentErrors    // the latest errors (/v1/status)
	// lookups bounds, per client, the reveals of tags the allocator has
	// not loaded: each may ask the store (RevealLookupRate).
	lookups *clientLimits
}

// nodeState is a generator and the lease it runs on.
type nodeState struct {
	gen   *snowflake.Generator
	lease Lease
}

// Replace installs a generator and its lease in place of the current ones,
// after the node's lease was lost and a node acquired again. Requests in
// flight on the old generator finish on it; it stops at its HWM, which the
// new lease starts past (or it holds another node).
func (s *service) Replace(g *snowflake.Generator, l Lease) {
	if old := s.lease(); old != nil && old.Err() != nil {
		// The loss may have come and gone between two reads of
		// /v1/status: keep it on the page.
		s.recent.note("lease", old.Err(), time.Now())
	}
	s.node.Store(&nodeState{gen: g, lease: l})
}

// snowflakeOrder is the api.Order of cfg's snowflake batches:
// increasing only when its generator issues increasing IDs and opaque
// mode does not permute them. A client checks a batch said to increase
// for that, and every batch for a repeated ID.
func snowflakeOrder(cfg Config) string {
	if cfg.Snowflake == nil || cfg.Opaque != nil || !cfg.Snowflake.Layout().Increasing() {
		return api.OrderUnordered
	}
	return api.OrderIncreasing
}

// layout is the layout decoding reads: the generator's, or, while none
// runs (snowflake off, no node held yet), Config.Layout; ok is false
// when there is neither.
func (s *service) layout() (l snowflake.Layout, ok bool) {
	if g := s.generator(); g != nil {
		return g.Layout(), true
	}
	if s.Layout != nil {
		return *s.Layout, true
	}
	return l, false
}

// modeOff returns why a route of scope kind cannot answer on this
// server, or nil: issuing snowflake IDs needs a generator, decoding
// only a layout, a tag's routes the allocator.
func (s *service) modeOff(kind scopeKind) error {
	_, decodes := s.layout()
	issues := kind == scopeSnowflake || kind == scopeTag || kind == scopeRange
	switch {
	case issues && s.Revoked != nil && s.Revoked() != nil:
		// A site's value released or taken: neither its snowflake IDs
		// nor its segment ranges are issued any more.
		return fmt.Errorf("%w: %w", ErrSiteStopped, s.Revoked())
	case kind == scopeSnowflake && s.generator() == nil, kind == scopeDecode && !decodes:
		return ErrSnowflakeOff
	case (kind == scopeTag || kind == scopeRange) && s.Segments == nil:
		return s.segmentsOff()
	}
	return nil
}

// segmentsOff is ErrSegmentsOff with Config.SegmentsOff's reason, if any.
func (s *service) segmentsOff() error {
	if s.SegmentsOff == "" {
		return ErrSegmentsOff
	}
	return fmt.Errorf("%w: %s", ErrSegmentsOff, s.SegmentsOff)
}

func (s *service) generator() *snowflake.Generator {
	if st := s.node.Load(); st != nil {
		return st.gen
	}
	return s.Snowflake
}

func (s *service) lease() Lease {
	if st := s.node.Load(); st != nil {
		return st.lease
	}
	return s.Lease
}

// openReason is err, a reason not to serve, as a route open to anyone
// shows it: in brief's words (Config.Brief), or when it has none, or
// brief is nil, its message redacted.
func openReason(err error, brief func(error) string) string {
	if brief != nil {
		if b := brief(err); b != "" {
			return b
		}
	}
	return redactSecrets(err.Error())
}

// ready says why the service may not serve: the Ready hook, or the lease
// lost or its HWM not ahead. It does no I/O (DESIGN.md §6): /readyz is
// open to anyone, and a segment store that is down shows per tag in the
// metrics (firn_segment_fetch_errors_total, firn_segment_buffered_ids)
// and as 503 on that tag's requests once its buffers run dry.
func (s *service) ready() error {
	if s.Revoked != nil {
		if err := s.Revoked(); err != nil {
			return fmt.Errorf("%w: %w", ErrSiteStopped, err)
		}
	}
	if s.Ready != nil {
		if err := s.Ready(); err != nil {
			return err
		}
	}
	if l := s.lease(); l != nil {
		if err := l.Err(); err != nil {
			return fmt.Errorf("node %d: %w", l.Node(), err)
		}
		if ahead := l.Limit() - s.generator().Now().UnixMilli(); ahead <= 0 {
			return fmt.Errorf("node %d: the HWM is not ahead of the clock (%d ms)", l.Node(), ahead)
		}
	}
	return nil
}
