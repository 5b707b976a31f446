// Package argv is the small runtime the generated tool-argument decoders in
// catalogs call. It checks a decoded JSON value against one rule at a time
// and collects every violation with the field's path, so a rejected call
// names each field and the rule it broke. Its semantics follow JSON Schema
// 2020-12 for the subset the spec uses (a differential test in catalogs
// compares it with santhosh-tekuri/jsonschema).
package argv

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// FieldError is one broken rule.
type FieldError struct {
	Field string // e.g. "limit", "findings[2].severity"; "" for the arguments object
	Rule  string // e.g. "must be at most 100"
}

// Errors is every broken rule of one call.
type Errors struct {
	Tool   string
	Fields []FieldError
}

func (e *Errors) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "invalid arguments for %s: ", e.Tool)
	for i, f := range e.Fields {
		if i > 0 {
			b.WriteString("; ")
		}
		if f.Field == "" {
			b.WriteString("arguments ")
		} else {
			b.WriteString(f.Field)
			b.WriteByte(' ')
		}
		b.WriteString(f.Rule)
	}
	return b.String()
}

// Parse decodes raw JSON arguments, keeping numbers exact.
func Parse(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("arguments are not valid JSON: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("arguments are not valid JSON: trailing data after the value")
	}
	return v, nil
}

// Decoder collects violations while generated code walks a value.
type Decoder struct {
	errs []FieldError
}

// Fail records a violation.
func (d *Decoder) Fail(path, rule string) { d.errs = append(d.errs, FieldError{path, rule}) }

// Err returns the collected violations for tool, or nil.
func (d *Decoder) Err(tool string) error {
	if len(d.errs) == 0 {
		return nil
	}
	return &Errors{Tool: tool, Fields: d.errs}
}

// Join builds a child path.
func Join(parent, name string) string {
	if parent == "" {
		return name
	}
	return parent + "." + name
}

// Index builds an array element path.
func Index(parent string, i int) string { return parent + "[" + strconv.Itoa(i) + "]" }

// Object checks that v is an object with only allowed keys and every
// required key, and returns it (nil when v is not an object).
func (d *Decoder) Object(v any, path string, allowed, required []string) map[string]any {
	m, ok := v.(map[string]any)
	if !ok {
		d.Fail(path, "must be an object, got "+kind(v))
		return nil
	}
	for _, r := range required {
		if _, ok := m[r]; !ok {
			d.Fail(Join(path, r), "is required")
		}
	}
	var unknown []string
	for k := range m {
		if !slices.Contains(allowed, k) {
			unknown = append(unknown, k)
		}
	}
	slices.Sort(unknown)
	for _, k := range unknown {
		d.Fail(Join(path, k), "is not a known argument (allowed: "+strings.Join(allowed, ", ")+")")
	}
	return m
}

// StringRule holds a string's constraints; negative lengths mean unset.
type StringRule struct {
	MinLength, MaxLength int
	Pattern              *regexp.Regexp
	Enum                 []string
	Const                *string
}

// String checks a string value.
func (d *Decoder) String(v any, path string, r StringRule) (string, bool) {
	s, ok := v.(string)
	if !ok {
		d.Fail(path, "must be a string, got "+kind(v))
		return "", false
	}
	ok = true
	if r.MinLength > 0 || r.MaxLength >= 0 {
		n := utf8.RuneCountInString(s)
		if r.MinLength > 0 && n < r.MinLength {
			if r.MinLength == 1 {
				d.Fail(path, "must not be empty")
			} else {
				d.Fail(path, fmt.Sprintf("must be at least %d characters (got %d)", r.MinLength, n))
			}
			ok = false
		}
		if r.MaxLength >= 0 && n > r.MaxLength {
			d.Fail(path, fmt.Sprintf("must be at most %d characters (got %d)", r.MaxLength, n))
			ok = false
		}
	}
	if r.Pattern != nil && !r.Pattern.MatchString(s) {
		d.Fail(path, "must match "+r.Pattern.String())
		ok = false
	}
	if len(r.Enum) > 0 && !slices.Contains(r.Enum, s) {
		d.Fail(path, "must be one of "+strings.Join(r.Enum, ", ")+" (got "+strconv.Quote(clip(s))+")")
		ok = false
	}
	if r.Const != nil && s != *r.Const {
		d.Fail(path, "must be "+strconv.Quote(*r.Const))
		ok = false
	}
	return s, ok
}

// IntRule holds an integer's inclusive bounds.
type IntRule struct{ Min, Max int64 }

// Integer checks an integer value (1.0 and 1e2 are integers, as in JSON
// Schema). The check is exact and linear in the number's length, so a
// hostile literal such as 1e999999999 costs nothing.
func (d *Decoder) Integer(v any, path string, r IntRule) (int64, bool) {
	n, ok := v.(json.Number)
	if !ok {
		d.Fail(path, "must be an integer, got "+kind(v))
		return 0, false
	}
	dec, ok := parseDecimal(string(n))
	if !ok || !dec.integer() {
		d.Fail(path, "must be an integer, got "+clip(string(n)))
		return 0, false
	}
	val, fits := dec.int64()
	if !fits || val < r.Min {
		if !fits && !dec.neg {
			d.Fail(path, fmt.Sprintf("must be at most %d (got %s)", r.Max, clip(string(n))))
			return 0, false
		}
		if !fits || val < r.Min {
			d.Fail(path, fmt.Sprintf("must be at least %d (got %s)", r.Min, clip(string(n))))
			return 0, false
		}
	}
	if val > r.Max {
		d.Fail(path, fmt.Sprintf("must be at most %d (got %s)", r.Max, clip(string(n))))
		return 0, false
	}
	return val, true
}

// NumberRule holds a number's inclusive bounds.
type NumberRule struct{ Min, Max float64 }

// Number checks a number value.
func (d *Decoder) Number(v any, path string, r NumberRule) (float64, bool) {
	n, ok := v.(json.Number)
	if !ok {
		d.Fail(path, "must be a number, got "+kind(v))
		return 0, false
	}
	if _, ok := parseDecimal(string(n)); !ok {
		d.Fail(path, "must be a number")
		return 0, false
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if (err != nil && !errors.Is(err, strconv.ErrRange)) || f < r.Min || f > r.Max {
		d.Fail(path, fmt.Sprintf("must be between %g and %g", r.Min, r.Max))
		return 0, false
	}
	return f, true
}

// Bool checks a boolean value.
func (d *Decoder) Bool(v any, path string) (bool, bool) {
	b, ok := v.(bool)
	if !ok {
		d.Fail(path, "must be a boolean, got "+kind(v))
	}
	return b, ok
}

// Array checks an array value and its length bounds (negative = unset).
func (d *Decoder) Array(v any, path string, minItems, maxItems int) ([]any, bool) {
	a, ok := v.([]any)
	if !ok {
		d.Fail(path, "must be an array, got "+kind(v))
		return nil, false
	}
	if minItems > 0 && len(a) < minItems {
		d.Fail(path, fmt.Sprintf("must have at least %d item(s) (got %d)", minItems, len(a)))
		return nil, false
	}
	if maxItems >= 0 && len(a) > maxItems {
		d.Fail(path, fmt.Sprintf("must have at most %d items (got %d)", maxItems, len(a)))
		return nil, false
	}
	return a, true
}

// Raw re-encodes an unconstrained value.
func Raw(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		return json.RawMessage("null")
	}
	return b
}

func kind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case json.Number, float64:
		return "a number"
	case bool:
		return "a boolean"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

func clip(s string) string {
	if utf8.RuneCountInString(s) > 40 {
		return string([]rune(s)[:40]) + "…"
	}
	return s
}
