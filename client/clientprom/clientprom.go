// Package clientprom exposes the figures of a firn Go client
// (client.Client.Stats) as Prometheus metrics:
//
//	c, err := client.New(cfg)
//	prometheus.MustRegister(clientprom.New(c))
//
// It is a package of its own so that a program using the client without
// Prometheus does not link the Prometheus client library: the client
// package imports neither.
package clientprom

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/firn-id/firn/client"
)

var (
	failovers = prometheus.NewDesc("firn_client_failovers_total",
		"Requests retried on another server after one failed.", nil, nil)
	hedges = prometheus.NewDesc("firn_client_hedges_total",
		"Requests sent to a second server while the first had not answered within its budget.", nil, nil)
	up = prometheus.NewDesc("firn_client_endpoint_up",
		"1 while a server is in rotation, 0 from a failed request until its health check passes.", []string{"endpoint"}, nil)
	failures = prometheus.NewDesc("firn_client_endpoint_failures_total",
		"Requests to a server that failed, and its snowflake answers too old to serve.", []string{"endpoint"}, nil)
	slow = prometheus.NewDesc("firn_client_endpoint_slow_total",
		"Requests to a server hedged past their budget, and its answers too old to serve.", []string{"endpoint"}, nil)
	latency = prometheus.NewDesc("firn_client_endpoint_latency_seconds",
		"A server's smoothed answer time; 0 until one is measured.", []string{"endpoint"}, nil)
	buffered = prometheus.NewDesc("firn_client_buffered_ids",
		"IDs in a buffer's memory.", []string{"mode", "tag"}, nil)
	size = prometheus.NewDesc("firn_client_buffer_target_ids",
		"The level a buffer's refills aim for, following the rate.", []string{"mode", "tag"}, nil)
	rate = prometheus.NewDesc("firn_client_take_rate",
		"IDs taken from a buffer per second, smoothed.", []string{"mode", "tag"}, nil)
	refills = prometheus.NewDesc("firn_client_refills_total",
		"A buffer's refill requests that succeeded.", []string{"mode", "tag"}, nil)
	fetched = prometheus.NewDesc("firn_client_fetched_ids_total",
		"IDs a buffer's refills brought.", []string{"mode", "tag"}, nil)
	dropped = prometheus.NewDesc("firn_client_dropped_ids_total",
		"Snowflake IDs dropped unused past MaxAge.", []string{"mode", "tag"}, nil)
	errs = prometheus.NewDesc("firn_client_refill_errors_total",
		"A buffer's refills that failed on every server tried.", []string{"mode", "tag"}, nil)
)

// Collector reads a client's Stats at every scrape.
type Collector struct {
	stats func() client.Stats
}

// New returns the collector of c's figures.
func New(c *client.Client) *Collector { return &Collector{stats: c.Stats} }

// Describe sends the descriptions of every metric.
func (*Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{failovers, hedges, up, failures, slow, latency, buffered, size, rate, refills, fetched, dropped, errs} {
		ch <- d
	}
}

// Collect sends the client's current figures. A series whose label is
// not valid UTF-8 (a tag handle no server can serve) is left out.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	s := c.stats()
	send := func(d *prometheus.Desc, t prometheus.ValueType, v float64, labels ...string) {
		if m, err := prometheus.NewConstMetric(d, t, v, labels...); err == nil {
			ch <- m
		}
	}
	send(failovers, prometheus.CounterValue, float64(s.Failovers))
	send(hedges, prometheus.CounterValue, float64(s.Hedges))
	for _, e := range s.Endpoints {
		isUp := 0.0
		if e.Healthy {
			isUp = 1
		}
		send(up, prometheus.GaugeValue, isUp, e.Endpoint)
		send(failures, prometheus.CounterValue, float64(e.Failures), e.Endpoint)
		send(slow, prometheus.CounterValue, float64(e.Slow), e.Endpoint)
		send(latency, prometheus.GaugeValue, e.Latency.Seconds(), e.Endpoint)
	}
	for _, b := range s.Buffers {
		mode := "segment"
		if b.Tag == "" {
			mode = "snowflake"
		}
		send(buffered, prometheus.GaugeValue, float64(b.Buffered), mode, b.Tag)
		send(size, prometheus.GaugeValue, float64(b.Size), mode, b.Tag)
		send(rate, prometheus.GaugeValue, b.Rate, mode, b.Tag)
		send(refills, prometheus.CounterValue, float64(b.Refills), mode, b.Tag)
		send(fetched, prometheus.CounterValue, float64(b.Fetched), mode, b.Tag)
		send(dropped, prometheus.CounterValue, float64(b.Dropped), mode, b.Tag)
		send(errs, prometheus.CounterValue, float64(b.Errors), mode, b.Tag)
	}
}
