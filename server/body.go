package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// decodeBody reads a request's JSON body into v, a pointer to a struct
// whose json tags name the body's fields (string and integer fields,
// ",string" integers, pointers to them). What is wrong is said in the
// API's words, never Go's: a body that is not one JSON object, a field
// the route does not take, a value of the wrong JSON type, data after the
// object. The body is capped where every request's is (Service.MaxBody):
// past it, 413.
func decodeBody(r *http.Request, v any) error {
	fields := bodyFields(v)
	dec := json.NewDecoder(r.Body)
	var raw map[string]json.RawMessage
	err := dec.Decode(&raw)
	if err == nil && raw == nil {
		err = &json.UnmarshalTypeError{Value: "null"}
	}
	if err == nil {
		if _, end := dec.Token(); end != io.EOF {
			err = errTrailing
			var mb *http.MaxBytesError
			if errors.As(end, &mb) {
				err = end
			}
		}
	}
	if err != nil {
		return bodyError(err, fields)
	}
	names := make([]string, 0, len(raw))
	for name := range raw {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		f, ok := fields.lookup(name)
		if !ok {
			return badRequest(fmt.Sprintf("body: unknown field %q; want %s", name, fields))
		}
		if err := f.set(raw[name]); err != nil {
			return badRequest(fmt.Sprintf("body: %q must be %s, got %s", name, f.want(), jsonKind(raw[name])))
		}
	}
	return nil
}

var errTrailing = errors.New("data after the JSON object")

// bodyError says why a body is not one JSON object.
func bodyError(err error, fields bodyShape) error {
	var mb *http.MaxBytesError
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &mb):
		return fmt.Errorf("%w: over %d bytes", ErrBodyTooLarge, mb.Limit)
	case errors.Is(err, io.EOF):
		return badRequest(fmt.Sprintf("body: empty; want a JSON object %s", fields))
	case errors.Is(err, io.ErrUnexpectedEOF):
		return badRequest(fmt.Sprintf("body: the JSON ends early; want a JSON object %s", fields))
	case errors.Is(err, errTrailing):
		return badRequest(fmt.Sprintf("body: data after the JSON object; want one object %s", fields))
	case errors.As(err, &se):
		return badRequest(fmt.Sprintf("body: not JSON at byte %d (%s); want a JSON object %s", se.Offset, se, fields))
	case errors.As(err, &te):
		return badRequest(fmt.Sprintf("body: want a JSON object %s, got %s", fields, article(te.Value)))
	}
	return badRequest(fmt.Sprintf("body: want a JSON object %s", fields))
}

// bodyShape is the fields a route's body takes, in their order.
type bodyShape []bodyField

// bodyField is one field of a body: its JSON name and where it goes.
type bodyField struct {
	name   string
	quoted bool // an integer carried in a JSON string (",string")
	dst    reflect.Value
}

func bodyFields(v any) bodyShape {
	s := reflect.ValueOf(v).Elem()
	var out bodyShape
	for i := range s.NumField() {
		name, opts, _ := strings.Cut(s.Type().Field(i).Tag.Get("json"), ",")
		out = append(out, bodyField{name: name, quoted: opts == "string", dst: s.Field(i)})
	}
	return out
}

func (s bodyShape) lookup(name string) (bodyField, bool) {
	for _, f := range s {
		if f.name == name {
			return f, true
		}
	}
	return bodyField{}, false
}

// String gives the shape as the API documents it: {"tag": …, "step": …}.
func (s bodyShape) String() string {
	parts := make([]string, len(s))
	for i, f := range s {
		parts[i] = strconv.Quote(f.name) + ": …"
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// want says what the field's value must be.
func (f bodyField) want() string {
	t := f.dst.Type()
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t.Kind() == reflect.String:
		return "a string"
	case f.quoted:
		return fmt.Sprintf(`a whole number in a string ("%s":"5000")`, f.name)
	}
	return "a whole number"
}

// set stores raw into the field; null leaves it as it is, as
// encoding/json does.
func (f bodyField) set(raw json.RawMessage) error {
	if string(raw) == "null" {
		return nil
	}
	dst := f.dst
	if dst.Kind() == reflect.Pointer {
		p := reflect.New(dst.Type().Elem())
		dst.Set(p)
		dst = p.Elem()
	}
	switch dst.Kind() {
	case reflect.String:
		var s string
		if raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
			return errors.New("not a string")
		}
		dst.SetString(s)
		return nil
	case reflect.Int64, reflect.Int:
		text := string(raw)
		if f.quoted {
			if raw[0] != '"' || json.Unmarshal(raw, &text) != nil {
				return errors.New("not a string")
			}
		} else if raw[0] == '"' {
			return errors.New("a string")
		}
		n, err := strconv.ParseInt(text, 10, 64)
		if err != nil {
			return err
		}
		dst.SetInt(n)
		return nil
	}
	panic(fmt.Sprintf("server: body field %s of kind %s", f.name, dst.Kind()))
}

// jsonKind names the JSON type of a value, with its article.
func jsonKind(raw json.RawMessage) string {
	switch raw[0] {
	case '"':
		var s string
		if json.Unmarshal(raw, &s) == nil && len(s) <= 32 {
			return fmt.Sprintf("the string %q", s)
		}
		return "a string"
	case '{':
		return "an object"
	case '[':
		return "an array"
	case 't', 'f':
		return "a boolean"
	}
	return "the number " + string(raw)
}

// article gives a JSON type name from encoding/json ("array", "number
// 5") with its article.
func article(value string) string {
	kind, _, _ := strings.Cut(value, " ")
	switch kind {
	case "array", "object":
		return "an " + kind
	case "null":
		return "null"
	case "bool":
		return "a boolean"
	}
	return "a " + kind
}
