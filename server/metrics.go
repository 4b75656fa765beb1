package server

import (
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
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
	failures *prometheus.CounterVec
}

func newMetrics(svc *Service) *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		issued: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "firn_ids_issued_total",
			Help: "IDs handed out, by mode (snowflake, segment) and tag (segment mode)."}, []string{"mode", "tag"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "firn_request_duration_seconds",
			Help:    "HTTP request latency by route.",
			Buckets: []float64{.00005, .0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5}}, []string{"route"}),
		failures: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "firn_request_failures_total",
			Help: "HTTP requests answered with an error status, by route and status."}, []string{"route", "status"}),
	}
	m.reg.MustRegister(m.issued, m.duration, m.failures,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if g := svc.Snowflake; g != nil {
		end := g.Layout().Capacity().Last.Add(g.Layout().Tick)
		m.reg.MustRegister(
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "firn_clock_offset_seconds",
				Help: "How far the generator's clock is ahead of the wall clock (negative: behind)."},
				func() float64 { return svc.generator().Offset().Seconds() }),
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
	if svc.Segments != nil {
		m.reg.MustRegister(segmentCollector{svc})
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

// segmentCollector reads the allocator's buffers at scrape time.
type segmentCollector struct{ svc *Service }

func (segmentCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{segLeft, segNext, segStep, segErrs, segOK} {
		ch <- d
	}
}

func (c segmentCollector) Collect(ch chan<- prometheus.Metric) {
	for _, s := range c.svc.Segments.Stats() {
		ch <- prometheus.MustNewConstMetric(segLeft, prometheus.GaugeValue, float64(s.Left), s.Tag)
		ch <- prometheus.MustNewConstMetric(segNext, prometheus.GaugeValue, float64(s.Prefetched), s.Tag)
		ch <- prometheus.MustNewConstMetric(segStep, prometheus.GaugeValue, float64(s.Step), s.Tag)
		ch <- prometheus.MustNewConstMetric(segErrs, prometheus.CounterValue, float64(s.Errors), s.Tag)
		ch <- prometheus.MustNewConstMetric(segOK, prometheus.CounterValue, float64(s.Fetches), s.Tag)
	}
}

func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
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
// histogram once, not per request.
func (m *metrics) observer(route string) func(w http.ResponseWriter, r *http.Request, serve http.HandlerFunc) {
	hist := m.duration.WithLabelValues(route)
	return func(w http.ResponseWriter, r *http.Request, serve http.HandlerFunc) {
		start := time.Now()
		sw := statusWriters.Get().(*statusWriter)
		sw.ResponseWriter, sw.status = w, http.StatusOK
		serve(sw, r)
		status := sw.status
		sw.ResponseWriter = nil
		statusWriters.Put(sw)
		hist.Observe(time.Since(start).Seconds())
		if status >= 400 {
			m.failures.WithLabelValues(route, strconv.Itoa(status)).Inc()
		}
	}
}

// statusWriters recycles the writers that note a response's status.
var statusWriters = sync.Pool{New: func() any { return new(statusWriter) }}
