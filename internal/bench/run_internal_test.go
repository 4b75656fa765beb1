package bench

import (
	"net/http"
	"testing"
	"time"
)

// TestRetryDelay: 1 ms after the first failure, doubling, at most 100 ms;
// none without a failure.
func TestRetryDelay(t *testing.T) {
	tests := []struct {
		name     string
		failures int
		want     time.Duration
	}{
		{name: "none", failures: 0, want: 0},
		{name: "negative", failures: -1, want: 0},
		{name: "first", failures: 1, want: time.Millisecond},
		{name: "second", failures: 2, want: 2 * time.Millisecond},
		{name: "seventh", failures: 7, want: 64 * time.Millisecond},
		{name: "eighth, capped", failures: 8, want: 100 * time.Millisecond},
		{name: "ninth", failures: 9, want: 100 * time.Millisecond},
		{name: "past any shift", failures: 1 << 20, want: 100 * time.Millisecond},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := retryDelay(tc.failures); got != tc.want {
				t.Fatalf("retryDelay(%d) = %s, want %s", tc.failures, got, tc.want)
			}
		})
	}
}

// TestRefusesABodyCutMidID: bench reads firn's text answers by
// the client's rule, so a batch cut mid-ID counts as an error, never as
// IDs (its uniqueness check would otherwise see the prefix as an ID).
func TestRefusesABodyCutMidID(t *testing.T) {
	parse := answerIDs(&settings{protocol: "http", batch: 2})
	if ids, err := parse(nil, http.StatusOK, []byte("7205759403792793600\n72057")); err == nil || len(ids) != 0 {
		t.Fatalf("a batch cut mid-ID: %v, %v; want an error and no ID", ids, err)
	}
	if ids, err := parse(nil, http.StatusOK, []byte("7205759403792793600\n7205759403792793601\n")); err != nil || len(ids) != 2 {
		t.Fatalf("a whole batch: %v, %v", ids, err)
	}
	leaf := answerIDs(&settings{protocol: "tinyid", batch: 3})
	if ids, err := leaf(nil, http.StatusOK, []byte("1,2,3")); err != nil || len(ids) != 3 {
		t.Fatalf("Tinyid's list: %v, %v", ids, err)
	}
}
