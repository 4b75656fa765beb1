package snowflake

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"time"
)

// GuessSkew is how far past now a decoded time may lie and still be
// plausible. Clocks differ between the machine that made an ID and the one
// reading it, and several generators run ahead of the clock under load:
// Hazelcast by up to 15 s, yitter's drift, firn's own start at a stored
// high-water mark up to 10 s ahead.
const GuessSkew = time.Minute

// Candidate is one built-in layout read against an ID by Guess.
type Candidate struct {
	Layout Layout
	// Parts is the ID taken apart by Layout; zero when the ID does not fit
	// the layout's width.
	Parts Parts
	// Plausible reports whether the ID passes the layout's checks: it fits
	// the layout's width (so every field is within its bits), its time
	// lies after the layout's epoch, and not later than now plus
	// GuessSkew.
	Plausible bool
	// Reason says why a candidate is not plausible; empty when it is.
	Reason string
	// Chance is the probability that a uniformly random 64-bit value
	// passes the same checks at the same now and has a node part and a
	// sequence no larger than this ID's: the smaller, the more the ID
	// says for the layout. Node IDs and per-tick counters start at 0 in
	// every system here, so small ones are evidence; a layout whose epoch
	// is recent has few plausible ticks, and one of them is evidence too.
	// Guess ranks by it; it is a heuristic, and two plausible candidates
	// remain two. Zero when the candidate is not plausible.
	Chance float64
}

// Guess reads id with every built-in layout and ranks them: the plausible
// ones first, those a random 64-bit value would pass least often leading
// (ties by name), then the others by name, each with its reason. Two or
// more plausible candidates mean the ID is ambiguous: a Mastodon ID, for
// one, reads as a plausible Discord ID from 2015. now is the time the ID is
// judged at, normally time.Now().
func Guess(id uint64, now time.Time) []Candidate {
	out := make([]Candidate, 0, len(presets))
	for _, name := range PresetNames() {
		out = append(out, judge(presets[name](), id, now))
	}
	slices.SortStableFunc(out, func(a, b Candidate) int {
		switch {
		case a.Plausible != b.Plausible:
			if a.Plausible {
				return -1
			}
			return 1
		case a.Plausible:
			return cmp.Compare(a.Chance, b.Chance)
		}
		return 0
	})
	return out
}

// Plausible returns the leading plausible candidates of a list ranked by
// Guess.
func Plausible(ranked []Candidate) []Candidate {
	n := 0
	for n < len(ranked) && ranked[n].Plausible {
		n++
	}
	return ranked[:n]
}

// judge reads id with l at now.
func judge(l Layout, id uint64, now time.Time) Candidate {
	c := Candidate{Layout: l}
	p, err := l.Decompose(id)
	if err != nil {
		c.Reason = fmt.Sprintf("the ID has bits set above the layout's %d", l.Bits())
		return c
	}
	c.Parts = p
	latest := now.Add(GuessSkew)
	switch {
	case p.Tick == 0:
		c.Reason = "its time part is 0, the epoch itself, as in a small counter"
	case p.Time.After(latest):
		c.Reason = fmt.Sprintf("its time %s is %s after now", p.Time.Format("2006-01-02T15:04:05.000Z"), ahead(p.Time, now))
	default:
		c.Plausible = true
		c.Chance = chance(l, p, latest)
	}
	return c
}

// chance is the probability that a uniformly random 64-bit value fits l,
// has a time part from tick 1 to the last tick starting at or before
// latest, and a node part and a sequence no larger than p's.
func chance(l Layout, p Parts, latest time.Time) float64 {
	fits := math.Ldexp(1, l.Bits()-64)
	fits *= float64(p.Node+1) / math.Ldexp(1, l.NodeBits())
	fits *= float64(p.Sequence+1) / math.Ldexp(1, l.SequenceBits)
	ticks := float64(latest.Sub(l.Epoch)) / float64(l.Tick)
	if latest.Sub(l.Epoch) == time.Duration(math.MaxInt64) {
		ticks = math.Inf(1)
	}
	ticks = min(math.Floor(ticks), float64(l.MaxTick()))
	return fits * ticks / math.Ldexp(1, l.TimeBits)
}

// ahead says how far t lies after now, in seconds, hours, days or years,
// without overflowing time.Duration.
func ahead(t, now time.Time) string {
	s := float64(t.Unix() - now.Unix())
	switch {
	case s < 2*3600:
		return fmt.Sprintf("%.0f s", s)
	case s < 2*86400:
		return fmt.Sprintf("%.0f hours", s/3600)
	case s < 2*365.25*86400:
		return fmt.Sprintf("%.0f days", s/86400)
	}
	return fmt.Sprintf("%.0f years", s/(365.25*86400))
}
