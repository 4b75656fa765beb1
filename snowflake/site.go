package snowflake

import (
	"fmt"
	"strconv"
	"strings"
)

// SiteNodes returns the node values whose leading node fields hold fixed:
// First to First+Count−1. A site fixes the leading fields, in the
// layout's order (datacenter before worker), so its nodes are one
// contiguous range and every other site's are disjoint from it. It
// refuses no fields, a name that is not a node field, a field fixed out of
// order or twice, all of the fields (nothing left to lease), and a value
// past its field's width, with a *SiteFieldsError.
func (l Layout) SiteNodes(fixed []FieldValue) (first, count uint64, err error) {
	refuse := func(format string, a ...any) (uint64, uint64, error) {
		return 0, 0, &SiteFieldsError{Layout: l.label(), Fields: l.nodeFieldList(), Reason: fmt.Sprintf(format, a...)}
	}
	if len(fixed) == 0 {
		return refuse("a site fixes at least one node field")
	}
	if len(fixed) >= len(l.Node) {
		return refuse("a site fixes leading node fields and leases the rest from its registry: at most %d of the %d fields", len(l.Node)-1, len(l.Node))
	}
	var value uint64
	bits := 0
	for i, fv := range fixed {
		f := l.Node[i]
		if fv.Name != f.Name {
			return refuse("field %d of the node part is %q, not %q: a site fixes the leading fields in the layout's order", i+1, f.Name, fv.Name)
		}
		if fv.Value > 1<<uint(f.Bits)-1 {
			return refuse("%s=%d does not fit the field's %d bits (0..%d)", f.Name, fv.Value, f.Bits, uint64(1)<<uint(f.Bits)-1)
		}
		value = value<<uint(f.Bits) | fv.Value
		bits += f.Bits
	}
	rest := uint(l.NodeBits() - bits)
	return value << rest, 1 << rest, nil
}

// nodeFieldList is the node fields as name:bits, for messages.
func (l Layout) nodeFieldList() string {
	s := make([]string, len(l.Node))
	for i, f := range l.Node {
		s[i] = f.Name + ":" + strconv.Itoa(f.Bits)
	}
	return strings.Join(s, ",")
}

// SiteFieldsError refuses the node fields a site fixes.
type SiteFieldsError struct {
	Layout string // the layout's name
	Fields string // its node fields, name:bits, most significant first
	Reason string
}

func (e *SiteFieldsError) Error() string { return "snowflake: " + e.Why() }

// Why is the message without the package's name, for a caller that names
// the setting itself.
func (e *SiteFieldsError) Why() string {
	return fmt.Sprintf("layout %s (node fields %s): %s", e.Layout, e.Fields, e.Reason)
}
