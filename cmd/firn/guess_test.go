package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// The Mastodon docs' example status (docs.joinmastodon.org/entities/Status):
// id 103270115826048975, created_at 2019-12-08T03:48:33.901Z. It also reads
// as a Discord ID of 2015.
func TestParseGuessText(t *testing.T) {
	out, errOut, code := runCLI("parse", "--guess", "103270115826048975")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	plausible, ruledOut, _ := strings.Cut(out, "ruled out\n")
	lines := strings.Split(plausible, "\n")
	if len(lines) < 4 || !strings.Contains(lines[1], "ambiguous") {
		t.Fatalf("no ambiguity named:\n%s", out)
	}
	if !strings.HasPrefix(lines[2], "  mastodon      2019-12-08T03:48:33.849Z  sequence=40911") {
		t.Fatalf("first plausible line %q, want mastodon at 2019-12-08T03:48:33.849Z", lines[2])
	}
	if !strings.Contains(plausible, "\n  discord ") {
		t.Fatalf("discord not among the plausible layouts:\n%s", out)
	}
	if !strings.Contains(ruledOut, "  seata         its time 2052-") {
		t.Fatalf("seata not ruled out with its time:\n%s", out)
	}
}

type guessJSON struct {
	ID         string `json:"id"`
	Ambiguous  bool   `json:"ambiguous"`
	Candidates []struct {
		Layout    string            `json:"layout"`
		Plausible bool              `json:"plausible"`
		Reason    string            `json:"reason"`
		Time      string            `json:"time"`
		Node      map[string]uint64 `json:"node"`
		Sequence  *uint64           `json:"sequence"`
	} `json:"candidates"`
}

func TestParseGuessJSON(t *testing.T) {
	// cockroachdb/docs issue #9811: unique_rowid() 0x7e39d34d0808001 from
	// node 1; and ID 5, a small counter that no layout reads as an ID.
	out, errOut, code := runCLI("parse", "--guess", "--json", "568470828140756993", "5")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 {
		t.Fatalf("want one line per ID:\n%s", out)
	}
	var crdb, small guessJSON
	if err := json.Unmarshal([]byte(lines[0]), &crdb); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(lines[1]), &small); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, c := range crdb.Candidates {
		if c.Layout == "cockroachdb" {
			found = true
			if !c.Plausible || c.Node["node"] != 1 || c.Time != "2020-06-30T21:52:09.095690Z" {
				t.Fatalf("cockroachdb candidate %+v, want plausible, node 1, time to the microsecond", c)
			}
		}
	}
	if !found || crdb.ID != "568470828140756993" || !crdb.Ambiguous {
		t.Fatalf("cockroachdb ID: %s", lines[0])
	}
	if small.Ambiguous || len(small.Candidates) == 0 {
		t.Fatalf("ID 5: %s", lines[1])
	}
	for _, c := range small.Candidates {
		if c.Plausible || c.Reason == "" {
			t.Fatalf("ID 5 read as %+v", c)
		}
	}
}

func TestParseGuessBadInput(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{name: "layout flag", args: []string{"parse", "--guess", "--layout", "discord", "1"}, wantErr: "takes no layout flags (got --layout)"},
		{name: "two layout flags", args: []string{"parse", "--guess", "--tick", "1ms", "--epoch", "0", "1"}, wantErr: "(got --epoch, --tick)"},
		{name: "not a number", args: []string{"parse", "--guess", "1", "x"}, wantErr: `ID "x" is not a non-negative decimal number`},
		{name: "no ID", args: []string{"parse", "--guess"}, wantErr: "no ID given"},
		{name: "decode-only tick to next", args: []string{"next", "--layout", "cockroachdb"}, wantErr: "not a whole number of milliseconds"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := runCLI(tt.args...)
			if code != 2 || out != "" || !strings.Contains(errOut, tt.wantErr) {
				t.Fatalf("exit %d, stdout %q, stderr %q; want 2, nothing, %q", code, out, errOut, tt.wantErr)
			}
		})
	}
}

// TestParseGuessClaimsNoLikelihood: Discord's documented example ID
// (discord.com/developers/docs/reference#snowflakes) is plausible as
// discord among others that the heuristic puts first; the answer says
// its order is a heuristic's, not the likeliest system first.
func TestParseGuessClaimsNoLikelihood(t *testing.T) {
	out, errOut, code := runCLI("parse", "--guess", "175928847299117063")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	plausible, _, _ := strings.Cut(out, "ruled out\n")
	if !strings.Contains(plausible, "\n  discord       2016-04-30T11:18:25.796Z  worker=1 process=0 sequence=7") {
		t.Fatalf("discord not plausible with the documented parts:\n%s", out)
	}
	if strings.Contains(out, "most telling") || !strings.Contains(out, "ordered by a heuristic") || !strings.Contains(out, "not by likelihood") {
		t.Fatalf("the order is claimed as more than a heuristic's:\n%s", out)
	}
}

// TestParseGuessOtherForms: --guess takes apart what firn parse takes
// apart: an ID of another form names its form, in text and in JSON, among
// IDs it guesses.
func TestParseGuessOtherForms(t *testing.T) {
	const uuid7 = "0190a9c8-7b7e-7c3e-8f4e-1a2b3c4d5e6f"
	plain, errOut, code := runCLI("parse", uuid7)
	if code != 0 {
		t.Fatalf("firn parse %s: exit %d: %s", uuid7, code, errOut)
	}
	out, errOut, code := runCLI("parse", "--guess", uuid7, "103270115826048975")
	if code != 0 {
		t.Fatalf("firn parse --guess %s: exit %d: %s", uuid7, code, errOut)
	}
	if !strings.HasPrefix(out, plain+"\n") || !strings.Contains(out, "\n  mastodon ") {
		t.Fatalf("firn parse --guess:\n%s\nwant firn parse's\n%s\nthen the guess of the second", out, plain)
	}
	out, errOut, code = runCLI("parse", "--guess", "--json", uuid7)
	var doc struct{ ID, Form string }
	if err := json.Unmarshal([]byte(out), &doc); code != 0 || err != nil || doc.ID != uuid7 || doc.Form != "uuid" {
		t.Fatalf("firn parse --guess --json %s: exit %d, %v: %s%s", uuid7, code, err, out, errOut)
	}
}
