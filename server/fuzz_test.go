package server_test

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"

	"github.com/firn-id/firn/firnpb"
)

// A ready service answers every request with a 2xx or a 4xx. The one 5xx
// it may give is 503 for a tag whose counter ran out (ErrExhausted),
// which a fuzzed admin request can cause (a tag created or advanced near
// the largest ID): a state of the data, not a failure of the server.
// Everything else — 500 above all, which is what a recovered panic
// answers — fails the target.
func allowed5xx(status int, body string) bool {
	return status == http.StatusServiceUnavailable && strings.Contains(body, "exhausted")
}

// FuzzHTTPRequest drives the whole HTTP handler, tokens on, with a fuzzed
// method, path and query, content type, authorization header and body.
func FuzzHTTPRequest(f *testing.F) {
	seeds := []struct{ method, target, ctype, auth, body string }{
		{"GET", "/v1/snowflake/batch?count=5", "", "Bearer edges-secret-0123", ""},
		{"GET", "/v1/segments/order/batch?count=3&format=text", "", "Bearer edges-secret-0123", ""},
		{"GET", "/v1/segments/bad%FF/next", "", "Bearer edges-secret-0123", ""},
		{"POST", "/tinyid/id/nextId", "application/x-www-form-urlencoded", "", "bizType=order&token=s&batchSize=3"},
		{"POST", "/tinyid/id/nextSegmentIdSimple?token=s", "multipart/form-data; boundary=x", "", "--x\r\nContent-Disposition: form-data; name=\"bizType\"\r\n\r\norder\r\n--x--\r\n"},
		{"GET", "/tinyid/id/nextIdSimple?bizType=order;token=s", "", "", ""},
		{"POST", "/v1/segments", "application/json", "Bearer edges-secret-0123", `{"tag":"new","step":10,"first":"5"}`},
		{"PATCH", "/v1/segments/order", "application/json", "Bearer edges-secret-0123", `{"step":1000}`},
		{"POST", "/v1/segments/order/advance", "application/json", "Bearer edges-secret-0123", `{"to":"500"}`},
		{"GET", "/api/segment/get/order", "", "Bearer edges-secret-0123", ""},
		{"GET", "/decodeSnowflakeId?snowflakeId=117986093458018304", "", "Bearer edges-secret-0123", ""},
		{"GET", "/metrics", "", "", ""},
		{"GET", "/readyz", "", "", ""},
	}
	for _, s := range seeds {
		f.Add(s.method, s.target, s.ctype, s.auth, []byte(s.body))
	}
	svc, _, logs := edgeService(f, true)
	svc.MaxBody = 4 << 10
	h := handlerOf(f, svc)
	f.Fuzz(func(t *testing.T, method, target, ctype, auth string, body []byte) {
		r, err := http.NewRequest(method, "http://firn"+target, bytes.NewReader(body))
		if err != nil || !strings.HasPrefix(target, "/") {
			return // not a request a server would parse
		}
		r.Header.Set("Content-Type", ctype)
		r.Header.Set("Authorization", auth)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code >= 500 && !allowed5xx(w.Code, w.Body.String()) {
			t.Fatalf("%q %q (%q, %d bytes) = %d %q\n%s", method, target, ctype, len(body), w.Code, w.Body.String(), logs.String())
		}
	})
}

// FuzzGRPCRequest drives the gRPC server, tokens on, through a real
// client over an in-memory connection: a fuzzed method, tag, count, ID
// and authorization metadata. Tags that are not valid UTF-8 and metadata
// that is not printable ASCII never leave the client (proto3 and HTTP/2
// refuse them), so they are not sent.
func FuzzGRPCRequest(f *testing.F) {
	f.Add(uint8(0), "", int32(0), uint64(0), "Bearer edges-secret-0123")
	f.Add(uint8(3), "order", int32(1), uint64(0), "Bearer edges-secret-0123")
	f.Add(uint8(4), "order", int32(1000), uint64(0), "Bearer edges-secret-0123")
	f.Add(uint8(5), "order", int32(10), uint64(0), "Bearer edges-secret-0123")
	f.Add(uint8(2), "", int32(0), uint64(1<<63), "Bearer x")
	f.Add(uint8(6), "firn.v1.Firn", int32(0), uint64(0), "")
	svc, _, logs := edgeService(f, true)
	srv := newGRPCServer(f, svc)
	ln := bufconn.Listen(1 << 20)
	go srv.Serve(ln)
	f.Cleanup(srv.Stop)
	conn, err := grpc.Dial("bufconn", grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return ln.DialContext(ctx) }))
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { conn.Close() })
	c, hc := firnpb.NewFirnClient(conn), healthpb.NewHealthClient(conn)
	f.Fuzz(func(t *testing.T, method uint8, tag string, count int32, id uint64, auth string) {
		if !utf8.ValidString(tag) || strings.IndexFunc(auth, func(r rune) bool { return r < 0x20 || r > 0x7e }) >= 0 {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		ctx = metadata.AppendToOutgoingContext(ctx, "authorization", auth)
		var err error
		switch method % 7 {
		case 0:
			_, err = c.Next(ctx, &firnpb.NextRequest{})
		case 1:
			_, err = c.Batch(ctx, &firnpb.BatchRequest{Count: count})
		case 2:
			_, err = c.Decode(ctx, &firnpb.DecodeRequest{Id: id})
		case 3:
			_, err = c.SegmentNext(ctx, &firnpb.SegmentRequest{Tag: tag})
		case 4:
			_, err = c.SegmentBatch(ctx, &firnpb.SegmentBatchRequest{Tag: tag, Count: count})
		case 5:
			var s firnpb.Firn_StreamClient
			if s, err = c.Stream(ctx, &firnpb.StreamRequest{Tag: tag, Batch: count}); err == nil {
				_, err = s.Recv()
			}
		case 6:
			_, err = hc.Check(ctx, &healthpb.HealthCheckRequest{Service: tag})
		}
		switch status.Code(err) {
		case codes.OK, codes.InvalidArgument, codes.NotFound, codes.Unauthenticated, codes.PermissionDenied, codes.ResourceExhausted:
		case codes.Unavailable:
			if !strings.Contains(err.Error(), "exhausted") {
				t.Fatalf("method %d tag %q count %d id %d: %v", method%7, tag, count, id, err)
			}
		default:
			t.Fatalf("method %d tag %q count %d id %d: %v\n%s", method%7, tag, count, id, err, logs.String())
		}
	})
}
