package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"
)

// decodeBody reads a request's JSON body into v, a pointer to a struct
// whose json tags name the body's fields (strings, integers, ",string"
// integers, pointers to them). encoding/json decodes it; first the body
// is held to what encoding/json lets pass, because an admin body names a
// tag and a counter and a guess must not reach the store: one object,
// each field once (encoding/json takes the last of a repeated key), named
// exactly (it matches a name in any case), only the fields the route
// takes, each of its field's type, and only whole characters in its
// strings (it turns a lone surrogate escape into U+FFFD, which would name
// a tag). What is wrong is said in the API's words, never Go's. The body
// is capped where every request's is (Service.MaxBody): past it, 413.
func decodeBody(r *http.Request, v any) error {
	shape := bodyFields(v)
	data, err := io.ReadAll(r.Body)
	if err == nil {
		err = checkText(data)
	}
	var fields []member
	if err == nil {
		fields, err = members(data)
	}
	if err != nil {
		return bodyError(err, shape)
	}
	seen := make(map[string]bool, len(fields))
	for _, m := range fields {
		if err := shape.check(m, seen); err != nil {
			return err
		}
	}
	if err := json.Unmarshal(data, v); err != nil {
		// Not reached: every field was checked above against its type.
		return badRequest(fmt.Sprintf("body: want a JSON object %s", shape))
	}
	return nil
}

var errTrailing = errors.New("data after the JSON object")

// member is one field of a body's object as written: its name, decoded,
// and its value's JSON text.
type member struct {
	name  string
	value json.RawMessage
}

// members reads data as one JSON object and returns its fields in the
// order written, repeated ones included.
func members(data []byte) ([]member, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if tok != json.Delim('{') {
		return nil, &json.UnmarshalTypeError{Value: tokenKind(tok)}
	}
	var out []member
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, early(err)
		}
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return nil, early(err)
		}
		out = append(out, member{name: tok.(string), value: value})
	}
	if _, err := dec.Token(); err != nil {
		return nil, early(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errTrailing
	}
	return out, nil
}

// early turns the end of the body inside the object into the error of a
// body that ends early.
func early(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// tokenKind names the JSON type of a token that is not an object's start
// as encoding/json names types ("array", "number"), for article.
func tokenKind(tok json.Token) string {
	switch tok.(type) {
	case json.Delim:
		return "array"
	case string:
		return "string"
	case bool:
		return "bool"
	case nil:
		return "null"
	}
	return "number"
}

// surrogateError is a \u escape in a body's string that is half of a
// UTF-16 surrogate pair without its other half: no character.
type surrogateError struct {
	offset int
	escape string
}

func (e *surrogateError) Error() string {
	return fmt.Sprintf("%s at byte %d is half of a UTF-16 surrogate pair", e.escape, e.offset)
}

// invalidUTF8Error is a body that is not UTF-8 from byte offset on.
type invalidUTF8Error struct{ offset int }

func (e *invalidUTF8Error) Error() string { return fmt.Sprintf("not UTF-8 at byte %d", e.offset) }

// checkText refuses what encoding/json would silently turn into U+FFFD:
// bytes that are not UTF-8, and a \u escape of half a surrogate pair
// (\ud800 alone, or \udc00 without a high half before it). It reads the
// escapes of every string, keys included, wherever they are; a body that
// is not JSON at all is left to the decoder to describe.
func checkText(data []byte) error {
	if !utf8.Valid(data) {
		i := 0
		for i < len(data) {
			r, n := utf8.DecodeRune(data[i:])
			if r == utf8.RuneError && n <= 1 {
				break
			}
			i += n
		}
		return &invalidUTF8Error{offset: i}
	}
	inString := false
	for i := 0; i < len(data); i++ {
		switch c := data[i]; {
		case c == '"':
			inString = !inString
		case c != '\\' || !inString || i+1 >= len(data):
		case data[i+1] != 'u':
			i++ // an escape such as \" or \\, never the end of a string
		default:
			hi, ok := escapeAt(data, i)
			i += 5
			switch {
			case !ok || hi < 0xD800 || hi > 0xDFFF:
			case hi <= 0xDBFF:
				if lo, ok := escapeAt(data, i+1); ok && lo >= 0xDC00 && lo <= 0xDFFF {
					i += 6
					continue
				}
				return &surrogateError{offset: i - 5, escape: string(data[i-5 : i+1])}
			default:
				return &surrogateError{offset: i - 5, escape: string(data[i-5 : i+1])}
			}
		}
	}
	return nil
}

// escapeAt reads the code unit of a \uXXXX escape at data[i].
func escapeAt(data []byte, i int) (uint64, bool) {
	if i+6 > len(data) || data[i] != '\\' || data[i+1] != 'u' {
		return 0, false
	}
	u, err := strconv.ParseUint(string(data[i+2:i+6]), 16, 16)
	return u, err == nil
}

// bodyError says why a body is not one JSON object.
func bodyError(err error, fields bodyShape) error {
	var mb *http.MaxBytesError
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	var sur *surrogateError
	var u8 *invalidUTF8Error
	switch {
	case errors.As(err, &mb):
		return fmt.Errorf("%w: over %d bytes", ErrBodyTooLarge, mb.Limit)
	case errors.As(err, &sur):
		return badRequest(fmt.Sprintf("body: %s; a string must hold whole characters (escape a character outside the BMP as a pair, \\ud83d\\ude00)", sur))
	case errors.As(err, &u8):
		return badRequest(fmt.Sprintf("body: %s; want a JSON object %s in UTF-8", u8, fields))
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

// bodyField is one field of a body: its JSON name and the JSON it takes.
type bodyField struct {
	name   string
	text   bool // a string
	quoted bool // an integer carried in a JSON string (",string")
}

// bodyFields reads the shape of v's struct from its json tags.
func bodyFields(v any) bodyShape {
	t := reflect.TypeOf(v).Elem()
	out := make(bodyShape, 0, t.NumField())
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		kind := f.Type.Kind()
		if kind == reflect.Pointer {
			kind = f.Type.Elem().Kind()
		}
		out = append(out, bodyField{name: name, text: kind == reflect.String, quoted: opts == "string"})
	}
	return out
}

// check refuses a field of the body the route does not take, or takes
// once and seen holds already, or whose value is not of its type.
func (s bodyShape) check(m member, seen map[string]bool) error {
	f, ok := s.lookup(m.name)
	switch {
	case !ok && s.caseless(m.name) != "":
		return badRequest(fmt.Sprintf("body: unknown field %q; field names are case-sensitive: want %q", m.name, s.caseless(m.name)))
	case !ok:
		return badRequest(fmt.Sprintf("body: unknown field %q; want %s", m.name, s))
	case seen[m.name]:
		return badRequest(fmt.Sprintf("body: field %q given twice; give each field once", m.name))
	}
	seen[m.name] = true
	if !f.accepts(m.value) {
		return badRequest(fmt.Sprintf("body: %q must be %s, got %s", m.name, f.want(), jsonKind(m.value)))
	}
	return nil
}

func (s bodyShape) lookup(name string) (bodyField, bool) {
	for _, f := range s {
		if f.name == name {
			return f, true
		}
	}
	return bodyField{}, false
}

// caseless returns the field whose name differs from name only in case,
// or "".
func (s bodyShape) caseless(name string) string {
	for _, f := range s {
		if strings.EqualFold(f.name, name) {
			return f.name
		}
	}
	return ""
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
	switch {
	case f.text:
		return "a string"
	case f.quoted:
		return fmt.Sprintf(`a whole number in a string ("%s":"5000")`, f.name)
	}
	return "a whole number"
}

// accepts says whether raw is a value of the field's type: null, which
// leaves the field as it is, or a string, or a whole number of 64 bits,
// bare or in a string as the field says.
func (f bodyField) accepts(raw json.RawMessage) bool {
	if string(raw) == "null" {
		return true
	}
	quotedValue := raw[0] == '"'
	switch {
	case f.text:
		return quotedValue
	case f.quoted != quotedValue:
		return false
	}
	text := string(raw)
	if f.quoted && json.Unmarshal(raw, &text) != nil {
		return false
	}
	_, err := strconv.ParseInt(text, 10, 64)
	return err == nil
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
