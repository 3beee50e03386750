package wire

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
)

// DecodeStrict decodes exactly one JSON value from data into v, the one strict decoder of
// headless (frames and their params, the config file, journey plans, MCP tool arguments, the
// credentials index). First a walk of data against v's type refuses, naming the path of the
// value at fault (a *StrictError):
//
//   - anything but one JSON value, with nothing after it but white space;
//   - an object key that does not name a field of the struct it decodes into exactly
//     (encoding/json alone matches keys case-insensitively), and a key given twice in one
//     object, at any depth (encoding/json alone keeps the last);
//   - a value of another type than its field's: null for a string, number, boolean or struct
//     (allowed for pointers, slices and maps), a fraction or exponent for an integer, an
//     integer out of the field's range;
//   - nesting deeper than MaxDepth.
//
// Then json.Unmarshal decodes in place. Neither step copies data into a buffer of its own
// (json.Decoder would, and nobody zeroes it): frames that carry a secret rely on this. Values
// of json.RawMessage, interface and json.Unmarshaler fields are checked for the rules above
// that need no type (one value, no key twice, depth).
func DecodeStrict(data []byte, v any) error {
	t := reflect.TypeOf(v)
	if t == nil || t.Kind() != reflect.Pointer {
		return fmt.Errorf("DecodeStrict into a %v, not a pointer", t)
	}
	w := strictWalk{data: data}
	w.space()
	if err := w.value(t.Elem(), "", 0); err != nil {
		return err
	}
	w.space()
	if w.i < len(w.data) {
		if k := kindAt(w.data[w.i]); k != "" {
			return &StrictError{Problem: "trailing data after the top-level value (" + k + ")"}
		}
		return &StrictError{Problem: fmt.Sprintf("invalid character %q after the top-level value", w.data[w.i])}
	}
	return json.Unmarshal(data, v)
}

// MaxDepth bounds the nesting of objects and arrays DecodeStrict accepts.
const MaxDepth = 32

// StrictError is DecodeStrict's refusal: the path of the value at fault ("" the top level;
// "presence.provider", "actions[2].kind") and what is wrong there.
type StrictError struct {
	Path, Problem string
}

func (e *StrictError) Error() string {
	if e.Path == "" {
		return e.Problem
	}
	return e.Path + ": " + e.Problem
}

var (
	rawMessageType  = reflect.TypeFor[json.RawMessage]()
	unmarshalerType = reflect.TypeFor[json.Unmarshaler]()
)

type strictWalk struct {
	data []byte
	i    int
}

func (w *strictWalk) space() {
	for w.i < len(w.data) {
		switch w.data[w.i] {
		case ' ', '\t', '\n', '\r':
			w.i++
		default:
			return
		}
	}
}

func (w *strictWalk) fail(path, format string, a ...any) error {
	return &StrictError{Path: path, Problem: fmt.Sprintf(format, a...)}
}

// kindAt names the JSON value that starts with c ("" when none does).
func kindAt(c byte) string {
	switch {
	case c == '{':
		return "an object"
	case c == '[':
		return "an array"
	case c == '"':
		return "a string"
	case c == 't' || c == 'f':
		return "a boolean"
	case c == 'n':
		return "null"
	case c == '-' || c >= '0' && c <= '9':
		return "a number"
	}
	return ""
}

// checked is t as the walk checks it: nil where no type is known (any, RawMessage, a type
// that decodes itself), pointers followed.
func checked(t reflect.Type) reflect.Type {
	for t != nil && t.Kind() == reflect.Pointer {
		if t.Implements(unmarshalerType) {
			return nil
		}
		t = t.Elem()
	}
	if t == nil || t == rawMessageType || t.Kind() == reflect.Interface || reflect.PointerTo(t).Implements(unmarshalerType) {
		return nil
	}
	return t
}

// value walks one value at w.i (white space skipped) that decodes into t (nil: unknown).
func (w *strictWalk) value(t reflect.Type, path string, depth int) error {
	nullable := t == nil || t.Kind() == reflect.Pointer
	t = checked(t)
	if t != nil {
		switch t.Kind() {
		case reflect.Slice, reflect.Map:
			nullable = true
		}
	}
	if w.i >= len(w.data) {
		return w.fail(path, "unexpected end of input")
	}
	c := w.data[w.i]
	got := kindAt(c)
	if got == "" {
		return w.fail(path, "invalid character %q looking for a value", c)
	}
	want := func(what string) error { return w.fail(path, "want %s, got %s", what, got) }
	if c == 'n' && nullable {
		return w.literal(path, "null")
	}
	if t != nil {
		switch t.Kind() {
		case reflect.Struct, reflect.Map:
			if c != '{' {
				return want("an object")
			}
		case reflect.Slice, reflect.Array:
			if t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8 {
				if c != '"' { // []byte: base64 in a string
					return want("a string")
				}
				break
			}
			if c != '[' {
				return want("an array")
			}
		case reflect.String:
			if c != '"' {
				return want("a string")
			}
		case reflect.Bool:
			if c != 't' && c != 'f' {
				return want("true or false")
			}
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			if got != "a number" {
				return want("an integer")
			}
			return w.integer(t, path)
		case reflect.Float32, reflect.Float64:
			if got != "a number" {
				return want("a number")
			}
		}
	}
	switch {
	case c == '{':
		return w.object(t, path, depth+1)
	case c == '[':
		return w.array(t, path, depth+1)
	case c == '"':
		_, err := w.str(path)
		return err
	case c == 't':
		return w.literal(path, "true")
	case c == 'f':
		return w.literal(path, "false")
	case c == 'n':
		return w.literal(path, "null")
	}
	if !w.number() {
		return w.fail(path, "malformed number")
	}
	return nil
}

func (w *strictWalk) literal(path, lit string) error {
	if !strings.HasPrefix(string(w.data[w.i:min(len(w.data), w.i+len(lit))]), lit) {
		if len(w.data)-w.i < len(lit) && strings.HasPrefix(lit, string(w.data[w.i:])) {
			return w.fail(path, "unexpected end of input")
		}
		return w.fail(path, "invalid character %q in literal %s", w.data[w.i], lit)
	}
	w.i += len(lit)
	return nil
}

// number consumes -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? and reports whether it was
// one.
func (w *strictWalk) number() bool {
	d, i := w.data, w.i
	digits := func() int {
		n := 0
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
			n++
		}
		return n
	}
	if i < len(d) && d[i] == '-' {
		i++
	}
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case digits() == 0:
		w.i = i
		return false
	}
	if i < len(d) && d[i] == '.' {
		i++
		if digits() == 0 {
			w.i = i
			return false
		}
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		if digits() == 0 {
			w.i = i
			return false
		}
	}
	w.i = i
	return true
}

// integer consumes a number that must be an integer in t's range.
func (w *strictWalk) integer(t reflect.Type, path string) error {
	start := w.i
	if !w.number() {
		return w.fail(path, "malformed number")
	}
	text := string(w.data[start:w.i])
	if strings.ContainsAny(text, ".eE") {
		return w.fail(path, "want an integer, got %s", text)
	}
	var err error
	switch t.Kind() {
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		_, err = strconv.ParseUint(text, 10, t.Bits())
	default:
		_, err = strconv.ParseInt(text, 10, t.Bits())
	}
	if err != nil {
		return w.fail(path, "%s is out of range", text)
	}
	return nil
}

// str consumes a string and returns its raw bytes, quotes included.
func (w *strictWalk) str(path string) ([]byte, error) {
	start := w.i
	w.i++ // the opening quote
	for w.i < len(w.data) {
		c := w.data[w.i]
		switch {
		case c == '"':
			w.i++
			return w.data[start:w.i], nil
		case c == '\\':
			if w.i+1 >= len(w.data) {
				return nil, w.fail(path, "unexpected end of input")
			}
			switch w.data[w.i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				w.i += 2
			case 'u':
				if w.i+6 > len(w.data) {
					return nil, w.fail(path, "unexpected end of input")
				}
				for _, h := range w.data[w.i+2 : w.i+6] {
					if !strings.ContainsRune("0123456789abcdefABCDEF", rune(h)) {
						return nil, w.fail(path, "invalid character %q in a \\u escape", h)
					}
				}
				w.i += 6
			default:
				return nil, w.fail(path, "invalid escape \\%c in a string", w.data[w.i+1])
			}
		case c < 0x20:
			return nil, w.fail(path, "invalid control character %q in a string", c)
		default:
			w.i++
		}
	}
	return nil, w.fail(path, "unexpected end of input")
}

// object walks an object at w.i whose keys name fields of struct t (or any key of a map, or
// anything for nil), each key once.
func (w *strictWalk) object(t reflect.Type, path string, depth int) error {
	if depth > MaxDepth {
		return w.fail(path, "nested more than %d deep", MaxDepth)
	}
	var fields map[string]reflect.Type
	if t != nil && t.Kind() == reflect.Struct {
		fields = jsonFields(t)
	}
	w.i++ // {
	w.space()
	if w.i < len(w.data) && w.data[w.i] == '}' {
		w.i++
		return nil
	}
	seen := map[string]bool{}
	for {
		w.space()
		if w.i >= len(w.data) {
			return w.fail(path, "unexpected end of input")
		}
		if w.data[w.i] != '"' {
			return w.fail(path, "invalid character %q looking for a key", w.data[w.i])
		}
		raw, err := w.str(path)
		if err != nil {
			return err
		}
		key := string(raw[1 : len(raw)-1])
		if strings.IndexByte(key, '\\') >= 0 {
			if err := json.Unmarshal(raw, &key); err != nil {
				return w.fail(path, "malformed key")
			}
		}
		at := key
		if path != "" {
			at = path + "." + key
		}
		if seen[key] {
			return w.fail(at, "duplicate key")
		}
		seen[key] = true
		var ft reflect.Type
		switch {
		case fields != nil:
			var ok bool
			if ft, ok = fields[key]; !ok {
				return w.fail(at, "unknown key")
			}
		case t != nil && t.Kind() == reflect.Map:
			ft = t.Elem()
		}
		w.space()
		if w.i >= len(w.data) {
			return w.fail(at, "unexpected end of input")
		}
		if w.data[w.i] != ':' {
			return w.fail(at, "syntax error: want ':' after the key, got %q", w.data[w.i])
		}
		w.i++
		w.space()
		if err := w.value(ft, at, depth); err != nil {
			return err
		}
		if done, err := w.after(path, '}', "an object's value"); done || err != nil {
			return err
		}
	}
}

// after reads what follows a member or an element: ',' (more to come) or close (done).
func (w *strictWalk) after(path string, close byte, what string) (done bool, err error) {
	w.space()
	if w.i >= len(w.data) {
		return false, w.fail(path, "unexpected end of input")
	}
	switch c := w.data[w.i]; c {
	case ',', close:
		w.i++
		return c == close, nil
	}
	return false, w.fail(path, "invalid character %q after %s", w.data[w.i], what)
}

// array walks an array at w.i whose elements decode into t's element type.
func (w *strictWalk) array(t reflect.Type, path string, depth int) error {
	if depth > MaxDepth {
		return w.fail(path, "nested more than %d deep", MaxDepth)
	}
	var et reflect.Type
	if t != nil {
		et = t.Elem()
	}
	w.i++ // [
	w.space()
	if w.i < len(w.data) && w.data[w.i] == ']' {
		w.i++
		return nil
	}
	for n := 0; ; n++ {
		w.space()
		if err := w.value(et, path+"["+strconv.Itoa(n)+"]", depth); err != nil {
			return err
		}
		if done, err := w.after(path, ']', "an array's element"); done || err != nil {
			return err
		}
	}
}
