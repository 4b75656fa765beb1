package wide_test

import (
	"encoding/hex"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/firn-id/firn/wide"
)

// TestParseVectors reads each form's example from its own specification or
// source and checks its time and parts against what that source states.
func TestParseVectors(t *testing.T) {
	for _, tc := range []struct {
		name   string
		in     string
		form   wide.Form
		bytes  string
		time   time.Time
		fields map[string]string
	}{
		// RFC 9562 Appendix A.6: unix_ts_ms 0x017F22E279B0 is
		// "Tuesday, February 22, 2022 2:22:22.00 PM GMT-05:00".
		{name: "RFC 9562 A.6 UUIDv7", in: "017F22E2-79B0-7CC3-98C4-DC0C0C07398F", form: wide.FormUUID,
			bytes: "017f22e279b07cc398c4dc0c0c07398f", time: time.Date(2022, 2, 22, 19, 22, 22, 0, time.UTC),
			fields: map[string]string{"version": "7", "variant": "RFC4122", "rand_a": "cc3", "rand_b": "18c4dc0c0c07398f"}},
		// RFC 9562 Appendix A.5: UUIDv6 1EC9414C-232A-6B00-B3C8-9F6BDECED846,
		// the same instant as A.1 (2022-02-22 14:22:22 GMT-05:00).
		{name: "RFC 9562 A.5 UUIDv6", in: "1EC9414C-232A-6B00-B3C8-9F6BDECED846", form: wide.FormUUID,
			bytes: "1ec9414c232a6b00b3c89f6bdeced846", time: time.Date(2022, 2, 22, 19, 22, 22, 0, time.UTC),
			fields: map[string]string{"version": "6", "clock_seq": "13256", "node": "9f6bdeced846"}},
		// RFC 9562 Appendix A.1: UUIDv1 C232AB00-9414-11EC-B3C8-9F6BDECED846,
		// the same instant.
		{name: "RFC 9562 A.1 UUIDv1", in: "C232AB00-9414-11EC-B3C8-9F6BDECED846", form: wide.FormUUID,
			bytes: "c232ab00941411ecb3c89f6bdeced846", time: time.Date(2022, 2, 22, 19, 22, 22, 0, time.UTC),
			fields: map[string]string{"version": "1", "clock_seq": "13256", "node": "9f6bdeced846"}},
		// RFC 9562 Appendix A.3: a UUIDv4 carries no time.
		{name: "RFC 9562 A.3 UUIDv4", in: "919108f7-52d1-4320-9bac-f847db4148a8", form: wide.FormUUID,
			bytes: "919108f752d143209bacf847db4148a8", fields: map[string]string{"version": "4"}},
		// oklog/ulid v2.1.0 ulid_test.go TestAlizainCompatibility: the
		// reference implementation's ULID at 1469918176385 ms, zero entropy.
		{name: "ULID, alizain/ulid", in: "01ARYZ6S410000000000000000", form: wide.FormULID,
			bytes: "01563df36481" + "00000000000000000000", time: time.UnixMilli(1469918176385).UTC(),
			fields: map[string]string{"randomness": "00000000000000000000"}},
		// segmentio/ksuid README.md (d337249), "Inspect the components of a
		// KSUID": Raw 0669F7EFB5A1CD34B5F99D1154FB6853345C9735,
		// Time 2017-10-09 21:00:47 -0700 PDT, Timestamp 107608047.
		{name: "KSUID README", in: "0ujtsYcgvSTl8PAuAdqWYSMnLOv", form: wide.FormKSUID,
			bytes: "0669f7efb5a1cd34b5f99d1154fb6853345c9735", time: time.Date(2017, 10, 10, 4, 0, 47, 0, time.UTC),
			fields: map[string]string{"timestamp": "107608047", "payload": "b5a1cd34b5f99d1154fb6853345c9735"}},
		// rs/xid id_test.go (643d161): TestIDString gives the README's
		// 9m4e2mr0ui3e8a215n4g as 4d88e15b60f486e428412dc9, and IDs[0] its
		// parts: time 1300816219, machine 60f486, pid 0xe428, counter 4271561.
		{name: "xid README", in: "9m4e2mr0ui3e8a215n4g", form: wide.FormXID,
			bytes: "4d88e15b60f486e428412dc9", time: time.Unix(1300816219, 0).UTC(),
			fields: map[string]string{"machine": "60f486", "pid": "58408", "counter": "4271561"}},
		// mongodb/specifications source/bson-objectid/objectid.md: the
		// timestamp is unsigned, 0x7FFFFFFF "Jan 19th, 2038 03:14:07 UTC",
		// 0x80000000 03:14:08 and 0xFFFFFFFF "Feb 7th, 2106 06:28:15 UTC";
		// then 5 random bytes and a 3-byte big-endian counter.
		{name: "ObjectId 0x7FFFFFFF", in: "7fffffff0102030405ffffff", form: wide.FormObjectID,
			bytes: "7fffffff0102030405ffffff", time: time.Date(2038, 1, 19, 3, 14, 7, 0, time.UTC),
			fields: map[string]string{"random": "0102030405", "counter": "16777215"}},
		{name: "ObjectId 0x80000000", in: "80000000aabbccddee000001", form: wide.FormObjectID,
			bytes: "80000000aabbccddee000001", time: time.Date(2038, 1, 19, 3, 14, 8, 0, time.UTC),
			fields: map[string]string{"random": "aabbccddee", "counter": "1"}},
		{name: "ObjectId 0xFFFFFFFF", in: "FFFFFFFF0000000000000000", form: wide.FormObjectID,
			bytes: "ffffffff0000000000000000", time: time.Date(2106, 2, 7, 6, 28, 15, 0, time.UTC),
			fields: map[string]string{"random": "0000000000", "counter": "0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id, err := wide.Parse(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if id.Form != tc.form || hex.EncodeToString(id.Bytes) != tc.bytes || !id.Time.Equal(tc.time) {
				t.Fatalf("Parse(%s) = %s %x %s, want %s %s %s", tc.in, id.Form, id.Bytes, id.Time, tc.form, tc.bytes, tc.time)
			}
			got := map[string]string{}
			for _, f := range id.Fields {
				got[f.Name] = f.Value
			}
			for k, v := range tc.fields {
				if got[k] != v {
					t.Errorf("field %s = %q, want %q (all: %v)", k, got[k], v, id.Fields)
				}
			}
		})
	}
}

func TestParseRefuses(t *testing.T) {
	for _, tc := range []struct{ name, in string }{
		{"empty", ""},
		{"decimal", "1050118621198921728"},
		{"UUID with a bad digit", "017F22E2-79B0-7CC3-98C4-DC0C0C07398G"},
		{"ULID with U", "01ARYZ6S41U000000000000000"},
		{"ULID past 2^128", "80000000000000000000000000"},
		{"KSUID with a dash", "0ujtsYcgvSTl8PAuAdqWYSMnLO-"},
		{"KSUID past 2^160", "zzzzzzzzzzzzzzzzzzzzzzzzzzz"},
		{"xid upper case", "9M4E2MR0UI3E8A215N4G"},
		{"xid with w", "9m4e2mr0ui3e8a215n4w"},
		{"xid with padding bits set", "c6e52g2mrqcjl44hf179"}, // rs/xid's TestFromStringInvalid
		{"ObjectId with a g", "507f1f77bcf86cd79943901g"},
		{"25 characters", strings.Repeat("0", 25)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if id, err := wide.Parse(tc.in); !errors.Is(err, wide.ErrUnknownForm) {
				t.Fatalf("Parse(%q) = %+v, %v; want ErrUnknownForm", tc.in, id, err)
			}
		})
	}
}

// FuzzParse: any string either parses, to bytes of its form's width that
// print back to the same value, or gets an error; never a panic.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"017F22E2-79B0-7CC3-98C4-DC0C0C07398F", "01ARYZ6S410000000000000000",
		"0ujtsYcgvSTl8PAuAdqWYSMnLOv", "9m4e2mr0ui3e8a215n4g", "507f1f77bcf86cd799439011", "", "zz"} {
		f.Add(s)
	}
	width := map[wide.Form]int{wide.FormUUID: 16, wide.FormULID: 16, wide.FormObjectID: 12, wide.FormKSUID: 20, wide.FormXID: 12}
	f.Fuzz(func(t *testing.T, s string) {
		id, err := wide.Parse(s)
		if err != nil {
			return
		}
		if len(id.Bytes) != width[id.Form] {
			t.Fatalf("Parse(%q): %d bytes of %s", s, len(id.Bytes), id.Form)
		}
		again, err := wide.Parse(s)
		if err != nil || hex.EncodeToString(again.Bytes) != hex.EncodeToString(id.Bytes) {
			t.Fatalf("Parse(%q) twice: %x then %x, %v", s, id.Bytes, again.Bytes, err)
		}
	})
}
