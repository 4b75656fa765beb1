package server

import (
	"net/http"
	"net/netip"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/time/rate"
)

// maxClients bounds the client addresses whose anonymous rate is kept in
// one generation of clientLimits: past it, or after clientGeneration, the
// older generation is forgotten.
const (
	maxClients       = 1 << 16
	clientGeneration = time.Minute
)

// clientLimits is the anonymous rate of each client address: an IPv4
// address, or an IPv6 /64 (one host's usual share). Its memory is
// bounded: two generations of at most maxClients addresses each; an
// address forgotten gets a full bucket again, which a client idle for a
// second has anyway.
type clientLimits struct {
	rate      float64
	mu        sync.Mutex
	cur, prev map[netip.Addr]*rate.Limiter
	since     time.Time
}

func newClientLimits(perSecond float64) *clientLimits {
	return &clientLimits{rate: perSecond, cur: map[netip.Addr]*rate.Limiter{}, since: time.Now()}
}

// allow takes one request of the client at remote (host:port, as
// http.Request.RemoteAddr) from its bucket.
func (c *clientLimits) allow(remote string) bool {
	key := clientKey(remote)
	now := time.Now()
	c.mu.Lock()
	if len(c.cur) >= maxClients || now.Sub(c.since) > clientGeneration {
		c.prev, c.cur, c.since = c.cur, make(map[netip.Addr]*rate.Limiter, len(c.cur)), now
	}
	l := c.cur[key]
	if l == nil {
		if l = c.prev[key]; l == nil {
			l = rate.NewLimiter(rate.Limit(c.rate), max(1, int(c.rate)))
		}
		c.cur[key] = l
	}
	c.mu.Unlock()
	return l.AllowN(now, 1)
}

// clientKey is the address whose bucket a request takes from: the IPv4
// address, or the /64 of an IPv6 one. An address that cannot be read
// (no real connection has one) shares the zero address's bucket.
func clientKey(remote string) netip.Addr {
	ap, err := netip.ParseAddrPort(remote)
	if err != nil {
		return netip.Addr{}
	}
	a := ap.Addr().Unmap()
	if a.Is6() {
		p, _ := a.Prefix(64)
		return p.Addr()
	}
	return a
}

// anonymousCounters count, for one route, the requests an anonymous grant
// let through and those it refused for their client's rate.
type anonymousCounters struct {
	served, limited prometheus.Counter
}

// count counts one request an anonymous grant decided: no is its
// refusal (over the rate), or nil.
func (c anonymousCounters) count(no *refusal) {
	if c.served == nil {
		return
	}
	if no != nil && no.status == http.StatusTooManyRequests {
		c.limited.Inc()
		return
	}
	c.served.Inc()
}

// anonymousMetrics are the counters of anonymous requests by route,
// registered with the service's other metrics on first use.
type anonymousMetrics struct {
	once            sync.Once
	served, limited *prometheus.CounterVec
}

// anonymousOf returns the anonymous counters of route.
func (m *metrics) anonymousOf(route string) anonymousCounters {
	a := &m.anonymous
	a.once.Do(func() {
		a.served = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "firn_anonymous_requests_total",
			Help: "HTTP requests without credentials that an anonymous grant (auth.anonymous) let through, by route."}, []string{"route"})
		a.limited = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "firn_anonymous_rate_limited_total",
			Help: "HTTP requests without credentials refused with 429 for their client's rate (auth.anonymous_rate), by route."}, []string{"route"})
		m.reg.MustRegister(a.served, a.limited)
	})
	return anonymousCounters{served: a.served.WithLabelValues(route), limited: a.limited.WithLabelValues(route)}
}
