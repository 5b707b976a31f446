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
	o := &jsonObject{b: b}
	if len(s.OneOf) > 0 {
		o.key("oneOf")
		b.WriteByte('[')
		for i, one := range s.OneOf {
			if i > 0 {
				b.WriteByte(',')
			}
			writeSchema(b, one, served, true)
		}
		b.WriteByte(']')
	}
	switch len(s.Type) {
	case 0:
	case 1:
		o.key("type")
		writeJSON(b, s.Type[0])
	default:
		o.key("type")
		writeJSON(b, []string(s.Type))
	}
	if s.Description != "" {
		o.key("description")
		writeJSON(b, s.Description)
	}
	if len(s.Enum) > 0 {
		o.key("enum")
		writeJSON(b, s.Enum)
	}
	if s.Const != nil {
		o.key("const")
		writeJSON(b, *s.Const)
	}
	writeStringKeywords(o, s)
	writeNumberBounds(o, s, served)
	writeArrayKeywords(o, s, served)
	writeObjectKeywords(o, s, served, nested)
	// A page size's default is server policy: the decoder applies it and
	// the docs state it, but it is not served (it would cost every paged
	// tool tokens the model does not need).
	if s.Default != nil && s.Ref != limitRef {
		o.key("default")
		writeJSON(b, s.Default)
	}
	b.WriteByte('}')
}

// jsonObject writes the keys of one JSON object, a comma before all but
// the first.
type jsonObject struct {
	b       *bytes.Buffer
	started bool
}

// key writes k and its colon; the value follows.
func (o *jsonObject) key(k string) {
	if o.started {
		o.b.WriteByte(',')
	}
	o.started = true
	o.b.WriteString(strconv.Quote(k))
	o.b.WriteByte(':')
}

// writeStringKeywords writes minLength, maxLength, pattern and format.
func writeStringKeywords(o *jsonObject, s *spec.Schema) {
	if s.MinLength != nil {
		o.key("minLength")
		o.b.WriteString(strconv.FormatInt(*s.MinLength, 10))
	}
	if s.MaxLength != nil {
		o.key("maxLength")
		o.b.WriteString(strconv.FormatInt(*s.MaxLength, 10))
	}
	if s.Pattern != "" {
		o.key("pattern")
		writeJSON(o.b, s.Pattern)
	}
	if s.Format != "" {
		o.key("format")
		writeJSON(o.b, s.Format)
	}
}

// writeNumberBounds writes minimum and maximum, except a served page
// size's: its range is the same on every paged tool, and tools/list
// states it in the shared fragment's description (spec/defs.yaml)
// instead of in minimum and maximum on every tool.
func writeNumberBounds(o *jsonObject, s *spec.Schema, served bool) {
	if served && s.Ref == limitRef {
		return
	}
	if s.Minimum != nil {
		o.key("minimum")
		o.b.WriteString(strconv.FormatFloat(*s.Minimum, 'f', -1, 64))
	}
	if s.Maximum != nil {
		o.key("maximum")
		o.b.WriteString(strconv.FormatFloat(*s.Maximum, 'f', -1, 64))
	}
}

// writeArrayKeywords writes items, minItems and maxItems.
func writeArrayKeywords(o *jsonObject, s *spec.Schema, served bool) {
	if s.Items != nil {
		o.key("items")
		writeSchema(o.b, s.Items, served, true)
	}
	if s.MinItems != nil {
		o.key("minItems")
		o.b.WriteString(strconv.FormatInt(*s.MinItems, 10))
	}
	if s.MaxItems != nil {
		o.key("maxItems")
		o.b.WriteString(strconv.FormatInt(*s.MaxItems, 10))
	}
}

// writeObjectKeywords writes an object's properties in their order, its
// required list and, unless it is a served nested object,
// additionalProperties:false.
func writeObjectKeywords(o *jsonObject, s *spec.Schema, served, nested bool) {
	if baseType(s) != "object" {
		return
	}
	if len(s.PropertyOrder) > 0 {
		o.key("properties")
		o.b.WriteByte('{')
		for i, k := range s.PropertyOrder {
			if i > 0 {
				o.b.WriteByte(',')
			}
			o.b.WriteString(strconv.Quote(k))
			o.b.WriteByte(':')
			writeSchema(o.b, s.Properties[k], served, true)
		}
		o.b.WriteByte('}')
		if len(s.Required) > 0 {
			o.key("required")
			writeJSON(o.b, s.Required)
		}
	}
	if !(served && nested) {
		o.key("additionalProperties")
		o.b.WriteString("false")
	}
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
