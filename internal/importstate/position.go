package importstate

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// This file turns byte offsets (what encoding/json reports) into line and
// column numbers, and finds which value of a document an offset lies in and
// where the value at a path starts. Both walk the document only when an
// error is reported, so a good file costs nothing here.

// position is a 1-based line and column (in characters) of a byte offset.
func position(data []byte, off int) (line, col int) {
	off = min(max(off, 0), len(data))
	line, start := 1, 0
	for i := 0; i < off; i++ {
		if data[i] == '\n' {
			line, start = line+1, i+1
		}
	}
	return line, utf8.RuneCount(data[start:off]) + 1
}

// span is one value of a document: its path ("works[2].dependsOn[0]") and
// its bytes [start, end).
type span struct {
	path       string
	start, end int
}

// walk lists every value of a syntactically valid JSON document, each
// after the values inside it (so in one pass, however deep the document).
// It stops early when visit returns false.
func walk(data []byte, visit func(s span) bool) {
	w := walker{data: data, visit: visit}
	w.skipSpace()
	w.value("")
}

type walker struct {
	data  []byte
	pos   int
	visit func(span) bool
	done  bool
	// onKey, when set, is called for a key its object already has (at
	// the key's offset); returning false stops the walk.
	onKey func(path, key string, at int) bool
}

func (w *walker) skipSpace() {
	for w.pos < len(w.data) {
		switch w.data[w.pos] {
		case ' ', '\t', '\n', '\r':
			w.pos++
		default:
			return
		}
	}
}

// value scans the value at w.pos (whitespace already skipped) and reports
// it once its end is known.
func (w *walker) value(path string) {
	if w.done || w.pos >= len(w.data) {
		return
	}
	start := w.pos
	switch w.data[w.pos] {
	case '{':
		w.pos++
		var keys map[string]bool
		if w.onKey != nil {
			keys = map[string]bool{}
		}
		for !w.done {
			w.skipSpace()
			if w.pos >= len(w.data) || w.data[w.pos] == '}' {
				w.pos++
				break
			}
			if w.data[w.pos] == ',' {
				w.pos++
				continue
			}
			at := w.pos
			key := w.str()
			if keys != nil {
				if keys[key] && !w.onKey(path, key, at) {
					w.done = true
					return
				}
				keys[key] = true
			}
			w.skipSpace()
			w.pos++ // ':'
			w.skipSpace()
			w.value(joinKey(path, key))
		}
	case '[':
		w.pos++
		for i := 0; !w.done; {
			w.skipSpace()
			if w.pos >= len(w.data) || w.data[w.pos] == ']' {
				w.pos++
				break
			}
			if w.data[w.pos] == ',' {
				w.pos++
				continue
			}
			w.value(path + "[" + strconv.Itoa(i) + "]")
			i++
		}
	case '"':
		w.str()
	default:
		for w.pos < len(w.data) && !strings.ContainsRune(" \t\r\n,]}", rune(w.data[w.pos])) {
			w.pos++
		}
	}
	if !w.done && !w.visit(span{path, start, min(w.pos, len(w.data))}) {
		w.done = true
	}
}

// str scans the string at w.pos and returns its decoded text.
func (w *walker) str() string {
	start := w.pos
	w.pos = stringEnd(w.data, w.pos)
	s, err := strconv.Unquote(string(w.data[start:w.pos]))
	if err != nil {
		return string(w.data[start+1 : max(w.pos-1, start+1)])
	}
	return s
}

// stringEnd returns the offset just past the string starting at i.
func stringEnd(data []byte, i int) int {
	for j := i + 1; j < len(data); j++ {
		switch data[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(data)
}

// joinKey appends an object member to a path.
func joinKey(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// pathAt returns the innermost value that contains byte off: the first
// one reported, since inner values are reported before outer ones.
func pathAt(data []byte, off int) span {
	var best span
	walk(data, func(s span) bool {
		if s.start <= off && off < s.end {
			best = s
			return false
		}
		return true
	})
	return best
}
