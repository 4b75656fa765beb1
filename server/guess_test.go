package server_test

import (
	"encoding/json"
	"testing"
)

// TestGuessRoute reads the Discord docs' ID
// (https://discord.com/developers/docs/reference#snowflakes) through the
// API: the server's own layout (firn) plays no part, and the Discord
// reading is the documented one.
func TestGuessRoute(t *testing.T) {
	h := newHandler(t, nil)
	w := get(h, "GET", "/v1/snowflake/guess/175928847299117063")
	if w.Code != 200 || w.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("guess: %d %s %q", w.Code, w.Header().Get("Content-Type"), w.Body.String())
	}
	var body struct {
		ID         string
		Ambiguous  bool
		Candidates []struct {
			Layout    string
			Plausible bool
			Reason    string
			UnixMS    int64 `json:"unix_ms"`
			Time      string
			Node      map[string]uint64
			Sequence  *uint64
		}
	}
	if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil {
		t.Fatal(err)
	}
	if body.ID != "175928847299117063" || len(body.Candidates) < 2 || !body.Ambiguous {
		t.Fatalf("guess body %s", w.Body.String())
	}
	seen := map[string]bool{}
	plausibleDone := false
	for _, c := range body.Candidates {
		seen[c.Layout] = true
		if c.Plausible && plausibleDone {
			t.Fatalf("%s is plausible after a ruled-out layout", c.Layout)
		}
		plausibleDone = plausibleDone || !c.Plausible
		if c.Plausible == (c.Reason != "") {
			t.Fatalf("%s: plausible %v with reason %q", c.Layout, c.Plausible, c.Reason)
		}
		switch c.Layout {
		case "discord":
			if !c.Plausible || c.Time != "2016-04-30T11:18:25.796Z" || c.UnixMS != 1462015105796 ||
				c.Node["worker"] != 1 || c.Node["process"] != 0 || c.Sequence == nil || *c.Sequence != 7 {
				t.Fatalf("discord reading %+v", c)
			}
		case "mastodon":
			if c.Plausible {
				t.Fatalf("a 2016 Discord ID read as a plausible Mastodon ID at %s", c.Time)
			}
		case "js53":
			if c.Plausible || c.Time != "" || c.Sequence != nil {
				t.Fatalf("an ID over 53 bits read by js53: %+v", c)
			}
		}
	}
	for _, name := range []string{"discord", "mastodon", "js53", "firn", "cockroachdb"} {
		if !seen[name] {
			t.Errorf("no candidate %s", name)
		}
	}
}
