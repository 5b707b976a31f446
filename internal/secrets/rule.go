package secrets

import (
	"bytes"
	"cmp"
	"math"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// Rule sources.
const (
	sourceGitleaks = "gitleaks"
	sourceInterop  = "interop"
)

// rule is one secret shape. Its regular expression is compiled the first
// time a text needs it.
type rule struct {
	id          string
	source      string
	pattern     string
	secretGroup int     // 0: the first non-empty group, or the whole match
	entropy     float64 // minimum Shannon entropy of the secret (exclusive), 0: none
	keywords    []string
	// trigger, when set, replaces keywords as the prefilter: the rule runs
	// only on texts for which it returns true. It must be a containment
	// test (true for a text, true for every text holding it verbatim):
	// JSON tries it once on the whole document and only on the strings of
	// a document it fires on.
	trigger func(string) bool
	allow   []*allowlist
	// gate, when set, is a necessary condition checked before the regular
	// expression runs: ends are the offsets just after each occurrence of
	// one of the rule's keywords.
	gate func(s string, ends []int) bool
	// reject, when set, drops a match (the whole match text and the secret).
	reject func(match, secret string) bool
	// replacement is the text a secret becomes ([Redacted] if empty).
	replacement string
	// keyStart, when positive, says that every match of the pattern holds
	// one of the rule's keywords (ASCII case aside) within a run of
	// [A-Za-z0-9_.-] that starts the match, at most keyStart bytes after the
	// match's start (keyStart ≥ len(s): any distance), and that the pattern
	// has no assertion that looks before the match (^, \b, \B). find then
	// runs the pattern anchored at the few offsets where a match can start
	// instead of scanning the whole text: see candidateMatches.
	keyStart int
	// maxBreaks, with keyStart, is how many line breaks a match can hold at
	// most, none of them the last character before a "$" of the pattern:
	// the anchored search then reads no further than the line break after
	// those, which keeps its input short enough for the regexp package's
	// backtracker (the same matches as its other engines, much faster).
	maxBreaks int

	once     sync.Once
	re       *regexp.Regexp
	anchored *regexp.Regexp
	err      error
}

func (r *rule) regexp() (*regexp.Regexp, error) {
	r.once.Do(func() {
		r.re, r.err = regexp.Compile(r.pattern)
		if r.err == nil && r.keyStart > 0 {
			r.anchored, r.err = regexp.Compile(`^(?:` + r.pattern + `)`)
		}
	})
	return r.re, r.err
}

// assignmentOperator is gitleaks' operator group of its "semi-generic"
// rules: keyword, up to 23 name characters, then one of these operators.
const assignmentOperator = `(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)`

// operatorAfter gates a semi-generic rule: an operator character must follow
// some keyword occurrence within 64 bytes (the template allows 23; the
// margin covers keywords that are a prefix of the word the rule matches).
func operatorAfter(s string, ends []int) bool {
	for _, e := range ends {
		window := s[e:min(len(s), e+64)]
		if strings.ContainsAny(window, "=>:|,") {
			return true
		}
	}
	return false
}

// assignedAfter gates the key=value rules: after a keyword, the rest of the
// key name, an optional (escaped) quote and blanks, then ':' or '='.
func assignedAfter(s string, ends []int) bool {
	for _, e := range ends {
		i := e
		for i < len(s) && (isTokenChar(s[i]) || s[i] == '.') {
			i++
		}
		if i < len(s) && s[i] == '\\' {
			i++
		}
		if i < len(s) && (s[i] == '"' || s[i] == '\'') {
			i++
		}
		for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
			i++
		}
		if i < len(s) && (s[i] == ':' || s[i] == '=') {
			return true
		}
	}
	return false
}

// span is a byte range of the text to replace.
type span struct {
	start, end  int
	replacement string
}

// find appends the spans of r's secrets in s. global are the allowlists of
// the whole rule set (gitleaks rules only).
func (r *rule) find(s string, global []*allowlist, out []span) []span {
	re, err := r.regexp()
	if err != nil {
		return out
	}
	var ms [][]int
	if r.anchored != nil && !hasASCIIFold(s) {
		ms = r.candidateMatches(s)
	} else {
		ms = re.FindAllStringSubmatchIndex(s, -1)
	}
	for _, m := range ms {
		start, end := m[0], m[1]
		for end > start && s[end-1] == '\n' {
			end--
		}
		if g := r.secretGroup; g > 0 {
			if 2*g+1 >= len(m) || m[2*g] < 0 {
				continue
			}
			start, end = m[2*g], m[2*g+1]
		} else if len(m) > 2 {
			found := false
			for g := 1; 2*g+1 < len(m); g++ {
				if m[2*g] >= 0 && m[2*g+1] > m[2*g] {
					start, end, found = m[2*g], m[2*g+1], true
					break
				}
			}
			if !found && r.source == sourceInterop {
				continue // an empty value: nothing to hide
			}
		}
		if end <= start || alreadyRedacted(s[start:end]) {
			continue
		}
		secret := s[start:end]
		if _, ok := documentedExamples.Get()[secret]; ok {
			continue
		}
		if r.reject != nil && r.reject(s[m[0]:m[1]], secret) {
			continue
		}
		if r.entropy > 0 && shannonEntropy(secret) <= r.entropy {
			continue
		}
		if r.source == sourceGitleaks {
			match, line := s[m[0]:m[1]], lineAround(s, m[0], m[1])
			if allowed(global, secret, match, line) || allowed(r.allow, secret, match, line) {
				continue
			}
		}
		out = append(out, span{start: start, end: end, replacement: r.replacement})
	}
	return out
}

// candidateMatches returns what re.FindAllStringSubmatchIndex(s, -1)
// returns, for a rule with keyStart set, by running the anchored pattern
// only where a match can start. A match's keyword begins at some k where
// one of the rule's keywords occurs, and the match starts in the run of
// [A-Za-z0-9_.-] that ends at k, at most keyStart bytes before k; a match
// starting inside that window implies one at its earliest offset (the
// run's characters are what the pattern's leading class takes), so the
// leftmost match after pos starts at the smallest candidate max(pos, run
// start, k-keyStart) at which the anchored pattern matches. The anchored
// pattern reads the rest of the text up to the line break after the most
// a match can hold (or the end of the text), so its "$" and the priority
// of its alternatives are those of the unanchored search at the same
// offset (a "$" cannot match just after that line break, see maxBreaks),
// and nothing before the offset matters (no look-behind assertion).
// Matches are non-empty (they hold a keyword), so the next search starts
// where the last match ended, as FindAll's does. The rule's gate, a
// necessary condition on the keyword occurrence a match uses, skips the
// occurrences that cannot start one.
func (r *rule) candidateMatches(s string) [][]int {
	lower := lowerASCII(s)
	type occurrence struct{ start, end int }
	var at []occurrence // keyword occurrences, by start
	for _, k := range r.keywords {
		for i := 0; ; {
			j := bytes.Index(lower[i:], []byte(k))
			if j < 0 {
				break
			}
			at = append(at, occurrence{i + j, i + j + len(k)})
			i += j + 1
		}
	}
	if len(at) == 0 {
		return nil
	}
	slices.SortFunc(at, func(a, b occurrence) int { return cmp.Or(a.start-b.start, a.end-b.end) })
	var out [][]int
	pos, tried := 0, -1
	for _, o := range at {
		k := o.start
		if k < pos {
			continue
		}
		// The rule's gate is a necessary condition on the keyword a match
		// uses: an occurrence that fails it starts no match.
		if r.gate != nil && !r.gate(s, []int{o.end}) {
			continue
		}
		c := k
		for c > pos && k-c < r.keyStart && isKeyNameChar(s[c-1]) {
			c--
		}
		if c <= tried {
			continue
		}
		tried = c
		end := c
		for n := 0; n <= r.maxBreaks && end < len(s); n++ {
			if i := strings.IndexByte(s[end:], '\n'); i >= 0 {
				end += i + 1
			} else {
				end = len(s)
			}
		}
		m := r.anchored.FindStringSubmatchIndex(s[c:end])
		if m == nil {
			continue
		}
		for i := range m {
			if m[i] >= 0 {
				m[i] += c
			}
		}
		out = append(out, m)
		pos = m[1]
	}
	return out
}

// isKeyNameChar is the class [A-Za-z0-9_.-] ([\w.-] in ASCII).
func isKeyNameChar(c byte) bool { return isTokenChar(c) || c == '.' }

// hasASCIIFold reports whether s holds one of the two non-ASCII letters
// that case-fold to an ASCII letter (U+017F ſ to s, U+212A Kelvin sign to
// k): a case-insensitive pattern matches them where the ASCII keyword
// search does not look, so such a text is scanned whole.
func hasASCIIFold(s string) bool {
	return strings.Contains(s, "\u017f") || strings.Contains(s, "\u212a")
}

// alreadyRedacted keeps redaction idempotent: a marker is not a secret.
func alreadyRedacted(s string) bool {
	return strings.HasPrefix(s, "[REDACTED")
}

func lineAround(s string, start, end int) string {
	if i := strings.LastIndexByte(s[:start], '\n'); i >= 0 {
		start = i + 1
	} else {
		start = 0
	}
	if i := strings.IndexByte(s[end:], '\n'); i >= 0 {
		end += i
	} else {
		end = len(s)
	}
	return s[start:end]
}

// shannonEntropy is the entropy in bits per byte of s, as gitleaks
// computes it.
func shannonEntropy(s string) float64 {
	if s == "" {
		return 0
	}
	var counts [256]int
	for i := 0; i < len(s); i++ {
		counts[s[i]]++
	}
	n := float64(len(s))
	var h float64
	for _, c := range counts {
		if c > 0 {
			p := float64(c) / n
			h -= p * math.Log2(p)
		}
	}
	return h
}

// allowlist is a gitleaks allowlist reduced to its text checks.
type allowlist struct {
	target    string // "" (the secret), "match" or "line"
	and       bool
	pattern   string
	stopWords []string

	once sync.Once
	re   *regexp.Regexp
}

func (a *allowlist) regexp() *regexp.Regexp {
	a.once.Do(func() {
		if a.pattern != "" {
			a.re, _ = regexp.Compile(a.pattern)
		}
	})
	return a.re
}

func (a *allowlist) allows(secret, match, line string) bool {
	target := secret
	switch a.target {
	case "match":
		target = match
	case "line":
		target = line
	}
	re := a.regexp()
	regexOK := re != nil && re.MatchString(target)
	stopOK := false
	if len(a.stopWords) > 0 {
		lower := strings.ToLower(secret)
		for _, w := range a.stopWords {
			if strings.Contains(lower, w) {
				stopOK = true
				break
			}
		}
	}
	if a.and {
		return (a.pattern == "" || regexOK) && (len(a.stopWords) == 0 || stopOK)
	}
	return regexOK || stopOK
}

func allowed(lists []*allowlist, secret, match, line string) bool {
	for _, a := range lists {
		if a.allows(secret, match, line) {
			return true
		}
	}
	return false
}
