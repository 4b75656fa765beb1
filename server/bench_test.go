package server_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/firn-id/firn/firnpb"
	"github.com/firn-id/firn/segment"
	"github.com/firn-id/firn/segment/segmenttest"
	"github.com/firn-id/firn/server"
	"github.com/firn-id/firn/snowflake"
)

// BenchmarkHandler compares the handler of one snowflake ID, with a token
// and metrics, with a trivial handler returning a counter.
func BenchmarkHandler(b *testing.B) {
	var n atomic.Int64
	trivial := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(`{"id":"` + strconv.FormatInt(n.Add(1), 10) + `"}` + "\n"))
	})
	g, _ := snowflake.New(snowflake.Config{Reservation: snowflake.Unreserved()})
	auth, _ := server.NewAuth([]server.Token{{Name: "b", Secret: "bench-secret-0123", Scopes: []string{"snowflake"}}}, server.Anonymous{})
	firn := handlerOf(b, &server.Config{Snowflake: g, Auth: auth})
	for _, c := range []struct {
		name string
		h    http.Handler
	}{{"trivial", trivial}, {"firn", firn}} {
		b.Run(c.name, func(b *testing.B) {
			r := httptest.NewRequest("GET", "/v1/snowflake/next", nil)
			r.Header.Set("Authorization", "Bearer bench-secret-0123")
			b.ReportAllocs()
			for b.Loop() {
				w := httptest.NewRecorder()
				c.h.ServeHTTP(w, r)
				if w.Code != 200 {
					b.Fatal(w.Code)
				}
			}
		})
	}
}

// BenchmarkRoutes serves one ID from each route that answers from memory
// — firn's own, Leaf's and Tinyid's — with a token checked and metrics
// on, beside what a user would write instead (bench/trivial): a counter
// behind http.ServeMux on the same patterns, reading the path value. The
// figures bench/serve.sh measures over the network, without it.
func BenchmarkRoutes(b *testing.B) {
	var n atomic.Int64
	trivial := http.NewServeMux()
	for _, p := range []struct{ pattern, name string }{{"GET /v1/snowflake/next", ""}, {"GET /v1/segments/{tag}/next", "tag"}} {
		trivial.HandleFunc(p.pattern, func(w http.ResponseWriter, r *http.Request) {
			if p.name != "" && r.PathValue(p.name) == "" {
				http.NotFound(w, r)
				return
			}
			w.Header()["Content-Type"] = []string{"text/plain; charset=utf-8"}
			_, _ = w.Write(strconv.AppendInt(nil, n.Add(1), 10))
		})
	}
	s := segmenttest.NewMemStore()
	if err := s.CreateTag(context.Background(), "order", 1, 1_000_000, ""); err != nil {
		b.Fatal(err)
	}
	a, _ := segment.NewAllocator(s, segment.Config{MaxStep: 1 << 30})
	defer a.Close(context.Background())
	// The twitter layout's 4,096 IDs a millisecond keep the generator
	// from waiting on its clock, which would hide the handler's cost.
	twitter, _ := snowflake.Preset("twitter")
	g, _ := snowflake.New(snowflake.Config{Layout: twitter, Reservation: snowflake.Unreserved()})
	auth, _ := server.NewAuth([]server.Token{{Name: "b", Secret: "bench-secret-0123", Scopes: []string{"snowflake", "tag:*"}}}, server.Anonymous{})
	firn := handlerOf(b, &server.Config{Snowflake: g, Segments: a, SegmentStore: s, Auth: auth})
	for _, c := range []struct {
		name, target string
		h            http.Handler
	}{
		{"trivial", "/v1/snowflake/next", trivial},
		{"trivial-wildcard", "/v1/segments/order/next", trivial},
		{"snowflake", "/v1/snowflake/next", firn},
		{"segment", "/v1/segments/order/next", firn},
		{"leaf-snowflake", "/api/snowflake/get/order", firn},
		{"leaf-segment", "/api/segment/get/order", firn},
		{"tinyid-nextId", "/tinyid/id/nextId?bizType=order", firn},
		{"tinyid-nextIdSimple", "/tinyid/id/nextIdSimple?bizType=order", firn},
	} {
		b.Run(c.name, func(b *testing.B) {
			tmpl := httptest.NewRequest("GET", c.target, nil)
			tmpl.Header.Set("Authorization", "Bearer bench-secret-0123")
			w := &discardWriter{h: http.Header{}}
			b.ReportAllocs()
			for b.Loop() {
				clear(w.h)
				w.code = 0
				// A fresh request each time, as a server makes: what a
				// handler allocates on a request (a path value's map,
				// a parsed form) shows.
				r := new(http.Request)
				*r = *tmpl
				c.h.ServeHTTP(w, r)
				if w.code != 0 && w.code != 200 {
					b.Fatal(w.code)
				}
			}
		})
	}
}

// discardWriter is a ResponseWriter that keeps the status only, so that
// the benchmark measures the handler rather than a recorder.
type discardWriter struct {
	h    http.Header
	code int
}

func (w *discardWriter) Header() http.Header         { return w.h }
func (w *discardWriter) Write(p []byte) (int, error) { return len(p), nil }
func (w *discardWriter) WriteHeader(code int)        { w.code = code }

// BenchmarkGRPCStream receives segment batches of 1,000 from Stream over
// loopback TCP for one second per iteration and reports the int64 IDs the
// client received per second.
func BenchmarkGRPCStream(b *testing.B) {
	s := segmenttest.NewMemStore()
	s.CreateTag(context.Background(), "order", 1, 1_000_000, "")
	a, _ := segment.NewAllocator(s, segment.Config{MaxStep: 1 << 30})
	defer a.Close(context.Background())
	g, _ := snowflake.New(snowflake.Config{Reservation: snowflake.Unreserved()})
	srv := newGRPCServer(b, &server.Config{Snowflake: g, Segments: a, SegmentStore: s})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go srv.Serve(ln)
	defer srv.Stop()
	conn, err := grpc.Dial(ln.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	c := firnpb.NewFirnClient(conn)
	var ids int64
	var elapsed time.Duration
	for range b.N {
		ctx, cancel := context.WithCancel(context.Background())
		stream, err := c.Stream(ctx, &firnpb.StreamRequest{Tag: "order", Batch: 1000})
		if err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		for time.Since(start) < time.Second {
			msg, err := stream.Recv()
			if err != nil {
				b.Fatal(err)
			}
			ids += int64(len(msg.Ids))
		}
		elapsed += time.Since(start)
		cancel()
	}
	b.ReportMetric(float64(ids)/elapsed.Seconds(), "ids/s")
}
