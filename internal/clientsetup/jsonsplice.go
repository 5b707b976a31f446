package clientsetup

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// The JSON clients' files are edited by splicing: a byte scanner finds
// our server table and our entry in the (already validated) document,
// and only those bytes are rewritten. Every other byte of the user's
// file is kept as it was, and the cost is one pass over the file.

// jsonScan walks a document already known to be valid JSON or JSONC
// (comments and trailing commas); it does not validate.
type jsonScan struct{ b []byte }

// space returns the index of the first byte at or after i that is not
// whitespace or inside a comment.
func (s jsonScan) space(i int) int {
	b := s.b
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		case '/':
			if i+1 >= len(b) {
				return i
			}
			switch b[i+1] {
			case '/':
				nl := bytes.IndexByte(b[i:], '\n')
				if nl < 0 {
					return len(b)
				}
				i += nl + 1
			case '*':
				end := bytes.Index(b[i+2:], []byte("*/"))
				if end < 0 {
					return len(b)
				}
				i += 2 + end + 2
			default:
				return i
			}
		default:
			return i
		}
	}
	return i
}

// str returns the index just after the string starting at i (b[i] == '"').
func (s jsonScan) str(i int) int {
	b := s.b
	i++
	for {
		q := bytes.IndexByte(b[i:], '"')
		if q < 0 {
			return len(b)
		}
		j := i + q
		bs := 0
		for k := j - 1; k >= i && b[k] == '\\'; k-- {
			bs++
		}
		if bs%2 == 0 {
			return j + 1
		}
		i = j + 1
	}
}

// value returns the index just after the value starting at i.
func (s jsonScan) value(i int) int {
	b := s.b
	switch b[i] {
	case '"':
		return s.str(i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch c := b[i]; c {
			case '"':
				i = s.str(i)
				continue
			case '/':
				if j := s.space(i); j > i {
					i = j
					continue
				}
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return i
	default: // a number or a literal
		for i < len(b) {
			switch b[i] {
			case ',', '}', ']', ' ', '\t', '\n', '\r', '/':
				return i
			}
			i++
		}
		return i
	}
}

// jsonMember is one member of an object: its key and where its value is.
type jsonMember struct {
	keyStart, valStart, valEnd int
}

// jsonObject is an object of the document: its braces, the members whose
// key was asked for, and what an insertion needs.
type jsonObject struct {
	open, close int // indexes of '{' and '}'
	// found are the members with the key looked for (two or more: the
	// key is duplicated).
	found []jsonMember
	// first is the first member's key index (-1: the object is empty).
	first int
	// lastEnd is the end of the last member's value; trailingComma says
	// a comma follows it (JSONC).
	lastEnd       int
	trailingComma bool
}

// object reads the object starting at i (b[i] == '{'), keeping the
// members whose key is key.
func (s jsonScan) object(i int, key string) jsonObject {
	b := s.b
	o := jsonObject{open: i, first: -1}
	i = s.space(i + 1)
	for i < len(b) && b[i] != '}' {
		ks := i
		ke := s.str(i)
		if o.first < 0 {
			o.first = ks
		}
		vs := s.space(s.space(ke) + 1) // past the ':'
		ve := s.value(vs)
		if keyIs(b[ks:ke], key) {
			o.found = append(o.found, jsonMember{keyStart: ks, valStart: vs, valEnd: ve})
		}
		o.lastEnd, o.trailingComma = ve, false
		i = s.space(ve)
		if i < len(b) && b[i] == ',' {
			o.trailingComma = true
			i = s.space(i + 1)
		}
	}
	o.close = i
	return o
}

// keyIs says whether the quoted key raw decodes to key.
func keyIs(raw []byte, key string) bool {
	inner := raw[1 : len(raw)-1]
	if bytes.IndexByte(inner, '\\') < 0 {
		return string(inner) == key
	}
	var k string
	return json.Unmarshal(raw, &k) == nil && k == key
}

// lineIndent is the whitespace that starts the line holding b[i], and
// whether only whitespace precedes b[i] on it.
func lineIndent(b []byte, i int) (string, bool) {
	ls := bytes.LastIndexByte(b[:i], '\n') + 1
	j := ls
	for j < i && (b[j] == ' ' || b[j] == '\t') {
		j++
	}
	return string(b[ls:j]), j == i
}

// spans says whether the object is written over several lines.
func (s jsonScan) spans(o jsonObject) bool {
	return bytes.IndexByte(s.b[o.open:o.close], '\n') >= 0
}

// memberIndent is the indentation of o's members: its first member's
// when that starts a line, else one unit more than the object's line.
func (s jsonScan) memberIndent(o jsonObject, unit string) string {
	if o.first >= 0 {
		if ind, alone := lineIndent(s.b, o.first); alone {
			return ind
		}
	}
	ind, _ := lineIndent(s.b, o.open)
	return ind + unit
}

// render writes the compact JSON v as a member value: indented under
// prefix when the object is written over several lines, compact when on
// one.
func render(v []byte, multi bool, prefix, unit string) ([]byte, error) {
	var out bytes.Buffer
	var err error
	if multi {
		err = json.Indent(&out, v, prefix, unit)
	} else {
		err = json.Compact(&out, v)
	}
	return out.Bytes(), err
}

// edit replaces b[from:to] with text.
type edit struct {
	from, to int
	text     []byte
}

// splice applies edits (in order, not overlapping) to b in one copy.
func splice(b []byte, edits ...edit) []byte {
	n := len(b)
	for _, e := range edits {
		n += len(e.text) - (e.to - e.from)
	}
	out := make([]byte, 0, n)
	at := 0
	for _, e := range edits {
		out = append(out, b[at:e.from]...)
		out = append(out, e.text...)
		at = e.to
	}
	return append(out, b[at:]...)
}

// insertMember adds "key": v (compact JSON) as the last member of o.
func (s jsonScan) insertMember(o jsonObject, key string, v []byte, unit string) ([]edit, error) {
	b := s.b
	multi := s.spans(o) || (o.first < 0 && bytes.IndexByte(b, '\n') >= 0)
	ind := s.memberIndent(o, unit)
	val, err := render(v, multi, ind, unit)
	if err != nil {
		return nil, err
	}
	k, _ := json.Marshal(key)
	var m []byte
	if multi {
		m = append(append(append([]byte("\n"+ind), k...), ": "...), val...)
	} else {
		m = append(append(append([]byte{}, k...), ':'), val...)
		if o.first >= 0 {
			m = append([]byte(" "), m...)
		}
	}
	// The new member goes after the last token or comment before '}'.
	tail := len(bytes.TrimRight(b[:o.close], " \t\r\n"))
	var edits []edit
	switch {
	case o.first < 0:
	case o.trailingComma:
		m = append(m, ',')
	default:
		edits = append(edits, edit{from: o.lastEnd, to: o.lastEnd, text: []byte(",")})
	}
	if multi && bytes.IndexByte(b[tail:o.close], '\n') < 0 {
		objInd, _ := lineIndent(b, o.open)
		m = append(m, "\n"+objInd...)
	}
	return append(edits, edit{from: tail, to: tail, text: m}), nil
}

// replaceValue puts v (compact JSON) in place of m's value in o.
func (s jsonScan) replaceValue(o jsonObject, m jsonMember, v []byte, unit string) (edit, error) {
	ind, alone := lineIndent(s.b, m.keyStart)
	if !alone {
		ind = s.memberIndent(o, unit)
	}
	val, err := render(v, s.spans(o), ind, unit)
	return edit{from: m.valStart, to: m.valEnd, text: val}, err
}

// indentUnit is the file's indentation step: its top-level members'
// indentation, two spaces when they share a line with the brace.
func (s jsonScan) indentUnit(root jsonObject) string {
	if root.first >= 0 {
		if ind, alone := lineIndent(s.b, root.first); alone && ind != "" {
			return ind
		}
	}
	return "  "
}

// duplicate is the error for a key written twice where we would edit.
func duplicate(file string, b []byte, key, where string, ms []jsonMember) error {
	line, col := lineCol(b, ms[1].keyStart)
	return fmt.Errorf("%s:%d:%d: %q appears %d times in %s, and clients disagree on which one counts; not changed — keep one and re-run",
		file, line, col, key, len(ms), where)
}

// standardJSONC returns a copy of b with JSONC's comments and trailing
// commas blanked out (same length, so positions still match b), for
// validation with the standard decoder. One linear pass: hujson builds
// a tree of the whole file, several times slower on large files.
func standardJSONC(b []byte) []byte {
	out := append([]byte(nil), b...)
	blank := func(from, to int) {
		for k := from; k < to; k++ {
			if out[k] != '\n' {
				out[k] = ' '
			}
		}
	}
	s := jsonScan{b: b}
	comma := -1       // a comma after a value, not yet followed by another
	prev := byte('{') // the last significant byte ('"' ends a string)
	for i := 0; i < len(b); {
		c := b[i]
		switch c {
		case '"':
			i = s.str(i)
			comma, prev = -1, '"'
			continue
		case '/':
			if i+1 < len(b) && (b[i+1] == '/' || b[i+1] == '*') {
				j := len(b)
				if b[i+1] == '/' {
					if nl := bytes.IndexByte(b[i:], '\n'); nl >= 0 {
						j = i + nl
					}
				} else {
					end := bytes.Index(b[i+2:], []byte("*/"))
					if end < 0 {
						return out // unterminated: left for the decoder to refuse
					}
					j = i + 2 + end + 2
				}
				blank(i, j)
				i = j
				continue
			}
		case ' ', '\t', '\n', '\r':
			i++
			continue
		case ',':
			if prev != '{' && prev != '[' && prev != ',' && prev != ':' {
				comma = i
			}
		case '}', ']':
			if comma >= 0 {
				out[comma] = ' '
			}
		}
		if c != ',' {
			comma = -1
		}
		prev = c
		i++
	}
	return out
}
