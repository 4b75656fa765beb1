package wide_test

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/oklog/ulid/v2"

	"github.com/firn-id/firn/snowflake"
	"github.com/firn-id/firn/wide"
)

func newWide(t testing.TB, l snowflake.Layout, node uint64) (*wide.Generator, *snowflake.Generator) {
	t.Helper()
	g, err := snowflake.New(snowflake.Config{Layout: l, Node: node, Reservation: snowflake.Unreserved()})
	if err != nil {
		t.Fatal(err)
	}
	w, err := wide.New(g)
	if err != nil {
		t.Fatal(err)
	}
	return w, g
}

func preset(t testing.TB, name string) snowflake.Layout {
	t.Helper()
	l, ok := snowflake.Preset(name)
	if !ok {
		t.Fatalf("no preset %q", name)
	}
	return l
}

// TestOneGeneratorThreeForms draws int64 IDs, UUIDs and ULIDs from one
// generator, singly and in batches, and checks that every one decodes to
// this node, that each form is strictly increasing, and that no two of
// them, across forms, took the same slot.
func TestOneGeneratorThreeForms(t *testing.T) {
	for _, tc := range []struct {
		name   string
		layout string
		node   uint64
	}{
		{name: "node above sequence", layout: "firn", node: 517},
		{name: "sequence above node", layout: "sonyflake", node: 40_000},
		{name: "53 bits", layout: "js53", node: 99},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := preset(t, tc.layout)
			w, g := newWide(t, l, tc.node)
			ctx := context.Background()
			seen := map[uint64]string{}
			take := func(form string, p snowflake.Parts, err error) {
				t.Helper()
				if err != nil {
					t.Fatalf("%s: %v", form, err)
				}
				if p.Node != tc.node {
					t.Fatalf("%s decodes to node %d, want %d", form, p.Node, tc.node)
				}
				if since := time.Since(p.Time); since < -time.Second || since > time.Minute {
					t.Fatalf("%s decodes to time %s, not now", form, p.Time)
				}
				if other, dup := seen[p.ID]; dup {
					t.Fatalf("%s took slot %d (tick %d sequence %d), already taken by %s", form, p.ID, p.Tick, p.Sequence, other)
				}
				seen[p.ID] = form
			}
			var lastU uuid.UUID
			var lastL ulid.ULID
			us, ls, ids := make([]uuid.UUID, 300), make([]ulid.ULID, 300), make([]int64, 300)
			for range 10 {
				id, err := g.Next(ctx)
				if err != nil {
					t.Fatal(err)
				}
				p, err := l.Decompose(uint64(id))
				take("int64", p, err)
				n, err := g.NextN(ctx, ids)
				for _, id := range ids[:n] {
					p, derr := l.Decompose(uint64(id))
					take("int64 batch", p, errors.Join(err, derr))
				}
				u, err := w.NextUUID(ctx)
				if err != nil {
					t.Fatal(err)
				}
				n, err = w.NextUUIDs(ctx, us)
				if err != nil || n != len(us) {
					t.Fatalf("NextUUIDs: %d, %v", n, err)
				}
				for _, u := range append([]uuid.UUID{u}, us...) {
					if u.Version() != 7 || u.Variant() != uuid.RFC4122 {
						t.Fatalf("%s: version %d variant %s", u, u.Version(), u.Variant())
					}
					if bytes.Compare(lastU[:], u[:]) >= 0 { // the zero UUID first
						t.Fatalf("UUID %s after %s", u, lastU)
					}
					lastU = u
					p, err := wide.DecodeUUID(l, u)
					take("uuid", p, err)
				}
				v, err := w.NextULID(ctx)
				if err != nil {
					t.Fatal(err)
				}
				n, err = w.NextULIDs(ctx, ls)
				if err != nil || n != len(ls) {
					t.Fatalf("NextULIDs: %d, %v", n, err)
				}
				for _, v := range append([]ulid.ULID{v}, ls...) {
					if v.Compare(lastL) <= 0 {
						t.Fatalf("ULID %s after %s", v, lastL)
					}
					lastL = v
					p, err := wide.DecodeULID(l, v)
					take("ulid", p, err)
				}
			}
			if want := 10 * (1 + 300) * 3; len(seen) != want {
				t.Fatalf("%d distinct slots, want %d", len(seen), want)
			}
		})
	}
}

func TestDecodeRefuses(t *testing.T) {
	l := preset(t, "sonyflake") // 10 ms ticks from 2014-09-01
	for _, tc := range []struct {
		name string
		u    uuid.UUID
		want error
	}{
		{name: "version 4", u: uuid.MustParse("f47ac10b-58cc-4372-a567-0e02b2c3d479"), want: wide.ErrNotV7},
		{name: "not on a tick", u: uuid.MustParse("017F22E2-79B1-7CC3-98C4-DC0C0C07398F"), want: wide.ErrNotLayout},
		{name: "before the epoch", u: uuid.MustParse("00000000-0000-7000-8000-000000000000"), want: wide.ErrNotLayout},
		{name: "version 7, wrong variant", u: uuid.MustParse("017F22E2-79B0-7CC3-C8C4-DC0C0C07398F"), want: wide.ErrNotV7},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := wide.DecodeUUID(l, tc.u); !errors.Is(err, tc.want) {
				t.Fatalf("DecodeUUID(%s): %v, want %v", tc.u, err, tc.want)
			}
		})
	}
	if _, err := wide.DecodeULID(l, ulid.MustParse("01ARYZ6S410000000000000000")); !errors.Is(err, wide.ErrNotLayout) {
		t.Fatalf("a 2016 ULID on a 10 ms grid of 1 ms: %v, want ErrNotLayout", err)
	}
}

// TestDecodeEveryPreset: every preset, decode-only ones with ticks of
// microseconds among them, decodes or refuses any UUIDv7 and ULID with
// an error; a sub-millisecond tick is ErrNotLayout, never a panic.
func TestDecodeEveryPreset(t *testing.T) {
	ids := []uuid.UUID{uuid.Must(uuid.NewV7()), uuid.MustParse("017F22E2-79B0-7CC3-98C4-DC0C0C07398F"), {}}
	for _, name := range snowflake.PresetNames() {
		l := preset(t, name)
		for _, u := range ids {
			_, err := wide.DecodeUUID(l, u)
			_, uerr := wide.DecodeULID(l, ulid.ULID(u))
			if l.Tick%time.Millisecond != 0 && (!errors.Is(err, wide.ErrNotLayout) || !errors.Is(uerr, wide.ErrNotLayout)) {
				t.Errorf("%s, tick %s: DecodeUUID %v, DecodeULID %v; want ErrNotLayout", name, l.Tick, err, uerr)
			}
		}
	}
}

func TestNewRefusesNil(t *testing.T) {
	if _, err := wide.New(nil); err == nil {
		t.Fatal("New(nil) gave a generator")
	}
}

// TestNextStopsAtTheHWM: the wide forms stop where the int64 IDs stop,
// at the reservation, with the same error.
func TestNextStopsAtTheHWM(t *testing.T) {
	l := preset(t, "firn")
	res := &fixed{limit: time.Now().Add(-time.Hour).UnixMilli()}
	g, err := snowflake.New(snowflake.Config{Layout: l, Reservation: res})
	if err != nil {
		t.Fatal(err)
	}
	w, err := wide.New(g)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := w.NextUUID(ctx); !errors.Is(err, snowflake.ErrNotServing) {
		t.Fatalf("NextUUID past the HWM: %v, want ErrNotServing", err)
	}
	if n, err := w.NextULIDs(ctx, make([]ulid.ULID, 10)); n != 0 || !errors.Is(err, snowflake.ErrNotServing) {
		t.Fatalf("NextULIDs past the HWM: %d, %v, want 0 and ErrNotServing", n, err)
	}
}

// fixed is a reservation whose HWM never moves.
type fixed struct{ limit int64 }

func (f *fixed) BindGenerator(func() int64) error { return nil }
func (f *fixed) Start() int64            { return 0 }
func (f *fixed) Limit() int64            { return f.limit }
