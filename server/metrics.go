package server

import (
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/firn-id/firn/internal/buildinfo"
	"github.com/firn-id/firn/segment"
)

// Lease is what the metrics read of the node's lease.
type Lease interface {
	Node() uint64
	Limit() int64 // the confirmed HWM, Unix ms
	Err() error   // nil while held
}

// metrics are the service's Prometheus metrics, in a registry of its own.
type metrics struct {
	reg      *prometheus.Registry
	issued   *prometheus.CounterVec
	duration *prometheus.HistogramVec
	requests *prometheus.CounterVec
	failures *prometheus.CounterVec
	// dropped counts series left out because a label could not be
	// written (see labelValue).
	dropped atomic.Int64
	log     *slog.Logger
	// anonymous counts requests anonymous grants decided (anonymous.go).
	anonymous anonymousMetrics
	// rate counts the IDs issued per second for /v1/status (throughput.go).
	rate *throughputRing
}

func newMetrics(svc *service) *metrics {
	m := &metrics{
		reg:  prometheus.NewRegistry(),
		log:  svc.logger(),
		rate: svc.rate,
		issued: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "firn_ids_issued_total",
			Help: "IDs handed out, by mode (snowflake, segment) and tag (segment mode)."}, []string{"mode", "tag"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "firn_request_duration_seconds",
			Help: "Request latency by route: an HTTP route (\"GET /v1/snowflake/next\") or a gRPC method (\"/firn.v1.Firn/Batch\"); " +
				"for a gRPC stream, the time to produce each message it sends.",
			Buckets: []float64{.00005, .0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5}}, []string{"route"}),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "firn_requests_total",
			Help: "Requests answered, HTTP and gRPC, by route and status class (2xx, 3xx, 4xx, 5xx; a gRPC code counts as the HTTP status it maps to)."},
			[]string{"route", "class"}),
		failures: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "firn_request_failures_total",
			Help: "Requests, HTTP and gRPC, answered with an error status, by route and HTTP status (a gRPC code counts as the HTTP status it maps to)."},
			[]string{"route", "status"}),
	}
	m.reg.MustRegister(m.issued, m.duration, m.requests, m.failures,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "firn_panics_total",
			Help: "Requests (HTTP and gRPC) whose handler panicked: answered 500 / Internal and logged with the stack. A bug in firn."},
			func() float64 { return float64(svc.panics.Load()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "firn_metrics_dropped_total",
			Help: "Series left out of the metrics because a label value could not be written (two tags the same once escaped)."},
			func() float64 { return float64(m.dropped.Load()) }),
		buildInfo())
	if g := svc.Snowflake; g != nil {
		end := g.Layout().Capacity().Last.Add(g.Layout().Tick)
		m.reg.MustRegister(
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "firn_clock_offset_seconds",
				Help: "How far the generator's clock is ahead of the wall clock (negative: behind)."},
				func() float64 { return svc.generator().AheadOfWall().Seconds() }),
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "firn_layout_remaining_seconds",
				Help: "Time left until the layout's last representable tick."},
				func() float64 { return time.Until(end).Seconds() }))
		if svc.Lease != nil {
			m.reg.MustRegister(
				prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "firn_lease_held",
					Help: "1 while the node's lease is held, 0 once lost."},
					func() float64 {
						if svc.lease().Err() != nil {
							return 0
						}
						return 1
					}),
				prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "firn_node", Help: "The node ID held."},
					func() float64 { return float64(svc.lease().Node()) }),
				prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "firn_hwm_headroom_seconds",
					Help: "How far the confirmed HWM is ahead of the generator's clock."},
					func() float64 { return float64(svc.lease().Limit()-svc.generator().Now().UnixMilli()) / 1000 }))
		}
	}
	if svc.Site != "" && svc.Revoked != nil {
		m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "firn_site_revoked",
			Help:        "1 once the site's process stopped issuing for good: its value was released or taken (the log and /readyz say why); 0 before.",
			ConstLabels: prometheus.Labels{"site": svc.Site}},
			func() float64 {
				if svc.Revoked() != nil {
					return 1
				}
				return 0
			}))
	}
	if svc.Segments != nil {
		m.reg.MustRegister(segmentCollector{stats: svc.Segments.Stats, dropped: &m.dropped, log: m.log})
	}
	return m
}

var (
	segLeft = prometheus.NewDesc("firn_segment_buffered_ids", "IDs left in a tag's current range.", []string{"tag"}, nil)
	segNext = prometheus.NewDesc("firn_segment_prefetched_ids", "IDs in a tag's fetched next range.", []string{"tag"}, nil)
	segStep = prometheus.NewDesc("firn_segment_step", "The step of a tag's next fetch.", []string{"tag"}, nil)
	segErrs = prometheus.NewDesc("firn_segment_fetch_errors_total", "Range fetches that failed, by tag.", []string{"tag"}, nil)
	segOK   = prometheus.NewDesc("firn_segment_fetches_total", "Ranges fetched, by tag.", []string{"tag"}, nil)
)

// labelValue is s as a Prometheus label value, which must be valid UTF-8
// (the client library panics on anything else): s itself when it is valid,
// otherwise s with each byte that is not part of a valid character
// written as \xNN. Such a label can equal a valid tag spelled with a
// backslash; the collector drops the second of two equal labels and
// counts it in firn_metrics_dropped_total, and counters sum them.
func labelValue(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			fmt.Fprintf(&b, `\x%02x`, s[i])
		} else {
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// segmentCollector reads the allocator's buffers at scrape time. It
// cannot panic on any tag: labels are escaped (labelValue), and a series
// it cannot write is dropped and counted.
type segmentCollector struct {
	stats   func() []segment.Stats
	dropped *atomic.Int64
	log     *slog.Logger
}

func (segmentCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{segLeft, segNext, segStep, segErrs, segOK} {
		ch <- d
	}
}

func (c segmentCollector) Collect(ch chan<- prometheus.Metric) {
	// The registry runs collectors on goroutines of its own, where a panic
	// would end the process: whatever happens here costs series, not it.
	defer func() {
		if v := recover(); v != nil {
			c.dropped.Add(1)
			c.log.Error("panic collecting segment metrics", "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
		}
	}()
	seen := map[string]bool{}
	for _, s := range c.stats() {
		tag := labelValue(s.Tag)
		if seen[tag] {
			c.dropped.Add(1)
			continue
		}
		seen[tag] = true
		for _, v := range []struct {
			desc  *prometheus.Desc
			typ   prometheus.ValueType
			value int64
		}{
			{segLeft, prometheus.GaugeValue, s.Left},
			{segNext, prometheus.GaugeValue, s.Prefetched},
			{segStep, prometheus.GaugeValue, s.Step},
			{segErrs, prometheus.CounterValue, s.Errors},
			{segOK, prometheus.CounterValue, s.Fetches},
		} {
			m, err := prometheus.NewConstMetric(v.desc, v.typ, float64(v.value), tag)
			if err != nil {
				c.dropped.Add(1)
				continue
			}
			ch <- m
		}
	}
}

// issuedAdd counts n IDs of a mode and tag; a label it cannot write is
// dropped and counted, never a panic.
func (m *metrics) issuedAdd(mode, tag string, n int) {
	m.rate.add(rateMode(mode), n)
	c, err := m.issued.GetMetricWithLabelValues(mode, labelValue(tag))
	if err != nil {
		m.dropped.Add(1)
		return
	}
	c.Add(float64(n))
}

func (m *metrics) handler() http.Handler {
	// A collector that fails costs its own series, never the scrape.
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError,
		ErrorLog: slog.NewLogLogger(m.log.Handler(), slog.LevelError)})
}

// statusWriter records the status a handler answered.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(s int) {
	w.status = s
	w.ResponseWriter.WriteHeader(s)
}

// observer measures the requests of one route; it resolves the route's
// series once, not per request.
func (m *metrics) observer(route string) func(w http.ResponseWriter, r *http.Request, serve http.HandlerFunc) {
	rm := m.route(route)
	return func(w http.ResponseWriter, r *http.Request, serve http.HandlerFunc) {
		start := time.Now()
		sw := statusWriters.Get().(*statusWriter)
		sw.ResponseWriter, sw.status = w, http.StatusOK
		serve(sw, r)
		status := sw.status
		sw.ResponseWriter = nil
		statusWriters.Put(sw)
		rm.done(status, time.Since(start))
	}
}

// statusClasses are the values of firn_requests_total's class label.
var statusClasses = [...]string{"2xx", "3xx", "4xx", "5xx"}

// routeMetrics are the series of one HTTP route or gRPC method, resolved
// once: every request of either protocol is counted by done.
type routeMetrics struct {
	m       *metrics
	route   string
	latency prometheus.Observer
	classes [len(statusClasses)]prometheus.Counter
}

func (m *metrics) route(route string) *routeMetrics {
	rm := &routeMetrics{m: m, route: route, latency: m.duration.WithLabelValues(route)}
	for i, c := range statusClasses {
		rm.classes[i] = m.requests.WithLabelValues(route, c)
	}
	return rm
}

// done counts a request answered with an HTTP status after d: its class,
// its latency, and a failure if the status is one.
func (rm *routeMetrics) done(status int, d time.Duration) {
	rm.latency.Observe(d.Seconds())
	rm.countStatus(status)
}

// countStatus counts a request answered with an HTTP status, without its
// latency (a stream's is per message).
func (rm *routeMetrics) countStatus(status int) {
	rm.classes[min(max(status/100-2, 0), len(statusClasses)-1)].Inc()
	if status >= 400 {
		rm.m.failures.WithLabelValues(rm.route, strconv.Itoa(status)).Inc()
	}
}

// statusWriters recycles the writers that note a response's status.
var statusWriters = sync.Pool{New: func() any { return new(statusWriter) }}

// buildInfo is the constant series firn_build_info{version, commit,
// go_version} 1, which dashboards join on to show what is running.
func buildInfo() prometheus.Collector {
	bi := buildinfo.Read()
	g := prometheus.NewGauge(prometheus.GaugeOpts{Name: "firn_build_info",
		Help:        "The running build: its module version, VCS commit and Go version. Always 1.",
		ConstLabels: prometheus.Labels{"version": labelValue(bi.Version), "commit": labelValue(bi.Commit), "go_version": bi.GoVersion}})
	g.Set(1)
	return g
}
