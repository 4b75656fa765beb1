package config_test

import (
	"errors"
	"testing"

	"github.com/firn-id/firn/cmd/firn/internal/config"
	"github.com/firn-id/firn/snowflake"
)

// TestNodeFor: registry.node names no node, one number, or one per node
// field; what is not a node of the layout, and a derived node whose risk
// was not accepted, are bad input with the message the CLI prints.
func TestNodeFor(t *testing.T) {
	twitter, _ := snowflake.Preset("twitter")
	tests := []struct {
		name    string
		r       config.Registry
		want    *uint64
		wantErr string
	}{
		{name: "lowest free", r: config.Registry{}},
		{name: "one number", r: config.Registry{Node: "1023"}, want: ptr(1023)},
		{name: "one per field", r: config.Registry{Node: "3,17"}, want: ptr(3<<5 | 17)},
		{name: "out of range", r: config.Registry{Node: "1024"}, wantErr: "--node 1024 out of range: layout twitter has 10 node bits (0..1023)"},
		{name: "field out of range", r: config.Registry{Node: "3,32"}, wantErr: `--node "3,32": node field worker out of range 0..31`},
		{name: "not a number", r: config.Registry{Node: "x"}, wantErr: `--node "x": want a non-negative number, or one per node field`},
		{name: "derived, risk not accepted", r: config.Registry{Node: "derived"},
			wantErr: "--node derived cannot see a second host with the same address bits: add --accept-collision-risk to accept that"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.r.NodeFor(twitter)
			if tt.wantErr != "" {
				var ie *config.InputError
				if !errors.As(err, &ie) || err.Error() != tt.wantErr {
					t.Fatalf("NodeFor: %v; want *InputError %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || (got == nil) != (tt.want == nil) || got != nil && *got != *tt.want {
				t.Fatalf("NodeFor: %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}

func TestReserved(t *testing.T) {
	twitter, _ := snowflake.Preset("twitter")
	if got, err := (config.Registry{ReservedNodes: []uint64{0, 1023}}).Reserved(twitter); err != nil || len(got) != 2 {
		t.Fatalf("Reserved: %v, %v; want both nodes", got, err)
	}
	_, err := config.Registry{ReservedNodes: []uint64{1024}}.Reserved(twitter)
	var ie *config.InputError
	if !errors.As(err, &ie) || err.Error() != "--reserved-nodes: 1024 is not a node of layout twitter (0..1023)" {
		t.Fatalf("Reserved: %v; want an *InputError naming node 1024", err)
	}
}

func TestGeneratorRefusesAnUnknownPolicy(t *testing.T) {
	twitter, _ := snowflake.Preset("twitter")
	c := config.Default()
	c.Snowflake.Exhausted = "spin"
	_, err := c.Generator(twitter)
	var fe *config.FieldError
	if !errors.As(err, &fe) || fe.Field != "snowflake.exhausted" {
		t.Fatalf("Generator: %v; want a *FieldError for snowflake.exhausted", err)
	}
}

func ptr(v uint64) *uint64 { return &v }

// TestLease: the lease carries the layout's node bits, its ID space, the
// node and the reserved nodes; a reserved node outside the layout is
// refused as Reserved refuses it.
func TestLease(t *testing.T) {
	l := snowflake.DefaultLayout()
	c, err := config.Registry{Node: "5", ReservedNodes: []uint64{0}, StartAhead: true}.Lease(l, nil, config.Site{})
	if err != nil || c.NodeBits != l.NodeBits() || c.Layout != config.SpaceID(l, nil) || c.Node == nil || *c.Node != 5 ||
		len(c.Reserved) != 1 || !c.StartAhead || c.TTL != 0 {
		t.Fatalf("Lease: %+v, %v", c, err)
	}
	if _, err := (config.Registry{ReservedNodes: []uint64{l.MaxNode() + 1}}).Lease(l, nil, config.Site{}); err == nil {
		t.Fatal("Lease with a reserved node outside the layout: no error")
	}
}
