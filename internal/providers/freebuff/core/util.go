package core

import (
	"encoding/json"
	"strings"
	"time"
	"unicode/utf8"
)

// Cut returns s shortened to at most n runes.
func Cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n])
}

// AsMap returns v as a JSON object.
func AsMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

// Str returns v as a non-empty string.
func Str(v any) string {
	s, _ := v.(string)
	return s
}

// FirstStr returns the first non-empty string among m's keys.
func FirstStr(m map[string]any, keys ...string) string {
	for _, k := range keys {
		if s := Str(m[k]); s != "" {
			return s
		}
	}
	return ""
}

// Num returns a JSON number as int64.
func Num(v any) (int64, bool) {
	switch t := v.(type) {
	case float64:
		return int64(t), true
	case json.Number:
		i, err := t.Int64()
		if err != nil {
			f, ferr := t.Float64()
			return int64(f), ferr == nil
		}
		return i, true
	case int:
		return int64(t), true
	case int64:
		return t, true
	}
	return 0, false
}

// DecodeJSON decodes b with numbers kept as json.Number.
func DecodeJSON(b []byte) (any, error) {
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// ISOTime formats t like JavaScript's toISOString.
func ISOTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// Ptr returns a pointer to a copy of v.
func Ptr[T any](v T) *T { return &v }
