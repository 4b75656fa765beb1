package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/firn-id/firn/snowflake"
)

// Node is an ID's node fields, written as a JSON object in the layout's
// order, most significant first ({"worker":1,"process":0} for Discord),
// as DESIGN.md and firn parse name them; a map would sort them by name.
type Node []snowflake.FieldValue

// Get returns the value of the field called name.
func (n Node) Get(name string) (uint64, bool) {
	for _, f := range n {
		if f.Name == name {
			return f.Value, true
		}
	}
	return 0, false
}

// MarshalJSON writes n as an object, in order.
func (n Node) MarshalJSON() ([]byte, error) {
	b := []byte{'{'}
	for i, f := range n {
		if i > 0 {
			b = append(b, ',')
		}
		name, err := json.Marshal(f.Name)
		if err != nil {
			return nil, err
		}
		b = strconv.AppendUint(append(append(b, name...), ':'), f.Value, 10)
	}
	return append(b, '}'), nil
}

// UnmarshalJSON reads an object of whole numbers, keeping its order.
func (n *Node) UnmarshalJSON(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return fmt.Errorf("api: node: want an object of fields, got %s", b)
	}
	out := Node{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return fmt.Errorf("api: node: %w", err)
		}
		name, _ := t.(string)
		var v json.Number
		if err := dec.Decode(&v); err != nil {
			return fmt.Errorf("api: node field %q: %w", name, err)
		}
		u, err := strconv.ParseUint(v.String(), 10, 64)
		if err != nil {
			return fmt.Errorf("api: node field %q: %s is not a whole number", name, v)
		}
		out = append(out, snowflake.FieldValue{Name: name, Value: u})
	}
	*n = out
	return nil
}
