package backend

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/firn-id/firn/node"
	"github.com/firn-id/firn/nodeid"
)

// SiteStop stops a site's process for good once its value was released
// or taken: its node holder, when it holds one, and every route that
// issues, segments' included (server.Config.Revoked).
type SiteStop struct {
	holder *node.Holder // nil: no node held (snowflake mode off)
	err    atomic.Pointer[error]
	log    *slog.Logger
}

// NewSiteStop returns the stop of a process holding h (nil: none).
func NewSiteStop(h *node.Holder, log *slog.Logger) *SiteStop {
	return &SiteStop{holder: h, log: log}
}

// Revoke stops the process for good, saying why once.
func (s *SiteStop) Revoke(err error) {
	if s.holder != nil {
		s.holder.Revoke(err) // which logs it
	}
	if s.err.CompareAndSwap(nil, &err) && s.holder == nil {
		s.log.Error("stopped issuing for good", "err", err)
	}
}

// Revoked returns why the process stopped issuing for good, or nil.
func (s *SiteStop) Revoked() error {
	if s.holder != nil {
		if err := s.holder.Revoked(); err != nil {
			return err
		}
	}
	if err := s.err.Load(); err != nil {
		return *err
	}
	return nil
}

// watchRecord re-reads the site record in nodes every third of the lease
// TTL, for a site's process that holds no node (segments alone), which no
// renewal stops: a record released, another site's, or a copy's stops it
// for good. A read that fails is an outage, waited out.
func (o Options) watchRecord(ctx context.Context, nodes nodeid.Store, s nodeid.Site, stop *SiteStop) {
	every := max(o.Registry.LeaseTTL/3, time.Second)
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(every):
		}
		err := o.readSite(ctx, func(ctx context.Context) error {
			_, err := nodeid.CheckSite(ctx, nodes, o.Space, s)
			return err
		})
		if errors.Is(err, nodeid.ErrSite) || errors.Is(err, nodeid.ErrLayoutMismatch) {
			stop.Revoke(err)
			return
		}
	}
}
