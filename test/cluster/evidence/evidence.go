// Package evidence is the report of `make evidence`: each long run of the
// fault harness, one per store and build, writes a Section beside its
// compressed histories, and Report prints the sections as one table.
package evidence

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Section is one run's evidence.
type Section struct {
	Store string    `json:"store"` // the node store: etcd, postgres, mysql, zookeeper
	Build string    `json:"build"` // "test" (store operations recorded) or "production"
	Date  time.Time `json:"date"`
	IDs   int       `json:"ids"` // IDs checked, every rule passed or not
	// Violations counts the ID checker's findings by rule.
	Violations map[string]int `json:"violations"`
	Faults     []Fault        `json:"faults"`
	// Verdict is the linearizability checker's on the store operations;
	// empty for the production build, which records none.
	Verdict string `json:"verdict,omitempty"`
	// Linearizable is the verdict's yes: the history is one a correct
	// store gives, and broke no rule that spans nodes.
	Linearizable bool `json:"linearizable"`
	// Histories is the directory of the run's compressed histories.
	Histories string `json:"histories"`
}

// Fault is one fault kind's count and timings.
type Fault struct {
	Name     string `json:"name"`
	Count    int    `json:"count"`
	NodeFree Stat   `json:"node_free"`
	Served   Stat   `json:"served_again"`
	Back     Stat   `json:"place_served_again"`
	Pause    Stat   `json:"survivors_pause"`
}

// Stat is the median and p99 of one timing; N = 0 when not measured.
type Stat struct {
	N      int           `json:"n"`
	Median time.Duration `json:"median"`
	P99    time.Duration `json:"p99"`
}

// Of returns the median and p99 of ds (nearest rank).
func Of(ds []time.Duration) Stat {
	if len(ds) == 0 {
		return Stat{}
	}
	s := slices.Sorted(slices.Values(ds))
	q := func(p float64) time.Duration { return s[min(len(s)-1, int(p*float64(len(s))))] }
	return Stat{N: len(s), Median: q(0.5), P99: q(0.99)}
}

func (s Stat) String() string {
	if s.N == 0 {
		return "—"
	}
	return s.Median.Round(time.Millisecond).String() + " / " + s.P99.Round(time.Millisecond).String()
}

// FileName is the section's file in the evidence directory.
func (s Section) FileName() string { return s.Store + "-" + s.Build + ".json" }

// Write writes s into dir.
func Write(dir string, s Section) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, s.FileName()), append(b, '\n'), 0o644)
}

// Read reads every section in dir, by store and build.
func Read(dir string) ([]Section, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	var out []Section
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		var s Section
		if err := json.Unmarshal(b, &s); err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b Section) int { return strings.Compare(a.FileName(), b.FileName()) })
	return out, nil
}

// Failed reports whether the run broke a rule: an ID checker's, or, for
// the test build, the store operations'.
func (s Section) Failed() bool {
	return len(s.Violations) > 0 || (s.Build == "test" && !s.Linearizable)
}

// Report prints the sections as Markdown: one summary line per run, then
// one table per run of each fault's count and timings, medians / p99.
func Report(w io.Writer, sections []Section) {
	fmt.Fprintln(w, "| store | build | date | IDs checked | ID violations | store operations | histories |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|")
	for _, s := range sections {
		verdict := s.Verdict
		if verdict == "" {
			verdict = "not recorded (production build)"
		}
		fmt.Fprintf(w, "| %s | %s | %s | %d | %s | %s | `%s` |\n", s.Store, s.Build, s.Date.Format("2006-01-02"), s.IDs,
			violations(s.Violations), verdict, s.Histories)
	}
	for _, s := range sections {
		fmt.Fprintf(w, "\n%s, %s build — medians / p99:\n\n", s.Store, s.Build)
		fmt.Fprintln(w, "| fault | count | node free again | node served again | killed process's place served again | survivors' longest pause |")
		fmt.Fprintln(w, "|---|---|---|---|---|---|")
		for _, f := range s.Faults {
			fmt.Fprintf(w, "| %s | %d | %s | %s | %s | %s |\n", f.Name, f.Count, f.NodeFree, f.Served, f.Back, f.Pause)
		}
	}
}

func violations(m map[string]int) string {
	if len(m) == 0 {
		return "none"
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}
