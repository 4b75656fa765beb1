package server

import (
	"net/http/httptest"
	"net/url"
	"testing"
)

// tinyidQueries are query strings whose Tinyid parameters must read as
// url.ParseQuery reads them.
var tinyidQueries = []string{
	"", "bizType=order", "bizType=order&token=t&batchSize=5", "token=t&bizType=a&bizType=b",
	"bizType=%6Frder", "biz%54ype=order", "bizType=a+b", "bizType=a%2Bb", "bizType", "bizType=&token=x",
	"&&bizType=order&", "bizType=order;token=x", "bizType=%zz", "token=%", "x=%zz&bizType=order", "bizType==a",
}

// TestTinyidParamAsParseQuery: a query string that url.ParseQuery
// refuses is refused, and every Tinyid parameter of one it takes reads
// the same.
func TestTinyidParamAsParseQuery(t *testing.T) {
	for _, q := range tinyidQueries {
		checkTinyidParam(t, q)
	}
}

func FuzzTinyidParam(f *testing.F) {
	for _, q := range tinyidQueries {
		f.Add(q)
	}
	f.Fuzz(checkTinyidParam)
}

func checkTinyidParam(t *testing.T, q string) {
	r := httptest.NewRequest("GET", "/tinyid/id/nextId", nil)
	r.URL.RawQuery = q
	want, err := url.ParseQuery(q)
	if ok := parseTinyidQuery(r); ok != (err == nil) {
		t.Fatalf("%q: parseTinyidQuery %v, url.ParseQuery error %v", q, ok, err)
	}
	if err != nil {
		return
	}
	for _, key := range []string{"bizType", "token", "batchSize"} {
		if got := tinyidParam(r, key); got != want.Get(key) {
			t.Errorf("%q: %s = %q, want %q", q, key, got, want.Get(key))
		}
	}
}
