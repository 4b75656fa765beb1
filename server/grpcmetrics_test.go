package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	grpcstatus "google.golang.org/grpc/status"

	"github.com/firn-id/firn/firnpb"
	"github.com/firn-id/firn/segment"
	"github.com/firn-id/firn/segment/segmenttest"
	"github.com/firn-id/firn/server"
)

// TestGRPCMetrics drives every firn.v1.Firn method and the health check
// over gRPC, and reads them in the HTTP API's /metrics: IDs issued by mode
// and tag, requests by method and status class, failures by status,
// latency histograms.
func TestGRPCMetrics(t *testing.T) {
	s := segmenttest.NewMemStore()
	s.CreateTag(context.Background(), "order", 1, 100, "")
	a, err := segment.NewAllocator(s, segment.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close(context.Background()) })
	srv := newServer(t, &server.Config{Snowflake: unreservedGenerator(t), Segments: a, SegmentStore: s, MaxBatch: 1000})
	gs := srv.GRPC()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go gs.Serve(ln)
	t.Cleanup(gs.Stop)
	conn, err := grpc.Dial(ln.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	c := firnpb.NewFirnClient(conn)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	one, err := c.Next(ctx, &firnpb.NextRequest{})
	must("Next", err)
	_, err = c.Batch(ctx, &firnpb.BatchRequest{Count: 5})
	must("Batch", err)
	_, err = c.Decode(ctx, &firnpb.DecodeRequest{Id: uint64(one.Id)})
	must("Decode", err)
	_, err = c.SegmentNext(ctx, &firnpb.SegmentRequest{Tag: "order"})
	must("SegmentNext", err)
	_, err = c.SegmentBatch(ctx, &firnpb.SegmentBatchRequest{Tag: "order", Count: 5})
	must("SegmentBatch", err)
	for _, tag := range []string{"", "order"} {
		sctx, stop := context.WithCancel(ctx)
		st, err := c.Stream(sctx, &firnpb.StreamRequest{Tag: tag, Batch: 10})
		must("Stream", err)
		for range 3 {
			_, err := st.Recv()
			must("Stream.Recv", err)
		}
		stop()
		for err == nil {
			_, err = st.Recv()
		}
	}
	_, err = healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{})
	must("Check", err)
	// Failures: an unknown tag (404), a count out of range (400).
	if _, err := c.SegmentNext(ctx, &firnpb.SegmentRequest{Tag: "nope"}); code(err) != codes.NotFound {
		t.Fatalf("SegmentNext of an unknown tag: %v", err)
	}
	if _, err := c.Batch(ctx, &firnpb.BatchRequest{Count: 0}); code(err) != codes.InvalidArgument {
		t.Fatalf("Batch of 0: %v", err)
	}

	// The streams end when the server sees the cancel: wait for their
	// count, then read the rest.
	var body string
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		body = scrape(t, srv)
		if strings.Contains(body, `firn_requests_total{class="2xx",route="/firn.v1.Firn/Stream"} 2`) || time.Now().After(deadline) {
			break
		}
	}
	snowStream := value(t, body, `firn_ids_issued_total{mode="snowflake",tag=""}`) - 1 - 5
	segStream := value(t, body, `firn_ids_issued_total{mode="segment",tag="order"}`) - 1 - 5
	// Each stream sent at least the 3 batches read, whole batches only.
	for name, v := range map[string]float64{"snowflake": snowStream, "segment": segStream} {
		if v < 30 || int(v)%10 != 0 {
			t.Errorf("%s IDs counted for its stream: %v, want whole batches of 10, at least 3", name, v)
		}
	}
	for _, want := range []string{
		`firn_requests_total{class="2xx",route="/firn.v1.Firn/Next"} 1`,
		`firn_requests_total{class="2xx",route="/firn.v1.Firn/Batch"} 1`,
		`firn_requests_total{class="4xx",route="/firn.v1.Firn/Batch"} 1`,
		`firn_requests_total{class="2xx",route="/firn.v1.Firn/Decode"} 1`,
		`firn_requests_total{class="2xx",route="/firn.v1.Firn/SegmentNext"} 1`,
		`firn_requests_total{class="4xx",route="/firn.v1.Firn/SegmentNext"} 1`,
		`firn_requests_total{class="2xx",route="/firn.v1.Firn/SegmentBatch"} 1`,
		`firn_requests_total{class="2xx",route="/firn.v1.Firn/Stream"} 2`,
		`firn_requests_total{class="2xx",route="/grpc.health.v1.Health/Check"} 1`,
		`firn_requests_total{class="5xx",route="/firn.v1.Firn/Next"} 0`,
		`firn_request_failures_total{route="/firn.v1.Firn/SegmentNext",status="404"} 1`,
		`firn_request_failures_total{route="/firn.v1.Firn/Batch",status="400"} 1`,
		`firn_request_duration_seconds_count{route="/firn.v1.Firn/Next"} 1`,
		`firn_request_duration_seconds_count{route="/firn.v1.Firn/Batch"} 2`,
		`firn_request_duration_seconds_count{route="/firn.v1.Firn/SegmentBatch"} 1`,
	} {
		if !strings.Contains(body, want+"\n") {
			t.Errorf("metrics lack %q", want)
		}
	}
	// A stream's latency is observed per message sent.
	if n := value(t, body, `firn_request_duration_seconds_count{route="/firn.v1.Firn/Stream"}`); n < 6 {
		t.Errorf("the streams' latency: %v observations, want one per message (at least 6)", n)
	}
}

// scrape reads GET /metrics of srv.
func scrape(t *testing.T, srv *server.Server) string {
	t.Helper()
	w := httptest.NewRecorder()
	srv.Handler().ServeHTTP(w, httptest.NewRequest("GET", "/metrics", nil))
	b, err := io.ReadAll(w.Result().Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// value is the value of one series in a scrape.
func value(t *testing.T, body, series string) float64 {
	t.Helper()
	for line := range strings.Lines(body) {
		if rest, ok := strings.CutPrefix(line, series+" "); ok {
			var v float64
			if _, err := fmt.Sscan(rest, &v); err != nil {
				t.Fatalf("series %s: %q", series, line)
			}
			return v
		}
	}
	t.Fatalf("no series %s in the metrics", series)
	return 0
}

// TestGRPCCountsInStatus: IDs issued over gRPC reach the status page's
// IDs/s, as HTTP's do.
func TestGRPCCountsInStatus(t *testing.T) {
	cfg := &server.Config{Snowflake: unreservedGenerator(t)}
	srv := newServer(t, cfg)
	conn := dialGRPC(t, srv)
	if _, err := firnpb.NewFirnClient(conn).Batch(context.Background(), &firnpb.BatchRequest{Count: 321}); err != nil {
		t.Fatal(err)
	}
	// The ring shows whole seconds: the count appears once its second ends.
	var sum uint64
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		w := httptest.NewRecorder()
		srv.Handler().ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/v1/status", nil))
		var st struct {
			Rate struct {
				PerSecond map[string][]uint64 `json:"per_second"`
			} `json:"rate"`
		}
		if err := json.Unmarshal(w.Body.Bytes(), &st); err != nil {
			t.Fatalf("/v1/status: %d %s", w.Code, w.Body)
		}
		sum = 0
		for _, n := range st.Rate.PerSecond["snowflake"] {
			sum += n
		}
		if sum != 0 {
			break
		}
	}
	if sum != 321 {
		t.Fatalf("status counts %d snowflake IDs, want the 321 issued over gRPC", sum)
	}
}

// TestGRPCDecodeWithStatus: scope status grants Decode over gRPC as it
// grants the decode routes over HTTP, and nothing that issues IDs.
func TestGRPCDecodeWithStatus(t *testing.T) {
	auth, err := server.NewAuth([]server.Token{{Name: "page", Secret: "status-secret-01", Scopes: []string{"status"}}}, server.Anonymous{})
	if err != nil {
		t.Fatal(err)
	}
	srv := newServer(t, &server.Config{Snowflake: unreservedGenerator(t), Auth: auth})
	conn := dialGRPC(t, srv)
	c := firnpb.NewFirnClient(conn)
	ctx := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer status-secret-01")
	if _, err := c.Decode(ctx, &firnpb.DecodeRequest{Id: 118453847940136960}); err != nil {
		t.Fatalf("Decode with scope status: %v", err)
	}
	if _, err := c.Next(ctx, &firnpb.NextRequest{}); grpcstatus.Code(err) != codes.PermissionDenied {
		t.Fatalf("Next with scope status: %v, want PermissionDenied", err)
	}
}
