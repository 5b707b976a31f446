package importstate

import (
	"encoding/json"
	"unicode/utf8"
)

// strict refuses what encoding/json would silently accept and change:
// bytes that are not UTF-8 (json.Unmarshal turns them into U+FFFD) and an
// object key given twice at any depth (json.Unmarshal keeps the last
// value, so `"works":[A],"works":[]` would drop A). A document that is not
// valid JSON is left to decode, which reports the syntax error.
func (s *source) strict() *InputError {
	if !utf8.Valid(s.data) {
		off := 0
		for off < len(s.data) {
			r, n := utf8.DecodeRune(s.data[off:])
			if r == utf8.RuneError && n <= 1 {
				break
			}
			off += n
		}
		return s.at(off, "", "not valid UTF-8: byte 0x%02x at offset %d (the file must be UTF-8; nothing is replaced)", s.data[off], off)
	}
	if !json.Valid(s.data) {
		return nil
	}
	var dup *InputError
	w := walker{data: s.data, visit: func(span) bool { return true }}
	w.onKey = func(path, key string, at int) bool {
		dup = s.at(at, joinKey(path, key), "the key %q appears twice in this object (a JSON reader keeps only one of the values)", key)
		return false
	}
	w.skipSpace()
	w.value("")
	return dup
}
