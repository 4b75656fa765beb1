package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"

	"github.com/firn-id/firn/firnpb"
	"github.com/firn-id/firn/idtext"
	"github.com/firn-id/firn/segment"
	"github.com/firn-id/firn/segment/segmenttest"
	"github.com/firn-id/firn/server"
)

// TestEncodings: ?encoding= writes each ID at its fixed width, in the
// order of the numbers, on the snowflake and segment routes, as JSON
// strings and as text; the strings read back to the decimal IDs.
func TestEncodings(t *testing.T) {
	h := newHandler(t, nil)
	for _, route := range []string{"/v1/snowflake/batch?count=50", "/v1/segments/order/batch?count=50"} {
		for _, enc := range []idtext.Encoding{idtext.Base62, idtext.Base32} {
			w := get(h, "GET", route+"&encoding="+enc.String())
			var body struct{ IDs []string }
			if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil || w.Code != http.StatusOK || len(body.IDs) != 50 {
				t.Fatalf("%s as %s: %d %s", route, enc, w.Code, w.Body)
			}
			width := map[idtext.Encoding]int{idtext.Base62: idtext.Base62Width, idtext.Base32: idtext.Base32Width}[enc]
			var prev uint64
			for i, s := range body.IDs {
				id, err := enc.Parse(s)
				if err != nil || len(s) != width || (i > 0 && (id <= prev || s <= body.IDs[i-1])) {
					t.Fatalf("%s as %s: %q (%d) after %d: want %d characters, increasing as text and as numbers", route, enc, s, id, prev, width)
				}
				prev = id
			}
			text := get(h, "GET", route+"&format=text&encoding="+enc.String())
			for _, line := range strings.Fields(text.Body.String()) {
				if _, err := enc.Parse(line); err != nil {
					t.Fatalf("text %s: %q: %v", enc, line, err)
				}
			}
		}
	}
	for _, bad := range []string{"/v1/snowflake/next?encoding=base64", "/v1/snowflake/next?format=number&encoding=base62"} {
		if w := get(h, "GET", bad); w.Code != http.StatusBadRequest {
			t.Errorf("%s: %d, want 400", bad, w.Code)
		}
	}
}

// TestGRPCEncodings: every gRPC method that issues IDs gives their texts
// in the encoding asked for, beside the numbers, and refuses one it does
// not know.
func TestGRPCEncodings(t *testing.T) {
	g := unreservedGenerator(t)
	s := segmenttest.NewMemStore()
	if err := s.CreateTag(context.Background(), "order", 1, 100, ""); err != nil {
		t.Fatal(err)
	}
	a, err := segment.NewAllocator(s, segment.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close(context.Background()) })
	c := firnpb.NewFirnClient(serveGRPC(t, &server.Config{Snowflake: g, Segments: a, SegmentStore: s}))
	ctx := context.Background()
	check := func(name string, enc idtext.Encoding, ids []int64, texts []string) {
		t.Helper()
		if len(texts) != len(ids) || len(ids) == 0 {
			t.Fatalf("%s: %d texts for %d IDs", name, len(texts), len(ids))
		}
		for i, s := range texts {
			if got, err := enc.Parse(s); err != nil || got != uint64(ids[i]) {
				t.Fatalf("%s: text %q reads %d, %v; the ID is %d", name, s, got, err, ids[i])
			}
		}
	}
	for _, e := range []struct {
		pb  firnpb.Encoding
		enc idtext.Encoding
	}{{firnpb.Encoding_ENCODING_BASE62, idtext.Base62}, {firnpb.Encoding_ENCODING_BASE32, idtext.Base32}} {
		one, err := c.Next(ctx, &firnpb.NextRequest{Encoding: e.pb})
		if err != nil {
			t.Fatal(err)
		}
		check("Next", e.enc, []int64{one.Id}, []string{one.Text})
		b, err := c.Batch(ctx, &firnpb.BatchRequest{Count: 5, Encoding: e.pb})
		if err != nil {
			t.Fatal(err)
		}
		check("Batch", e.enc, b.Ids, b.Texts)
		so, err := c.SegmentNext(ctx, &firnpb.SegmentRequest{Tag: "order", Encoding: e.pb})
		if err != nil {
			t.Fatal(err)
		}
		check("SegmentNext", e.enc, []int64{so.Id}, []string{so.Text})
		sb, err := c.SegmentBatch(ctx, &firnpb.SegmentBatchRequest{Tag: "order", Count: 5, Encoding: e.pb})
		if err != nil {
			t.Fatal(err)
		}
		check("SegmentBatch", e.enc, sb.Ids, sb.Texts)
		st, err := c.Stream(ctx, &firnpb.StreamRequest{Batch: 4, Encoding: e.pb})
		if err != nil {
			t.Fatal(err)
		}
		msg, err := st.Recv()
		if err != nil {
			t.Fatal(err)
		}
		check("Stream", e.enc, msg.Ids, msg.Texts)
	}
	plain, err := c.Batch(ctx, &firnpb.BatchRequest{Count: 3})
	if err != nil || plain.Texts != nil {
		t.Fatalf("decimal Batch: texts %v, %v; want none", plain.GetTexts(), err)
	}
	if _, err := c.Next(ctx, &firnpb.NextRequest{Encoding: 9}); code(err) != codes.InvalidArgument {
		t.Fatalf("unknown encoding: %v, want InvalidArgument", err)
	}
}
