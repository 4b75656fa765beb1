package server_test

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/status"

	"github.com/firn-id/firn/firnpb"
)

// goInternals are words of Go's encoding/json that mean nothing to a
// caller of the API.
var goInternals = []string{"Go value", "Go struct", "struct {", "json:", "unmarshal", "int64", "*int"}

func errorMessage(t *testing.T, body string) string {
	t.Helper()
	var e struct {
		Error struct{ Message string } `json:"error"`
	}
	if err := json.Unmarshal([]byte(body), &e); err != nil || e.Error.Message == "" {
		t.Fatalf("body %q is not an error", body)
	}
	return e.Error.Message
}

func TestMalformedAdminBodiesSayWhatIsWrong(t *testing.T) {
	h := authHandler(t, nil)
	tests := []struct {
		name, method, target, body string
		want                       string
	}{
		{"an array", "POST", "/v1/segments", `[1]`, `body: want a JSON object {"tag": …, "first": …, "step": …, "description": …}, got an array`},
		{"a number", "POST", "/v1/segments", `5`, `want a JSON object {"tag": …`},
		{"null", "POST", "/v1/segments", `null`, `want a JSON object {"tag": …`},
		{"empty", "POST", "/v1/segments", ``, `body: empty; want a JSON object`},
		{"cut short", "POST", "/v1/segments", `{"tag":`, `body: the JSON ends early`},
		{"not JSON", "POST", "/v1/segments", `tag=x`, `body: not JSON at byte 2 (invalid character`},
		{"step as a string", "POST", "/v1/segments", `{"tag":"a","step":"x"}`, `body: "step" must be a whole number, got the string "x"`},
		{"step fractional", "POST", "/v1/segments", `{"tag":"a","step":1.5}`, `body: "step" must be a whole number, got the number 1.5`},
		{"tag as a number", "POST", "/v1/segments", `{"tag":5,"step":1}`, `body: "tag" must be a string, got the number 5`},
		{"first unquoted", "POST", "/v1/segments", `{"tag":"a","step":1,"first":5}`, `body: "first" must be a whole number in a string ("first":"5000"), got the number 5`},
		{"unknown field", "POST", "/v1/segments", `{"tag":"a","step":1,"owner":"me"}`, `body: unknown field "owner"; want {"tag": …, "first": …, "step": …, "description": …}`},
		{"trailing data", "POST", "/v1/segments", `{"tag":"a","step":1} x`, `body: data after the JSON object`},
		{"a second object", "POST", "/v1/segments", `{"tag":"a","step":1}{"tag":"b","step":1}`, `body: data after the JSON object`},
		{"step a boolean", "PATCH", "/v1/segments/order", `{"step":true}`, `body: "step" must be a whole number, got a boolean`},
		{"step body an array", "PATCH", "/v1/segments/order", `[500]`, `body: want a JSON object {"step": …}, got an array`},
		{"to unquoted", "POST", "/v1/segments/order/advance", `{"to":5000}`, `body: "to" must be a whole number in a string ("to":"5000"), got the number 5000`},
		{"to an object", "POST", "/v1/segments/order/advance", `{"to":{}}`, `"to" must be a whole number in a string ("to":"5000"), got an object`},
		{"to unknown field", "POST", "/v1/segments/order/advance", `{"next":"5"}`, `body: unknown field "next"; want {"to": …}`},
		// What encoding/json lets pass by itself: a repeated key (it takes
		// the last), a name in another case (it matches any case), a lone
		// surrogate escape and bytes that are not UTF-8 (it makes U+FFFD
		// of them, which would name a tag).
		{"a repeated key", "POST", "/v1/segments", `{"tag":"a7","step":10,"tag":"order"}`, `body: field "tag" given twice; give each field once`},
		{"a repeated key, escaped", "POST", "/v1/segments", `{"tag":"a7","step":10,"t\u0061g":"order"}`, `body: field "tag" given twice`},
		{"step repeated", "PATCH", "/v1/segments/order", `{"step":5,"step":500}`, `body: field "step" given twice`},
		{"to repeated", "POST", "/v1/segments/order/advance", `{"to":"5000","to":"9000"}`, `body: field "to" given twice`},
		{"a name in another case", "POST", "/v1/segments", `{"Tag":"a","step":1}`, `body: unknown field "Tag"; field names are case-sensitive: want "tag"`},
		{"step in capitals", "PATCH", "/v1/segments/order", `{"STEP":5}`, `body: unknown field "STEP"; field names are case-sensitive: want "step"`},
		{"a lone high surrogate", "POST", "/v1/segments", `{"tag":"\ud800","step":1}`, `body: \ud800 at byte 8 is half of a UTF-16 surrogate pair; a string must hold whole characters`},
		{"a lone low surrogate", "POST", "/v1/segments", `{"tag":"x\uDC00","step":1}`, `body: \uDC00 at byte 9 is half of a UTF-16 surrogate pair`},
		{"a high surrogate before a letter", "POST", "/v1/segments", `{"tag":"\ud83d\u0041","step":1}`, `body: \ud83d at byte 8 is half of a UTF-16 surrogate pair`},
		{"a lone surrogate in a description", "POST", "/v1/segments", `{"tag":"a","step":1,"description":"\udfff"}`, `body: \udfff at byte 35 is half`},
		{"a lone surrogate in a key", "POST", "/v1/segments", `{"t\ud800":"a","step":1}`, `body: \ud800 at byte 3 is half`},
		{"not UTF-8", "POST", "/v1/segments", "{\"tag\":\"\xff\",\"step\":1}", `body: not UTF-8 at byte 8`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := do(h, tt.method, tt.target, "", tt.body)
			if w.Code != 400 {
				t.Fatalf("%s %s %s = %d %s; want 400", tt.method, tt.target, tt.body, w.Code, w.Body.String())
			}
			msg := errorMessage(t, w.Body.String())
			if !strings.Contains(msg, tt.want) {
				t.Errorf("message %q; want it to contain %q", msg, tt.want)
			}
			for _, word := range goInternals {
				if strings.Contains(msg, word) {
					t.Errorf("message %q speaks Go: %q", msg, word)
				}
			}
		})
	}
}

func TestWellFormedAdminBodiesStillWork(t *testing.T) {
	h := authHandler(t, nil)
	steps := []struct{ method, target, body string }{
		{"POST", "/v1/segments", `{"tag":"invoice","first":"1000","step":50,"description":null}`},
		{"PATCH", "/v1/segments/invoice", " {\"step\": 500}\n"},
		{"POST", "/v1/segments/invoice/advance", `{"to":"90000"}`},
		// A pair of surrogate escapes is one character; an escaped
		// backslash before "ud800" is no escape of a surrogate.
		{"POST", "/v1/segments", `{"tag":"smile\ud83d\ude00","step":1}`},
		{"POST", "/v1/segments", `{"tag":"path\\ud800","step":1,"description":"say \"\\\"\""}`},
	}
	for _, s := range steps {
		if w := do(h, s.method, s.target, "", s.body); w.Code >= 300 {
			t.Fatalf("%s %s %s = %d %s", s.method, s.target, s.body, w.Code, w.Body.String())
		}
	}
}

// packagePrefix matches a package's prefix in a message: "segment: ".
var packagePrefix = regexp.MustCompile(`\b(segment|snowflake|nodeid|server|config|client|localstore|etcdstore|sqlstore): `)

// repeatedPrefix returns a package prefix said more than once in msg.
func repeatedPrefix(msg string) string {
	seen := map[string]bool{}
	for _, m := range packagePrefix.FindAllStringSubmatch(msg, -1) {
		if seen[m[1]] {
			return m[1]
		}
		seen[m[1]] = true
	}
	return ""
}

func TestErrorsNameTheirPackageOnce(t *testing.T) {
	h := authHandler(t, nil)
	tests := []struct {
		name, method, target, body string
		status                     int
	}{
		{"next of an unknown tag", "GET", "/v1/segments/nope/next", "", 404},
		{"batch of an unknown tag", "GET", "/v1/segments/nope/batch?count=3", "", 404},
		{"step of an unknown tag", "PATCH", "/v1/segments/nope", `{"step":5}`, 404},
		{"advance of an unknown tag", "POST", "/v1/segments/nope/advance", `{"to":"5"}`, 404},
		{"a tag that exists", "POST", "/v1/segments", `{"tag":"order","step":5}`, 409},
		{"Leaf's route, unknown key", "GET", "/api/segment/get/nope", "", 404},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := do(h, tt.method, tt.target, "", tt.body)
			if w.Code != tt.status {
				t.Fatalf("%s %s = %d %s; want %d", tt.method, tt.target, w.Code, w.Body.String(), tt.status)
			}
			if p := repeatedPrefix(w.Body.String()); p != "" {
				t.Errorf("%s says %q twice: %s", tt.target, p+":", w.Body.String())
			}
		})
	}
	t.Run("gRPC SegmentNext of an unknown tag", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, err := grpcClient(t, nil).SegmentNext(ctx, &firnpb.SegmentRequest{Tag: "nope"})
		if err == nil {
			t.Fatal("no error")
		}
		if msg := status.Convert(err).Message(); repeatedPrefix(msg) != "" {
			t.Errorf("message %q says a package prefix twice", msg)
		}
	})
}
