package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/oklog/ulid/v2"

	"github.com/firn-id/firn/snowflake"
	"github.com/firn-id/firn/wide"
)

// TestNextFormats: firn next --format uuid|ulid prints IDs of the node's
// generator, increasing within a run and across runs on one data
// directory (the second run starts past the first's HWM), and firn parse
// with the layout gives back their slots.
func TestNextFormats(t *testing.T) {
	dir := t.TempDir()
	l := snowflake.DefaultLayout()
	var runs [][]string
	for _, format := range []string{"uuid", "uuid", "ulid", "snowflake"} {
		out, errOut, code := runCLI("next", "-n", "300", "--format", format, "--node", "9", "--data-dir", dir)
		ids := strings.Fields(out)
		if code != 0 || len(ids) != 300 || !slices.IsSorted(ids) {
			t.Fatalf("next --format %s: exit %d, %d IDs, sorted %v: %s", format, code, len(ids), slices.IsSorted(ids), errOut)
		}
		for _, s := range ids {
			var p snowflake.Parts
			var err error
			switch format {
			case "uuid":
				p, err = wide.DecodeUUID(l, uuid.MustParse(s))
			case "ulid":
				p, err = wide.DecodeULID(l, ulid.MustParse(s))
			default:
				p, err = l.Decompose(uint64(mustInt(t, s)))
			}
			if err != nil || p.Node != 9 {
				t.Fatalf("%s %s: node %d, %v", format, s, p.Node, err)
			}
		}
		runs = append(runs, ids)
	}
	if first, second := runs[0], runs[1]; second[0] <= first[len(first)-1] {
		t.Fatalf("second run's first UUID %s not past the first run's last %s", second[0], first[len(first)-1])
	}
	out, errOut, code := runCLI("parse", "--json", "--layout", "firn", runs[0][0])
	var v struct {
		Form string
		Firn struct {
			Node     map[string]uint64
			Sequence uint64
		}
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil || code != 0 || v.Form != "uuid" || v.Firn.Node["node"] != 9 {
		t.Fatalf("parse of a firn UUID: exit %d, %q, %s", code, out, errOut)
	}
}

func TestNextFormatBesideAServer(t *testing.T) {
	dir := t.TempDir()
	startBeside(t, dir)
	for _, format := range []string{"uuid", "ulid"} {
		out, errOut, code := runCLI("next", "-n", "5", "--format", format, "--data-dir", dir)
		ids := strings.Fields(out)
		if code != 0 || len(ids) != 5 || !slices.IsSorted(ids) {
			t.Fatalf("next --format %s beside the server: exit %d, %q, %s", format, code, out, errOut)
		}
		id, err := wide.Parse(ids[0])
		if err != nil || string(id.Form) != format {
			t.Fatalf("%s: %+v, %v", ids[0], id, err)
		}
	}
}

// TestParseForms: each form is told apart and printed in its parts; a
// UUIDv7 shows a firn slot only with layout flags.
func TestParseForms(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want []string
		not  string
	}{
		{"UUIDv7, RFC 9562 A.6", []string{"parse", "017F22E2-79B0-7CC3-98C4-DC0C0C07398F"},
			[]string{"form          uuid", "time          2022-02-22T19:22:22.000Z", "rand_a        cc3"}, "firn."},
		{"UUIDv7 with a 1 ms layout from 1970", []string{"parse", "--epoch", "0", "017F22E2-79B0-7CC3-98C4-DC0C0C07398F"},
			[]string{"firn.tick     1645557742000", "firn.sequence 3267"}, ""},
		{"KSUID", []string{"parse", "0ujtsYcgvSTl8PAuAdqWYSMnLOv"}, []string{"form          ksuid", "timestamp     107608047"}, ""},
		{"xid", []string{"parse", "9m4e2mr0ui3e8a215n4g"}, []string{"form          xid", "pid           58408"}, ""},
		{"ObjectId", []string{"parse", "ffffffff0000000000000000"}, []string{"time          2106-02-07T06:28:15.000Z"}, ""},
		{"decimal and ULID", []string{"parse", "1", "01ARYZ6S410000000000000000"}, []string{"sequence   1", "unix_ms       1469918176385"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := runCLI(tc.args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			if tc.not != "" && strings.Contains(out, tc.not) {
				t.Errorf("output has %q:\n%s", tc.not, out)
			}
		})
	}
	for _, tc := range []struct{ arg, want string }{
		{"9m4e2mr0ui3e8a215n4w", `ID "9m4e2mr0ui3e8a215n4w": xid`},
		{"--format", "unknown flag"},
	} {
		if _, errOut, code := runCLI("parse", tc.arg); code != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("parse %s: exit %d, %q; want exit 2 with %q", tc.arg, code, errOut, tc.want)
		}
	}
	if _, errOut, code := runCLI("next", "--format", "number"); code != 2 || !strings.Contains(errOut, "want snowflake, uuid or ulid") {
		t.Errorf("next --format number: exit %d, %q", code, errOut)
	}
}
