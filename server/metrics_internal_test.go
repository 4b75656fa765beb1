package server

import (
	"io"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"

	"github.com/firn-id/firn/segment"
)

// TestSegmentCollectorTakesAnyTag: whatever tags the allocator holds —
// invalid UTF-8, two that escape to one label, empty, long — gathering
// neither panics nor fails; the second of two equal labels is dropped and
// counted. (A panic in a collector runs on the registry's goroutine and
// ends the process.)
func TestSegmentCollectorTakesAnyTag(t *testing.T) {
	tags := []string{"order", "bad\xff", `bad\xff`, "", "\xc3", strings.Repeat("\xfe", 600), "ünïcode"}
	var dropped atomic.Int64
	reg := prometheus.NewRegistry()
	reg.MustRegister(segmentCollector{stats: func() []segment.Stats {
		out := make([]segment.Stats, len(tags))
		for i, tag := range tags {
			out[i] = segment.Stats{Tag: tag, Step: 10}
		}
		return out
	}, dropped: &dropped, log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	families, err := reg.Gather()
	if err != nil {
		t.Fatalf("Gather: %v", err)
	}
	for _, f := range families {
		if got := len(f.GetMetric()); got != len(tags)-1 {
			t.Errorf("%s: %d series, want %d", f.GetName(), got, len(tags)-1)
		}
	}
	if dropped.Load() != 1 {
		t.Fatalf("dropped %d, want 1 (the tag equal to another once escaped)", dropped.Load())
	}
}

// TestSegmentCollectorSurvivesAPanic: a collector that panics costs its
// series and is counted, never the process.
func TestSegmentCollectorSurvivesAPanic(t *testing.T) {
	var dropped atomic.Int64
	reg := prometheus.NewRegistry()
	reg.MustRegister(segmentCollector{stats: func() []segment.Stats { panic("allocator bug") },
		dropped: &dropped, log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if _, err := reg.Gather(); err != nil {
		t.Fatalf("Gather: %v", err)
	}
	if dropped.Load() != 1 {
		t.Fatalf("dropped %d, want 1", dropped.Load())
	}
}

func TestLabelValue(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"valid", "order", "order"},
		{"valid, not ASCII", "ünïcode", "ünïcode"},
		{"an invalid byte", "bad\xff", `bad\xff`},
		{"a truncated character", "\xc3", `\xc3`},
		{"valid around invalid", "ü\xffü", `ü\xffü`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := labelValue(tt.in); got != tt.want {
				t.Fatalf("labelValue(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// TestGRPCStatusClasses: a gRPC call counts as the HTTP status its code
// stands for in grpcError's mapping.
func TestGRPCStatusClasses(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want int
	}{
		{"ok", nil, 200},
		{"bad request", grpcError(badRequest("count 0")), 400},
		{"unknown tag", grpcError(segment.ErrUnknownTag), 404},
		{"unavailable", grpcError(segment.ErrUnavailable), 503},
		{"panic", grpcError(ErrPanic), 500},
		{"body too large", grpcError(ErrBodyTooLarge), 413},
		{"unauthenticated", grpcstatus.Error(codes.Unauthenticated, "no token"), 401},
		{"permission denied", errUndeclared("/x/Y"), 403},
		{"canceled", grpcstatus.Error(codes.Canceled, "gone"), 499},
		{"a code firn never answers", grpcstatus.Error(codes.DataLoss, "?"), 500},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := httpStatusOf(tt.err); got != tt.want {
				t.Fatalf("httpStatusOf(%v) = %d, want %d", tt.err, got, tt.want)
			}
		})
	}
}
