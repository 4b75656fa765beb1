package bench

import (
	"net/http"
	"testing"
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
