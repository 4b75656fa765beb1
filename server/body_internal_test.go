package server

import (
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/firn-id/firn/api"
)

// FuzzDecodeBody: a body decodeBody accepts is one JSON object that
// encoding/json reads to the same values, each of its keys written once
// and exactly as a field's name, and its strings hold no U+FFFD the body
// did not spell out: nothing encoding/json would repair or guess reaches
// a handler. Whatever it refuses, it refuses with a 400 or a 413.
func FuzzDecodeBody(f *testing.F) {
	for _, s := range []string{
		`{"tag":"order","step":10}`, `{"tag":"a7","step":10,"tag":"order"}`, `{"Tag":"a","step":1}`,
		`{"tag":"\ud800","step":1}`, `{"tag":"\ud83d\ude00","step":1}`, `{"tag":"a\\ud800","step":1}`,
		`{"tag":"a","step":1,"first":"5"}`, `{"tag":"a","step":"5"}`, `{"tag":"a","step":1e3}`, "{\"tag\":\"\xff\"}",
		`{"tag":"a","description":null,"step":2}`, `{"t\u0061g":"a","step":1}`, `[1]`, ``, `{"tag":`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		var got api.CreateTag
		err := decodeBody(httptest.NewRequest("POST", "/v1/segments", strings.NewReader(body)), &got)
		if err != nil {
			if code, _ := status(err); code != 400 && code != 413 {
				t.Fatalf("%q: status %d for %v", body, code, err)
			}
			return
		}
		var want api.CreateTag
		if err := json.Unmarshal([]byte(body), &want); err != nil {
			t.Fatalf("%q accepted, but encoding/json refuses it: %v", body, err)
		}
		if got.Tag != want.Tag || got.Step != want.Step || got.Description != want.Description ||
			(got.First == nil) != (want.First == nil) || got.First != nil && *got.First != *want.First {
			t.Fatalf("%q: decoded %+v, encoding/json %+v", body, got, want)
		}
		dec := json.NewDecoder(strings.NewReader(body))
		if _, err := dec.Token(); err != nil {
			t.Fatal(err)
		}
		keys := map[string]int{}
		for dec.More() {
			k, err := dec.Token()
			var skip json.RawMessage
			if err == nil {
				err = dec.Decode(&skip)
			}
			if err != nil {
				t.Fatalf("%q accepted, but its object does not read: %v", body, err)
			}
			keys[k.(string)]++
		}
		for k, n := range keys {
			if n > 1 || (k != "tag" && k != "first" && k != "step" && k != "description") {
				t.Fatalf("%q accepted with key %q written %d times", body, k, n)
			}
		}
		spelled := bytes.Count([]byte(body), []byte(string(utf8.RuneError))) > 0 || strings.Contains(strings.ToLower(body), `\ufffd`)
		if !spelled && (strings.ContainsRune(got.Tag, utf8.RuneError) || strings.ContainsRune(got.Description, utf8.RuneError)) {
			t.Fatalf("%q accepted with U+FFFD the body did not spell: %+v", body, got)
		}
	})
}
