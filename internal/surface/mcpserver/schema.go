package mcpserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/headless-dev/headless/internal/clip"
	"github.com/headless-dev/headless/internal/wire"
)

// Schemas as published and as enforced.
//
// jsonschema.For infers a Go slice, map or pointer as "null or X"; no tool means null anywhere
// (an absent parameter is how one says "none"), so every published type is the one type. The
// input schema a tool publishes is exactly what [checkArgs] enforces before anything is
// decoded: an unknown parameter, a missing required one, or a value of another JSON type is
// INVALID_ARGUMENT naming the parameter by its path (plan.actions[2].target) and what it
// takes. Output schemas drop what only constrains (additionalProperties); every result's
// fields, types and requiredness stay.

// inputSchema is In's published input schema.
func inputSchema[In any]() *jsonschema.Schema {
	s, err := jsonschema.For[In](nil)
	if err != nil {
		panic(fmt.Sprintf("mcpserver: input schema: %v", err))
	}
	tidy(s, false)
	return s
}

// outputSchema is Out's published output schema.
func outputSchema[Out any]() *jsonschema.Schema {
	s, err := jsonschema.For[Out](nil)
	if err != nil {
		panic(fmt.Sprintf("mcpserver: output schema: %v", err))
	}
	tidy(s, true)
	slim(s, 0)
	return s
}

// slim keeps of an output schema its shape: the result's fields, which are required, and
// which are objects or arrays; below that nothing (any value). The scalars' types and the
// nested objects' fields are the README's (docs of each result): every page tool repeats the
// page result's, and tools/list stays within its bound (TestToolsListSize) as tools come.
func slim(s *jsonschema.Schema, depth int) {
	if s == nil {
		return
	}
	if s.Type == "string" || s.Type == "integer" || s.Type == "boolean" || s.Type == "number" {
		s.Type = ""
	}
	if depth > 0 {
		*s = jsonschema.Schema{Type: s.Type}
		return
	}
	for _, p := range s.Properties {
		slim(p, depth+1)
	}
	slim(s.Items, depth+1)
}

// tidy makes every "null or X" type X, and in an output schema drops additionalProperties.
func tidy(s *jsonschema.Schema, output bool) {
	if s == nil {
		return
	}
	if len(s.Types) > 0 {
		ts := slices.DeleteFunc(slices.Clone(s.Types), func(t string) bool { return t == "null" })
		if len(ts) == 1 {
			s.Type, s.Types = ts[0], nil
		} else {
			s.Types = ts
		}
	}
	if output {
		s.AdditionalProperties, s.Description = nil, ""
	}
	for _, p := range s.Properties {
		tidy(p, output)
	}
	tidy(s.Items, output)
	for _, l := range [][]*jsonschema.Schema{s.AnyOf, s.OneOf, s.AllOf} {
		for _, x := range l {
			tidy(x, output)
		}
	}
	if !output {
		tidy(s.AdditionalProperties, output)
	}
}

// checkArgs checks a call's arguments against the input schema the tool publishes, before
// anything is decoded. Absent arguments are {}.
func checkArgs(s *jsonschema.Schema, raw json.RawMessage) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		raw = json.RawMessage("{}")
	}
	var v any
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if err := d.Decode(&v); err != nil || d.More() {
		return wire.Errorf(wire.CodeInvalidArgument, "the arguments are not one JSON object")
	}
	if v == nil {
		v = map[string]any{}
	}
	return check(s, v, "")
}

// check checks v against s at path (the parameter's name, "" for the arguments themselves).
func check(s *jsonschema.Schema, v any, path string) error {
	if s == nil {
		return nil
	}
	what := func() string {
		if path == "" {
			return "the tool"
		}
		return "parameter " + path
	}
	want := s.Types
	if s.Type != "" {
		want = []string{s.Type}
	}
	if len(want) > 0 && !slices.Contains(want, jsonType(v)) && !(slices.Contains(want, "number") && jsonType(v) == "integer") {
		return wire.Errorf(wire.CodeInvalidArgument, "%s must be %s (%s), not %s", what(), article(strings.Join(want, " or ")), clip.Text(describe(s), 160), article(jsonType(v)))
	}
	if len(s.Enum) > 0 && !slices.ContainsFunc(s.Enum, func(e any) bool { return fmt.Sprint(e) == fmt.Sprint(v) }) {
		return wire.Errorf(wire.CodeInvalidArgument, "%s must be one of %v", what(), s.Enum)
	}
	switch x := v.(type) {
	case map[string]any:
		for _, r := range s.Required {
			if _, ok := x[r]; !ok {
				p := join(path, r)
				return wire.Errorf(wire.CodeInvalidArgument, "parameter %s is required: %s", p, clip.Text(describe(s.Properties[r]), 160))
			}
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			ps, ok := s.Properties[k]
			if !ok {
				if s.AdditionalProperties != nil && s.AdditionalProperties.Not != nil {
					return wire.Errorf(wire.CodeInvalidArgument, "%s has no %s %q; it takes %s", what(), field(path), clip.Text(k, 64), names(s))
				}
				ps = s.AdditionalProperties
			}
			if err := check(ps, x[k], join(path, k)); err != nil {
				return err
			}
		}
	case []any:
		if s.MaxItems != nil && len(x) > *s.MaxItems {
			return wire.Errorf(wire.CodeInvalidArgument, "%s has %d items, at most %d", what(), len(x), *s.MaxItems)
		}
		for i, e := range x {
			if err := check(s.Items, e, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	}
	return nil
}

// field names what an object of path holds: the tool's parameters, or a parameter's fields.
func field(path string) string {
	if path == "" {
		return "parameter"
	}
	return "field"
}

func join(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}

// names lists an object schema's parameters, sorted.
func names(s *jsonschema.Schema) string {
	if len(s.Properties) == 0 {
		return "none"
	}
	ks := make([]string, 0, len(s.Properties))
	for k := range s.Properties {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return strings.Join(ks, ", ")
}

func describe(s *jsonschema.Schema) string {
	if s == nil || s.Description == "" {
		return "see the tool's input schema"
	}
	return s.Description
}

// jsonType is the JSON Schema type of a decoded value (numbers decoded as json.Number).
func jsonType(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case json.Number:
		if _, err := x.Int64(); err == nil {
			return "integer"
		}
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return "unknown"
}

func article(t string) string {
	switch {
	case t == "null":
		return "null"
	case strings.HasPrefix(t, "a") || strings.HasPrefix(t, "i") || strings.HasPrefix(t, "o"):
		return "an " + t
	}
	return "a " + t
}
