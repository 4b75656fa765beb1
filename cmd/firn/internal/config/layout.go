package config

import (
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/firn-id/firn/snowflake"
)

// Snowflake builds and validates the layout the settings describe: the
// preset, then each part given overriding it. Its errors are
// *InputError.
func (f Layout) Snowflake() (snowflake.Layout, error) {
	l, ok := snowflake.Preset(f.Preset)
	if !ok {
		return l, inputf("unknown layout %q (presets: %s)", f.Preset, strings.Join(snowflake.PresetNames(), ", "))
	}
	custom := false
	set := func(s string, apply func(string) error) error {
		if s == "" {
			return nil
		}
		custom = true
		return apply(s)
	}
	steps := []struct {
		val   string
		apply func(string) error
	}{
		{f.Epoch, func(s string) (err error) { l.Epoch, err = ParseEpoch(s); return }},
		{f.Tick, func(s string) (err error) { l.Tick, err = parseTick(s); return }},
		{f.TimeBits, func(s string) (err error) { l.TimeBits, err = parseBits("--time-bits", s); return }},
		{f.NodeBits, func(s string) (err error) { l.Node, err = parseNodeBits(s); return }},
		{f.SequenceBits, func(s string) (err error) { l.SequenceBits, err = parseBits("--sequence-bits", s); return }},
		{f.Order, func(s string) (err error) { l.Order, err = parseOrder(s); return }},
		{f.NodeNames, func(s string) error { return nameFields(l.Node, s) }},
	}
	for _, st := range steps {
		if err := set(st.val, st.apply); err != nil {
			return l, err
		}
	}
	if custom {
		l.Name = "custom"
	}
	if err := l.Validate(); err != nil {
		return l, inputf("%s", err)
	}
	return l, nil
}

// minEpochMS is the smallest numeric epoch taken as milliseconds other
// than 0: 1e11 ms is 1973-03-03, while 1e11 s is in the year 5138, so a
// smaller number is almost surely Unix seconds given by mistake (the
// 2026 epoch 1767225600 read as milliseconds is 1970-01-21). An epoch
// before it can still be given in RFC 3339.
const minEpochMS = 100_000_000_000

// ParseEpoch reads --epoch (and the configuration's epoch, which becomes
// it), and every other time a command takes the same way: Unix
// milliseconds or an RFC 3339 time. Its errors are *InputError.
func ParseEpoch(s string) (time.Time, error) {
	if ms, err := strconv.ParseInt(s, 10, 64); err == nil {
		if ms > 0 && ms < minEpochMS {
			return time.Time{}, inputf("--epoch %d looks like Unix seconds: did you mean %d ms, %s? "+
				"Give milliseconds, or an RFC 3339 time for an epoch before 1973-03-03",
				ms, ms*1000, time.Unix(ms, 0).UTC().Format(time.RFC3339))
		}
		return time.UnixMilli(ms).UTC(), nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, inputf("--epoch %q: want Unix milliseconds or an RFC 3339 time", s)
	}
	return t.UTC(), nil
}

func parseTick(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, inputf("--tick %q: want a duration such as 1ms, 10ms or 1s", s)
	}
	return d, nil
}

func parseBits(flagName, s string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n < 0 || n > 64 {
		return 0, inputf("%s %q: want a number of bits, 0 to 64", flagName, s)
	}
	return n, nil
}

func parseNodeBits(s string) ([]snowflake.Field, error) {
	parts := strings.Split(s, ",")
	if len(parts) == 1 && strings.TrimSpace(parts[0]) == "0" {
		return nil, nil
	}
	fields := make([]snowflake.Field, len(parts))
	for i, p := range parts {
		n, err := parseBits("--node-bits", p)
		if err != nil {
			return nil, err
		}
		fields[i] = snowflake.Field{Name: "node", Bits: n}
		if len(parts) > 1 {
			fields[i].Name = "node" + strconv.Itoa(i+1)
		}
	}
	return fields, nil
}

func nameFields(fields []snowflake.Field, s string) error {
	names := strings.Split(s, ",")
	if len(names) != len(fields) {
		return inputf("--node-names %q names %s, but the layout has %s", s, plural(len(names), "field"), plural(len(fields), "node field"))
	}
	for i, n := range names {
		fields[i].Name = strings.TrimSpace(n)
	}
	return nil
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

func parseOrder(s string) ([]snowflake.Part, error) {
	var order []snowflake.Part
	for _, p := range strings.Split(s, ",") {
		switch q := snowflake.Part(strings.TrimSpace(p)); q {
		case snowflake.PartTime, snowflake.PartNode, snowflake.PartSequence:
			order = append(order, q)
		default:
			return nil, inputf("--order %q: unknown part %q (want time, node, sequence)", s, p)
		}
	}
	return order, nil
}

// CheckGenerates refuses a layout that cannot issue IDs at now: a
// decode-only one, or one whose time part has run out. Every command that
// issues IDs or opens a store calls it before touching anything, so such a
// layout is never recorded in a store; firn parse still decodes its IDs.
// Its errors are *InputError.
func CheckGenerates(l snowflake.Layout, now time.Time) error {
	var le *snowflake.LayoutError
	if err := l.ValidateForGenerator(); errors.As(err, &le) {
		return inputf("layout %s: %s", l.Name, le.Reason)
	}
	if since, ok := l.ExhaustedAt(now); ok {
		return inputf("layout %s is exhausted since %s: its %d time bits of %s ran out, so it can only decode IDs (firn parse)",
			l.Name, since.Format(time.DateOnly), l.TimeBits, l.Tick)
	}
	return nil
}

// CheckJavaScriptSafe refuses, when snowflake.javascript_safe is set and
// snowflake mode is on, a layout whose IDs reach past 2^53: an
// *InputError naming the setting and a layout that fits.
func (s Snowflake) CheckJavaScriptSafe(l snowflake.Layout) error {
	if s.JavaScriptSafe && s.Enabled && !l.JavaScriptSafe() {
		return inputf("snowflake.javascript_safe (--javascript-safe): the layout has %d bits, so its IDs reach past 2^53; use a layout of at most %d bits, such as --layout js53",
			l.Bits(), snowflake.JavaScriptBits)
	}
	return nil
}
