package importstate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
)

// InputError is a problem with an input file, at a position: the 1-based
// line and column (in characters) and the path of the value ("works[2].status").
type InputError struct {
	File   string
	Line   int
	Column int
	Path   string
	Msg    string
}

func (e *InputError) Error() string {
	where := fmt.Sprintf("%s:%d:%d", e.File, e.Line, e.Column)
	if e.Path == "" {
		return where + ": " + e.Msg
	}
	return where + ": " + e.Path + ": " + e.Msg
}

// source is one input file's bytes with what positions its errors.
type source struct {
	path string // as given, for messages
	data []byte
	// starts maps the paths of the document's values (to indexDepth
	// levels) to their offsets, built on first use.
	starts map[string]int
}

// indexDepth bounds the paths starts keeps: records, their fields and the
// fields' parts, not the insides of evidence data.
const indexDepth = 8

// newSource keeps a file's bytes; a UTF-8 byte-order mark is dropped (an
// editor does not count it as a column).
func newSource(path string, raw []byte) *source {
	return &source{path: path, data: bytes.TrimPrefix(raw, []byte("\xef\xbb\xbf"))}
}

// name is how messages name the file.
func (s *source) name() string { return s.path }

// at builds an error at byte offset off of s.data.
func (s *source) at(off int, path, format string, args ...any) *InputError {
	line, col := position(s.data, off)
	return &InputError{File: s.name(), Line: line, Column: col, Path: path, Msg: fmt.Sprintf(format, args...)}
}

// field builds an error for the value at path (or, when it is missing, the
// nearest enclosing value).
func (s *source) field(path, format string, args ...any) *InputError {
	return s.at(s.start(path), path, format, args...)
}

// start is where the value at path starts, or where its nearest enclosing
// value that exists does.
func (s *source) start(path string) int {
	if s.starts == nil {
		s.starts = map[string]int{}
		walk(s.data, func(sp span) bool {
			if strings.Count(sp.path, ".")+strings.Count(sp.path, "[") < indexDepth {
				s.starts[sp.path] = sp.start
			}
			return true
		})
	}
	for p := path; ; p = parentPath(p) {
		if off, ok := s.starts[p]; ok {
			return off
		}
		if p == "" {
			return 0
		}
	}
}

// parentPath drops the last member or index of a path.
func parentPath(p string) string {
	i := strings.LastIndexAny(p, ".[")
	if i < 0 {
		return ""
	}
	return p[:i]
}

// decode unmarshals the document into v, turning encoding/json's errors
// into positioned ones: a syntax error at the offending character, a wrong
// type at the value, with its full path.
func (s *source) decode(v any) error {
	err := json.Unmarshal(s.data, v)
	if err == nil {
		return nil
	}
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		off := int(syn.Offset) - 1
		if strings.Contains(syn.Error(), "unexpected end") {
			off = int(syn.Offset)
		}
		return s.at(off, "", "not valid JSON: %s", strings.TrimPrefix(syn.Error(), "json: "))
	case errors.As(err, &typ):
		// The offset is just past a wrong scalar, or just past the opening
		// bracket of a wrong object or array: either way its last byte is
		// inside the value.
		sp := pathAt(s.data, int(typ.Offset)-1)
		path := sp.path
		if path == "" && typ.Field != "" {
			path = typ.Field
		}
		return s.at(sp.start, path, "expected %s, found %s", jsonKind(typ.Type), typ.Value)
	}
	return fmt.Errorf("%s: %w", s.name(), err)
}

// jsonKind names what a Go type accepts in JSON.
func jsonKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Struct, reflect.Map:
		return "an object"
	}
	return t.String()
}
