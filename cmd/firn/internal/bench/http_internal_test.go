package bench

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"
	"time"
)

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

// TestCompatAnswersAreWholeAndCanonical: Leaf's and Tinyid's answers are
// held to the count asked and to canonical decimal, as firn's are; a
// body that fails half-way hands nothing to the worker, so no prefix of
// a list reaches the count or the uniqueness check.
func TestCompatAnswersAreWholeAndCanonical(t *testing.T) {
	parse := answerIDs(&settings{protocol: "tinyid", mode: "segment", batch: 3})
	for _, body := range []string{"1001,1002", "1001,1002,\n", "+1001,1002,1003", "1001,01002,1003", "1001,1002,-1003", "1001,1002,x"} {
		if ids, err := parse(make([]int64, 0, 3), http.StatusOK, []byte(body)); err == nil || len(ids) != 0 {
			t.Errorf("Tinyid answer %q with batch 3: IDs %v, error %v; want an error and no ID", body, ids, err)
		}
	}
	leaf := answerIDs(&settings{protocol: "leaf", batch: 1})
	for _, body := range []string{"", "7,8", "007"} {
		if ids, err := leaf(nil, http.StatusOK, []byte(body)); err == nil || len(ids) != 0 {
			t.Errorf("Leaf answer %q: IDs %v, error %v; want an error and no ID", body, ids, err)
		}
	}
	if ids, err := leaf(nil, http.StatusOK, []byte("7\n")); err != nil || len(ids) != 1 || ids[0] != 7 {
		t.Errorf("Leaf answer 7: %v, %v", ids, err)
	}
	var counted atomic.Int64
	w := newWorker()
	call := func(context.Context, []int64) ([]int64, error) {
		return parse(make([]int64, 0, 3), http.StatusOK, []byte("1001,1002,x"))
	}
	w.do(context.Background(), call, time.Now(), true, make([]int64, 0, 3), &counted)
	if counted.Load() != 0 || len(w.ids) != 0 {
		t.Errorf("a failed answer counted %d IDs and recorded %v for the uniqueness check", counted.Load(), w.ids)
	}
}
