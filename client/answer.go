package client

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/firn-id/firn/api"
)

// unmarshaler is the type of a body that checks its own shape (api.Node).
var unmarshaler = reflect.TypeFor[json.Unmarshaler]()

// checkShape reports whether b, a JSON answer, holds a value of type t
// whole, before it is decoded: json.Unmarshal alone leaves a field the
// answer lacks, or a null, at its zero value, so a proxy's null or {}
// would read as next ID 0. A server writes every field of an api body
// that has no omitempty, never as null, and a number in a string (the
// ",string" option) in canonical decimal; an answer that does not is not
// a firn server's. Field names are matched exactly, where json.Unmarshal
// ignores case, so the field checked is the field decoded.
func checkShape(b []byte, t reflect.Type) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(unmarshaler) {
		return nil
	}
	switch t.Kind() {
	case reflect.Slice:
		var items []json.RawMessage
		if err := json.Unmarshal(b, &items); err != nil {
			return err
		}
		for i, item := range items {
			if err := checkShape(item, t.Elem()); err != nil {
				return fmt.Errorf("item %d: %w", i, err)
			}
		}
	case reflect.Struct:
		return checkFields(b, t)
	}
	return nil
}

// checkFields is checkShape for a struct type t.
func checkFields(b []byte, t reflect.Type) error {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(b, &fields); err != nil || fields == nil {
		return fmt.Errorf("want a JSON object, got %.40s", b)
	}
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "-" {
			continue
		}
		name = cmp.Or(name, f.Name)
		v, ok := fields[name]
		for k := range fields {
			if k != name && strings.EqualFold(k, name) {
				return fmt.Errorf("field %q where %q is expected", k, name)
			}
		}
		optional := strings.Contains(","+opts+",", ",omitempty,")
		switch {
		case !ok && optional:
			continue
		case !ok:
			return fmt.Errorf("no field %q", name)
		case string(v) == "null":
			if optional {
				continue
			}
			return fmt.Errorf("field %q is null", name)
		case strings.Contains(","+opts+",", ",string,"):
			if err := canonical(v, f.Type); err != nil {
				return fmt.Errorf("field %q: %w", name, err)
			}
		}
		if err := checkShape(v, f.Type); err != nil {
			return fmt.Errorf("field %q: %w", name, err)
		}
	}
	return nil
}

// canonical reports whether v, a number written as a JSON string, is in
// the decimal form strconv writes: no sign but a minus, no leading zero,
// no space, in range. Another form of the same number is not what a
// server writes.
func canonical(v json.RawMessage, t reflect.Type) error {
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return fmt.Errorf("want a number in a string, got %.40s", v)
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	var back string
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, err := strconv.ParseInt(s, 10, t.Bits())
		if err != nil {
			return fmt.Errorf("%q is not a whole number of %d bits", s, t.Bits())
		}
		back = strconv.FormatInt(n, 10)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		n, err := strconv.ParseUint(s, 10, t.Bits())
		if err != nil {
			return fmt.Errorf("%q is not a whole number of %d bits", s, t.Bits())
		}
		back = strconv.FormatUint(n, 10)
	default:
		return nil
	}
	if back != s {
		return fmt.Errorf("%q is not in canonical decimal (%s)", s, back)
	}
	return nil
}

// batchOf asks t for n IDs (snowflake if tag is empty) and refuses a
// batch no server issues, none of its IDs returned: any batch with an ID
// twice, which would be handed to two callers, and a snowflake batch that
// does not strictly increase unless its answer says it is unordered
// (api.Order: a layout with the sequence above time, opaque mode). An
// answer that says nothing is held to increasing order, so a server or a
// proxy that drops the header costs availability, never a check. Segment
// batches are checked for distinct IDs only, whatever they say: an opaque
// tag's are permuted, and a range fetched after a store failed over may
// be lower. Only the batch is checked, not its order against earlier
// ones: two requests to one server may answer in either order, and one
// address may be several servers behind a load balancer, whose IDs are
// not ordered.
func batchOf(ctx context.Context, t transport, tag string, n int) ([]int64, error) {
	ids, unordered, err := t.batch(ctx, tag, n)
	if err != nil {
		return nil, err
	}
	if err := checkBatch(ids, tag == "" && !unordered); err != nil {
		return nil, err
	}
	return ids, nil
}

// checkBatch returns a bad_answer *Error when ids repeats an ID or, with
// ordered set, does not strictly increase.
func checkBatch(ids []int64, ordered bool) error {
	i := 1
	for i < len(ids) && ids[i-1] < ids[i] {
		i++
	}
	switch {
	case i >= len(ids):
		return nil
	case ordered:
		return &Error{Kind: ErrUnavailable, Code: "bad_answer", Message: fmt.Sprintf(
			"snowflake IDs out of order: ID %d of the batch, %d, is not above the one before it, %d, in an answer that does not say %s: %s (a firn server whose IDs do not increase says so; an older one, or a proxy dropping the header, does not)",
			i+1, ids[i], ids[i-1], api.Order, api.OrderUnordered)}
	}
	sorted := slices.Clone(ids)
	slices.Sort(sorted)
	for j := 1; j < len(sorted); j++ {
		if sorted[j] == sorted[j-1] {
			return &Error{Kind: ErrUnavailable, Code: "bad_answer", Message: fmt.Sprintf(
				"ID %d is in the batch twice", sorted[j])}
		}
	}
	return nil
}
