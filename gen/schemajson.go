package gen

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/agent-interop/runtime/gen/spec"
)

// schemaJSON writes a resolved schema as compact JSON with a fixed key order,
// as tools/list serves it. The top-level object is closed with
// additionalProperties:false; nested objects are served open (their
// properties tell the model what they take, and the decoder refuses any
// other, naming it), which spares every nested object five tokens.
func schemaJSON(s *spec.Schema) []byte {
	var b bytes.Buffer
	writeSchema(&b, s, true, false)
	return b.Bytes()
}

// exactSchemaJSON is the schema the decoder enforces: every object closed,
// and every bound, including those tools/list leaves to a description (a
// page size's).
func exactSchemaJSON(s *spec.Schema) []byte {
	var b bytes.Buffer
	writeSchema(&b, s, false, false)
	return b.Bytes()
}

func writeSchema(b *bytes.Buffer, s *spec.Schema, served, nested bool) {
	b.WriteByte('{')
	first := true
	key := func(k string) {
		if !first {
			b.WriteByte(',')
		}
		first = false
		b.WriteString(strconv.Quote(k))
		b.WriteByte(':')
	}
	if len(s.OneOf) > 0 {
		key("oneOf")
		b.WriteByte('[')
		for i, o := range s.OneOf {
			if i > 0 {
				b.WriteByte(',')
			}
			writeSchema(b, o, served, true)
		}
		b.WriteByte(']')
	}
	switch len(s.Type) {
	case 0:
	case 1:
		key("type")
		writeJSON(b, s.Type[0])
	default:
		key("type")
		writeJSON(b, []string(s.Type))
	}
	if s.Description != "" {
		key("description")
		writeJSON(b, s.Description)
	}
	if len(s.Enum) > 0 {
		key("enum")
		writeJSON(b, s.Enum)
	}
	if s.Const != nil {
		key("const")
		writeJSON(b, *s.Const)
	}
	if s.MinLength != nil {
		key("minLength")
		b.WriteString(strconv.FormatInt(*s.MinLength, 10))
	}
	if s.MaxLength != nil {
		key("maxLength")
		b.WriteString(strconv.FormatInt(*s.MaxLength, 10))
	}
	if s.Pattern != "" {
		key("pattern")
		writeJSON(b, s.Pattern)
	}
	if s.Format != "" {
		key("format")
		writeJSON(b, s.Format)
	}
	// A page size's range is the same on every paged tool; tools/list
	// states it in the shared fragment's description (spec/defs.yaml)
	// instead of in minimum and maximum on every tool.
	pageSize := served && s.Ref == limitRef
	if s.Minimum != nil && !pageSize {
		key("minimum")
		b.WriteString(strconv.FormatFloat(*s.Minimum, 'f', -1, 64))
	}
	if s.Maximum != nil && !pageSize {
		key("maximum")
		b.WriteString(strconv.FormatFloat(*s.Maximum, 'f', -1, 64))
	}
	if s.Items != nil {
		key("items")
		writeSchema(b, s.Items, served, true)
	}
	if s.MinItems != nil {
		key("minItems")
		b.WriteString(strconv.FormatInt(*s.MinItems, 10))
	}
	if s.MaxItems != nil {
		key("maxItems")
		b.WriteString(strconv.FormatInt(*s.MaxItems, 10))
	}
	if baseType(s) == "object" && len(s.PropertyOrder) > 0 {
		key("properties")
		b.WriteByte('{')
		for i, k := range s.PropertyOrder {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.Quote(k))
			b.WriteByte(':')
			writeSchema(b, s.Properties[k], served, true)
		}
		b.WriteByte('}')
		if len(s.Required) > 0 {
			key("required")
			writeJSON(b, s.Required)
		}
	}
	if baseType(s) == "object" && !(served && nested) {
		key("additionalProperties")
		b.WriteString("false")
	}
	// A page size's default is server policy: the decoder applies it and
	// the docs state it, but it is not served (it would cost every paged
	// tool tokens the model does not need).
	if s.Default != nil && s.Ref != limitRef {
		key("default")
		writeJSON(b, s.Default)
	}
	b.WriteByte('}')
}

// writeJSON encodes v without HTML escaping and without a trailing newline.
func writeJSON(b *bytes.Buffer, v any) {
	var tmp bytes.Buffer
	enc := json.NewEncoder(&tmp)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err) // only strings, slices of strings and scalars reach here
	}
	b.Write(bytes.TrimSuffix(tmp.Bytes(), []byte("\n")))
}
