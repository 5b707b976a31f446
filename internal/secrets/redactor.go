package secrets

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"unsafe"

	"github.com/coregx/ahocorasick"

	"github.com/agent-interop/runtime/internal/lazy"
)

// Redactor finds and replaces secrets in text. It is immutable after
// [New] and safe for concurrent use; rules compile on first use.
type Redactor struct {
	rules    []*rule
	global   []*allowlist
	keywords *ahocorasick.Automaton
	// byKeyword maps a keyword's pattern id to the rules it selects.
	byKeyword [][]int
	// unkeyed are the rules that run on every text (or whenever their
	// trigger says so).
	unkeyed []int
}

// New builds a redactor over the gitleaks rule set and the project's rules.
func New() (*Redactor, error) {
	gl, global, err := gitleaksRules()
	if err != nil {
		return nil, err
	}
	return build(append(interopRules(), gl...), global)
}

func build(rules []*rule, global []*allowlist) (*Redactor, error) {
	r := &Redactor{rules: rules, global: global}
	ids := map[string]int{}
	var words []string
	for i, ru := range rules {
		if len(ru.keywords) == 0 {
			r.unkeyed = append(r.unkeyed, i)
			continue
		}
		for _, k := range ru.keywords {
			id, ok := ids[k]
			if !ok {
				id = len(words)
				ids[k] = id
				words = append(words, k)
				r.byKeyword = append(r.byKeyword, nil)
			}
			r.byKeyword[id] = append(r.byKeyword[id], i)
		}
	}
	ac, err := ahocorasick.NewBuilder().AddStrings(words).Build()
	if err != nil {
		return nil, fmt.Errorf("build the secret keyword automaton: %w", err)
	}
	r.keywords = ac
	return r, nil
}

// Rules returns the number of rules by source ("gitleaks", "interop").
func (r *Redactor) Rules() map[string]int {
	out := map[string]int{}
	for _, ru := range r.rules {
		out[ru.source]++
	}
	return out
}

// Check compiles every rule and reports the ones that do not compile.
func (r *Redactor) Check() error {
	var bad []string
	for _, ru := range r.rules {
		if _, err := ru.regexp(); err != nil {
			bad = append(bad, fmt.Sprintf("%s: %v", ru.id, err))
		}
	}
	for _, a := range r.global {
		if a.pattern != "" && a.regexp() == nil {
			bad = append(bad, "global allowlist: "+a.pattern)
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("secret rules that do not compile: %s", strings.Join(bad, "; "))
	}
	return nil
}

// selected returns the indexes of the rules to run on s, in rule order:
// those with a keyword in s whose gate (if any) holds, and the unkeyed ones
// whose trigger (if any) fires.
func (r *Redactor) selected(s string) []int {
	return r.selectedFrom(s, r.keywords.FindAllOverlapping(lowerASCII(s)))
}

// selectedFrom is selected with the keyword matches of s already found.
// The (rule, keyword end) pairs are grouped by rule in a slice sorted
// stably (each rule's ends in match order, as its gate saw them in a
// map), not in a map: most strings with a match have one or two.
func (r *Redactor) selectedFrom(s string, matches []ahocorasick.Match) []int {
	return r.selectedAmong(s, matches, r.unkeyed)
}

// firing returns the unkeyed rules whose trigger (if any) fires on s. A
// trigger is a containment test (see rule), so a text that s holds
// verbatim can fire no other.
func (r *Redactor) firing(s string) []int {
	var out []int
	for _, i := range r.unkeyed {
		if t := r.rules[i].trigger; t == nil || t(s) {
			out = append(out, i)
		}
	}
	return out
}

// selectedAmong is selectedFrom with the unkeyed rules to try narrowed to
// unkeyed (those firing on a text that holds s verbatim).
func (r *Redactor) selectedAmong(s string, matches []ahocorasick.Match, unkeyed []int) []int {
	type hit struct{ rule, end int }
	var buf [8]hit
	hits := buf[:0]
	for _, m := range matches {
		for _, i := range r.byKeyword[m.PatternID] {
			hits = append(hits, hit{i, m.End})
		}
	}
	slices.SortStableFunc(hits, func(a, b hit) int { return a.rule - b.rule })
	var out []int
	var ends []int
	for j := 0; j < len(hits); {
		i := hits[j].rule
		ends = ends[:0]
		for ; j < len(hits) && hits[j].rule == i; j++ {
			ends = append(ends, hits[j].end)
		}
		if g := r.rules[i].gate; g == nil || g(s, ends) {
			out = append(out, i)
		}
	}
	for _, i := range unkeyed {
		if t := r.rules[i].trigger; t == nil || t(s) {
			out = append(out, i)
		}
	}
	sort.Ints(out)
	return out
}

// Contains reports whether s holds anything [Redactor.String] would
// replace.
func (r *Redactor) Contains(s string) bool {
	return r.String(s) != s
}

// MayContain is the prefilter alone: false means no rule can match s.
func (r *Redactor) MayContain(s string) bool {
	return len(r.selected(s)) > 0
}

// String returns s with every secret replaced by [Redacted] (a private-key
// block by [RedactedPrivateKey]). It is idempotent.
func (r *Redactor) String(s string) string {
	if s == "" {
		return s
	}
	return r.redactSelected(s, r.selected(s))
}

// redactSelected is String with the rules to run on s already selected.
func (r *Redactor) redactSelected(s string, sel []int) string {
	if len(sel) == 0 {
		return s
	}
	var spans []span
	for _, i := range sel {
		ru := r.rules[i]
		var global []*allowlist
		if ru.source == sourceGitleaks {
			global = r.global
		}
		spans = ru.find(s, global, spans)
	}
	if len(spans) == 0 {
		return s
	}
	return apply(s, spans)
}

// apply replaces the union of spans; overlapping spans merge, and a merged
// span that holds a private-key block is replaced as one.
func apply(s string, spans []span) string {
	sort.Slice(spans, func(i, j int) bool {
		if spans[i].start != spans[j].start {
			return spans[i].start < spans[j].start
		}
		return spans[i].end > spans[j].end
	})
	var b strings.Builder
	b.Grow(len(s))
	pos := 0
	for i := 0; i < len(spans); {
		cur := spans[i]
		repl := cur.replacement
		for i++; i < len(spans) && spans[i].start < cur.end; i++ {
			if spans[i].end > cur.end {
				cur.end = spans[i].end
			}
			if spans[i].replacement == RedactedPrivateKey {
				repl = RedactedPrivateKey
			}
		}
		if repl == "" {
			repl = Redacted
		}
		if cur.start < pos { // inside an earlier merged span
			cur.start = pos
		}
		b.WriteString(s[pos:cur.start])
		b.WriteString(repl)
		pos = cur.end
	}
	b.WriteString(s[pos:])
	return b.String()
}

// lowerASCII lower-cases ASCII letters, allocating only when s has one in
// upper case; byte offsets are unchanged.
func lowerASCII(s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'A' && c <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if c := b[j]; c >= 'A' && c <= 'Z' {
					b[j] = c + 'a' - 'A'
				}
			}
			return b
		}
	}
	return unsafe.Slice(unsafe.StringData(s), len(s)) // read only
}

// lowerASCIIInto is lowerASCII, writing into *buf (grown as needed and
// kept there) instead of a new slice when s has an upper-case letter; the
// result is read only, and valid until *buf is used again.
func lowerASCIIInto(buf *[]byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'A' && c <= 'Z' {
			b := append((*buf)[:0], s...)
			for j := i; j < len(b); j++ {
				if c := b[j]; c >= 'A' && c <= 'Z' {
					b[j] = c + 'a' - 'A'
				}
			}
			*buf = b
			return b
		}
	}
	return unsafe.Slice(unsafe.StringData(s), len(s)) // read only
}

// Default is the process's redactor, built on first use (never at package
// init). A rule set that fails to load is a programming error caught by the
// package tests; Default then falls back to the project's rules alone.
func Default() *Redactor { return defaultRedactor.Get() }

var defaultRedactor = lazy.Value[*Redactor]{New: func() *Redactor {
	r, err := New()
	if err != nil {
		r, _ = build(interopRules(), nil)
	}
	return r
}}
