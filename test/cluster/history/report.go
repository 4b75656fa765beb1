package history

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
)

// Write prints the report: the totals, each phase (the rounds of one
// fault summed), and the violations.
func (r *Report) Write(w io.Writer) {
	fmt.Fprintf(w, "%d requests, %d IDs checked, errors %s, largest lead of an ID's time over its answer %s\n",
		r.Requests, r.IDs, kinds(r.Errors), r.MaxLead.Round(1e6))
	fmt.Fprintf(w, "%-28s %9s %11s %9s %9s  %s\n", "phase", "requests", "IDs", "gap", "proc gap", "errors")
	for _, p := range r.byName() {
		if p.Requests == 0 {
			continue
		}
		gap := p.ProcGap.Round(1e6).String()
		if p.GapProc != "" {
			gap += " (" + p.GapProc + ")"
		}
		fmt.Fprintf(w, "%-28s %9d %11d %9s %9s  %s\n", p.Name, p.Requests, p.IDs, p.Gap.Round(1e6), gap, kinds(p.Errors))
	}
	for _, tag := range slices.Sorted(maps.Keys(r.SegmentIDs)) {
		end := "no counter recorded: uniqueness and order only"
		if es := r.SegmentEnd[tag]; len(es) > 0 {
			var parts []string
			for _, e := range es {
				if e.Delta == 0 {
					parts = append(parts, fmt.Sprintf("all below the store's counter %d", e.End))
				} else {
					parts = append(parts, fmt.Sprintf("those ≡ %d (mod %d) below %d", e.Remainder, e.Delta, e.End))
				}
			}
			end = strings.Join(parts, ", ")
		}
		fmt.Fprintf(w, "segment tag %s: %d IDs, %s\n", tag, r.SegmentIDs[tag], end)
	}
	if r.BufferedIDs > 0 {
		fmt.Fprintf(w, "through the Go client's buffer: %d snowflake IDs (unique with every other, times within the client's MaxAge)\n", r.BufferedIDs)
	}
	if r.OK() {
		fmt.Fprintln(w, "no violations: no duplicate, order, fencing, time, decode, segment-range or site error")
		return
	}
	fmt.Fprintf(w, "VIOLATIONS %s\n", kinds(r.Counts))
	for _, v := range r.Violations {
		fmt.Fprintf(w, "  %s: %s\n", v.Check, v.Detail)
	}
}

// kinds prints counts by kind in a stable order.
func kinds(m map[string]int) string {
	if len(m) == 0 {
		return "none"
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s=%d", k, m[k]))
	}
	return strings.Join(parts, " ")
}

// byName sums the phases of one name (a fault repeated in several rounds)
// in the order they first began: counts add up, gaps are the longest.
func (r *Report) byName() []*Phase {
	var out []*Phase
	seen := map[string]*Phase{}
	for _, p := range r.Phases {
		sum, ok := seen[p.Name]
		if !ok {
			sum = &Phase{Name: p.Name, Start: p.Start, Errors: map[string]int{}}
			seen[p.Name] = sum
			out = append(out, sum)
		}
		sum.Requests += p.Requests
		sum.IDs += p.IDs
		for k, n := range p.Errors {
			sum.Errors[k] += n
		}
		sum.Gap = max(sum.Gap, p.Gap)
		if p.ProcGap > sum.ProcGap {
			sum.ProcGap, sum.GapProc = p.ProcGap, p.GapProc
		}
	}
	return out
}
