package catalogtest

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// nonASCII are strings whose characters take 2, 3 and 4 bytes in UTF-8,
// combining marks, a zero-width-joined emoji sequence, an astral-plane
// character, a right-to-left script and a byte-order mark: each is a
// short valid value for any unpatterned string.
var nonASCII = []string{"é漢字", "日本語のテキスト", "😀", "👩\u200d👩\u200d👧", "e\u0301", "𝄞𝕏", "مرحبا", "\ufeffbom"}

// validValues returns JSON literals that satisfy s.
func validValues(s Schema) []string {
	if alts, ok := s["oneOf"].([]any); ok {
		var out []string
		for _, a := range alts {
			out = append(out, validValues(a.(Schema))...)
		}
		return out
	}
	if enum, ok := s["enum"].([]any); ok {
		var out []string
		for _, v := range enum {
			out = append(out, lit(v))
		}
		return out
	}
	var out []string
	if isNullable(s) {
		out = append(out, "null")
	}
	switch TypeName(s) {
	case "":
		return append(out, `1`, `"x"`, `null`, `{}`, `[1,{"a":[]}]`, `true`)
	case "string":
		return append(out, stringsFor(s, true)...)
	case "integer":
		lo, hi := num(s, "minimum"), num(s, "maximum")
		out = append(out, fmtInt(lo), fmtInt(hi), fmtInt((lo+hi)/2))
		if lo >= 0 && hi >= 1 {
			out = append(out, fmtInt(max(lo, 1))+".0", "1e0")
		}
		return out
	case "number":
		return append(out, fmt.Sprint(num(s, "minimum")), fmt.Sprint(num(s, "maximum")))
	case "boolean":
		return append(out, "true", "false")
	case "array":
		item := validValues(s["items"].(Schema))
		out = append(out, arrayOf(s, item[:1]))
		if len(item) > 1 {
			out = append(out, arrayOf(s, item))
		}
		if minItems(s) == 0 {
			out = append(out, "[]")
		}
		return out
	case "object":
		return append(out, validObjects(s)...)
	}
	return out
}

// validObjects varies one property at a time over its valid values.
func validObjects(s Schema) []string {
	out := []string{objectMin(s), objectFull(s)}
	base := minFields(s)
	for _, p := range PropNames(s) {
		for _, v := range validValues(Props(s)[p].(Schema)) {
			m := clone(base)
			m[p] = v
			out = append(out, render(m))
		}
	}
	return dedupe(out)
}

// invalidValues returns JSON literals that break s.
func invalidValues(s Schema) []string {
	if alts, ok := s["oneOf"].([]any); ok {
		out := []string{`1`, `true`, `[]`, `null`}
		for _, a := range alts {
			for _, v := range invalidValues(a.(Schema)) {
				if !strings.HasPrefix(v, "{") && !strings.HasPrefix(v, `"`) {
					continue
				}
				out = append(out, v)
			}
		}
		return out
	}
	if _, ok := s["enum"]; ok {
		return []string{`"not-a-listed-value"`, `1`, `null`, `""`}
	}
	t := TypeName(s)
	if t == "" {
		return nil // anything goes
	}
	var out []string
	if !isNullable(s) {
		out = append(out, "null")
	}
	for _, other := range []string{`"s"`, `7`, `true`, `{}`, `[]`, `1.5`} {
		if !matchesType(other, t) {
			out = append(out, other)
		}
	}
	switch t {
	case "string":
		out = append(out, stringsFor(s, false)...)
	case "integer":
		lo, hi := num(s, "minimum"), num(s, "maximum")
		out = append(out, fmtInt(lo-1), fmtInt(hi+1), "0.5", "1e400", "-1e400")
	case "array":
		if m := maxItems(s); m >= 0 {
			item := validValues(s["items"].(Schema))
			var many []string
			for len(many) <= m {
				many = append(many, item[0])
			}
			out = append(out, "["+strings.Join(many, ",")+"]")
		}
		if minItems(s) > 0 {
			out = append(out, "[]")
		}
		for _, bad := range invalidValues(s["items"].(Schema)) {
			out = append(out, "["+bad+"]")
		}
	case "object":
		out = append(out, invalidObjects(s)...)
	}
	return out
}

func invalidObjects(s Schema) []string {
	var out []string
	base := minFields(s)
	for _, r := range required(s) {
		m := clone(base)
		delete(m, r)
		out = append(out, render(m))
	}
	m := clone(base)
	m["notAKnownArgument"] = "1"
	out = append(out, render(m))
	for _, p := range PropNames(s) {
		for _, bad := range invalidValues(Props(s)[p].(Schema)) {
			m := clone(base)
			m[p] = bad
			out = append(out, render(m))
		}
	}
	return out
}

func objectMin(s Schema) string  { return render(minFields(s)) }
func objectFull(s Schema) string { return render(fullFields(s)) }

func minFields(s Schema) map[string]string {
	m := map[string]string{}
	for _, r := range required(s) {
		m[r] = validValues(Props(s)[r].(Schema))[0]
	}
	return m
}

func fullFields(s Schema) map[string]string {
	m := map[string]string{}
	for _, p := range PropNames(s) {
		vals := validValues(Props(s)[p].(Schema))
		m[p] = vals[len(vals)-1]
	}
	return m
}

// stringKey is what stringsFor's cases depend on: many properties of many
// tools share their bounds, and their cases are generated once.
type stringKey struct {
	minL, maxL     float64
	hasMin, hasMax bool
	pattern        string
	valid          bool
}

// stringMemo keeps stringsFor's cases for this test binary (stringKey →
// func() []string); the values at a 100,000-character bound are the costly
// part of generating every tool's cases.
var stringMemo sync.Map

// candidate is a string case: n repetitions of unit, then tail.
type candidate struct {
	unit string
	n    int
	tail string
}

// quoted is strconv.Quote of the candidate, built from the quoted unit and
// tail: Quote escapes rune by rune, so this is the same text without
// quoting (and checking the printability of) every character of a long
// value.
func (c candidate) quoted() string {
	q, t := strconv.Quote(c.unit), strconv.Quote(c.tail)
	return `"` + strings.Repeat(q[1:len(q)-1], c.n) + t[1:len(t)-1] + `"`
}

func (c candidate) String() string { return strings.Repeat(c.unit, c.n) + c.tail }

// runes is the candidate's length in characters (code points).
func (c candidate) runes() int {
	return utf8.RuneCountInString(c.unit)*c.n + utf8.RuneCountInString(c.tail)
}

// stringsFor returns the quoted string cases that satisfy s (valid) or
// break it: short ASCII and non-ASCII words, and values at and one over
// each length bound in characters of every UTF-8 width.
func stringsFor(s Schema, valid bool) []string {
	minL, hasMin := s["minLength"].(float64)
	maxL, hasMax := s["maxLength"].(float64)
	p, _ := s["pattern"].(string)
	k := stringKey{minL: minL, maxL: maxL, hasMin: hasMin, hasMax: hasMax, pattern: p, valid: valid}
	once, _ := stringMemo.LoadOrStore(k, sync.OnceValue(func() []string { return generateStrings(k) }))
	return once.(func() []string)()
}

func generateStrings(k stringKey) []string {
	var pat *regexp.Regexp
	if k.pattern != "" {
		pat = regexp.MustCompile(k.pattern)
	}
	var candidates []candidate
	for _, w := range append([]string{"a", "abc", "hello world", "x_y:z.1", "", "A-Z"}, nonASCII...) {
		candidates = append(candidates, candidate{w, 1, ""})
	}
	if k.hasMin {
		candidates = append(candidates, candidate{"b", int(k.minL), ""}, candidate{"é", max(int(k.minL)-1, 0), ""})
	}
	if k.hasMax {
		n := int(k.maxL)
		candidates = append(candidates, candidate{"c", n, ""}, candidate{"d", n + 1, ""})
		// At and one over the bound in characters of every UTF-8 width, and
		// in base letters with combining marks (two code points each, one
		// on screen): the bound counts code points, never bytes or glyphs.
		for _, r := range []string{"ü", "漢", "😀", "𝄞"} {
			candidates = append(candidates, candidate{r, n, ""}, candidate{r, n + 1, ""})
		}
		combining := candidate{"e\u0301", n / 2, strings.Repeat("x", n%2)}
		over := combining
		over.tail += "\u0301"
		candidates = append(candidates, combining, over)
	}
	var out []string
	for _, c := range candidates {
		n := c.runes()
		ok := (!k.hasMin || n >= int(k.minL)) && (!k.hasMax || n <= int(k.maxL)) && (pat == nil || pat.MatchString(c.String()))
		if ok == k.valid {
			out = append(out, c.quoted())
		}
	}
	sort.Strings(out)
	return dedupe(out)
}

func arrayOf(s Schema, items []string) string {
	if m := maxItems(s); m >= 0 && len(items) > m {
		items = items[:m]
	}
	for len(items) < minItems(s) {
		items = append(items, items[0])
	}
	return "[" + strings.Join(items, ",") + "]"
}

func isNullable(s Schema) bool {
	t, ok := s["type"].([]any)
	if !ok {
		return false
	}
	for _, x := range t {
		if x == "null" {
			return true
		}
	}
	return false
}

func matchesType(lit, t string) bool {
	switch t {
	case "string":
		return strings.HasPrefix(lit, `"`)
	case "integer":
		return lit == "7"
	case "number":
		return lit == "7" || lit == "1.5"
	case "boolean":
		return lit == "true"
	case "object":
		return lit == "{}"
	case "array":
		return lit == "[]"
	}
	return false
}

func required(s Schema) []string {
	var out []string
	for _, r := range asSlice(s["required"]) {
		out = append(out, r.(string))
	}
	return out
}

func asSlice(v any) []any { x, _ := v.([]any); return x }

func num(s Schema, k string) int64 { f, _ := s[k].(float64); return int64(f) }

func minItems(s Schema) int {
	f, _ := s["minItems"].(float64)
	return int(f)
}

func maxItems(s Schema) int {
	f, ok := s["maxItems"].(float64)
	if !ok {
		return -1
	}
	return int(f)
}

func fmtInt(v int64) string { return strconv.FormatInt(v, 10) }

func lit(v any) string { b, _ := json.Marshal(v); return string(b) }

func clone(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func render(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Quote(k) + ":" + m[k])
	}
	b.WriteByte('}')
	return b.String()
}

func dedupe(xs []string) []string {
	var out []string
	for i, x := range xs {
		if i == 0 || x != xs[i-1] {
			out = append(out, x)
		}
	}
	return out
}
