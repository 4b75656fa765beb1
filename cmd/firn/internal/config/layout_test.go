package config_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/firn-id/firn/cmd/firn/internal/config"
	"github.com/firn-id/firn/snowflake"
)

// TestLayoutSnowflake: each part given overrides the preset, and every
// value refused is an *InputError naming the flag, which commands report
// as bad input.
func TestLayoutSnowflake(t *testing.T) {
	tests := []struct {
		name string
		give config.Layout
		want string // the error's start, or "" for a layout
	}{
		{name: "preset", give: config.Layout{Preset: "twitter"}},
		{name: "custom", give: config.Layout{Preset: "firn", NodeBits: "5,5", NodeNames: "dc, host"}},
		{name: "unknown preset", give: config.Layout{Preset: "nope"}, want: `unknown layout "nope" (presets: `},
		{name: "epoch in seconds", give: config.Layout{Preset: "firn", Epoch: "1767225600"}, want: "--epoch 1767225600 looks like Unix seconds: did you mean 1767225600000 ms"},
		{name: "epoch", give: config.Layout{Preset: "firn", Epoch: "yesterday"}, want: `--epoch "yesterday": want Unix milliseconds or an RFC 3339 time`},
		{name: "tick", give: config.Layout{Preset: "firn", Tick: "fast"}, want: `--tick "fast": want a duration`},
		{name: "bits", give: config.Layout{Preset: "firn", TimeBits: "65"}, want: `--time-bits "65": want a number of bits, 0 to 64`},
		{name: "node bits", give: config.Layout{Preset: "firn", NodeBits: "8,x"}, want: `--node-bits "x": want a number of bits`},
		{name: "node names", give: config.Layout{Preset: "firn", NodeNames: "a,b"}, want: `--node-names "a,b" names 2 fields, but the layout has 1 node field`},
		{name: "order", give: config.Layout{Preset: "firn", Order: "time,up"}, want: `--order "time,up": unknown part "up"`},
		{name: "invalid", give: config.Layout{Preset: "firn", TimeBits: "60"}, want: "snowflake: layout custom: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := tt.give.Snowflake()
			var ie *config.InputError
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("error %v, want a layout", err)
			case tt.want == "":
				if verr := l.Validate(); verr != nil {
					t.Fatalf("an invalid layout: %v", verr)
				}
				if custom := tt.give != (config.Layout{Preset: tt.give.Preset}); custom != (l.Name == "custom") {
					t.Fatalf("name %q for %+v", l.Name, tt.give)
				}
			case !errors.As(err, &ie) || !strings.HasPrefix(err.Error(), tt.want):
				t.Fatalf("error %v (%T), want an *InputError starting %q", err, err, tt.want)
			}
		})
	}
}

// TestCheckGenerates: a layout whose time part ran out is refused with
// the day it ran out, a decode-only one with its reason.
func TestCheckGenerates(t *testing.T) {
	baidu, _ := snowflake.Preset("baidu")
	err := config.CheckGenerates(baidu, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	var ie *config.InputError
	if !errors.As(err, &ie) || !strings.Contains(err.Error(), "exhausted since 2024-11-20") {
		t.Fatalf("baidu in 2026: %v, want an *InputError saying it is exhausted since 2024-11-20", err)
	}
	wide, err := config.Layout{Preset: "firn", TimeBits: "40", NodeBits: "16", SequenceBits: "8"}.Snowflake()
	if err != nil {
		t.Fatal(err)
	}
	if err := config.CheckGenerates(wide, time.Now()); !errors.As(err, &ie) || !strings.HasPrefix(err.Error(), "layout custom: ") {
		t.Fatalf("a 64-bit layout: %v, want an *InputError naming it", err)
	}
	firn, _ := snowflake.Preset("firn")
	if err := config.CheckGenerates(firn, time.Now()); err != nil {
		t.Fatal(err)
	}
}

// TestCheckJavaScriptSafe: a 64-bit layout is refused only when the
// setting is on and snowflake mode serves; js53 always passes.
func TestCheckJavaScriptSafe(t *testing.T) {
	wide := snowflake.DefaultLayout()
	js, err := (config.Layout{Preset: "js53"}).Snowflake()
	if err != nil {
		t.Fatal(err)
	}
	on := config.Snowflake{JavaScriptSafe: true, Enabled: true}
	var ie *config.InputError
	if err := on.CheckJavaScriptSafe(wide); !errors.As(err, &ie) {
		t.Fatalf("%s with javascript_safe: %v; want an *InputError", wide, err)
	}
	if err := on.CheckJavaScriptSafe(js); err != nil {
		t.Fatalf("js53: %v", err)
	}
	if err := (config.Snowflake{JavaScriptSafe: true}).CheckJavaScriptSafe(wide); err != nil {
		t.Fatalf("snowflake mode off: %v", err)
	}
}
