package secrets

import (
	"bytes"
	"encoding/json"
	"sort"
	"sync"
	"unsafe"

	"github.com/coregx/ahocorasick"

	"github.com/agent-interop/runtime/internal/lazy"
)

// JSON redacts every string (values and keys) of a valid JSON document in
// place and returns the document; everything else, key order included, is
// kept byte for byte. A document without a single keyword or trigger hit
// is returned as it is after one prefilter pass. Strings with escapes are
// decoded before they are matched, so an escape cannot hide a secret.
//
// The document's keyword matches are found once, and each string's rules
// are selected from the matches that lie inside it, as String would select
// them from its own scan (a page of objectives that end in "tests." or
// whose cursor base64 makes look like a JWT was scanned again string by
// string).
func (r *Redactor) JSON(doc []byte) []byte { return r.json(doc, true, nil) }

// JSONMemo is a document redacted by JSONKeep, kept so that a later
// document sharing a prefix with it is redacted from where the two part
// (JSONFrom): a page cut shorter shares everything up to its last record
// with the whole page.
type JSONMemo struct {
	raw, out []byte
	// shifts are the ends (in raw) of the strings the redaction changed,
	// each with how much longer out is than raw from there on.
	shifts []shift
	// scanned reports that json scanned raw's strings (it does not when
	// the prefilter finds nothing), and resumes are then its value
	// strings in order (see resumeAt).
	scanned bool
	resumes []resume
}

type shift struct{ rawEnd, delta int }

// resume is a value string of a memo's document: at is just after its
// closing quote, next the index of the first byte after it that is not
// space (not ':', or the string would be a key).
type resume struct{ at, next int }

// resumeAt is resumeAt(doc, shared) for a doc whose first shared bytes
// are m.raw's, from m's scan instead of a scan of doc: up to shared, doc's
// strings are m.raw's, so the last value string whose next non-space byte
// lies within shared is the last one resumeAt's scan takes (every string
// ends before the next one's next byte, so the scan stops after it).
func (m *JSONMemo) resumeAt(doc []byte, shared int) int {
	if !m.scanned {
		return resumeAt(doc, shared)
	}
	j := sort.Search(len(m.resumes), func(j int) bool { return m.resumes[j].next >= shared })
	if j == 0 {
		return 0
	}
	return m.resumes[j-1].at
}

// Raw is the document m was made from.
func (m *JSONMemo) Raw() []byte { return m.raw }

// JSONKeep is JSON, and keeps what JSONFrom needs of doc and its
// redaction; doc must not change while the memo is used.
func (r *Redactor) JSONKeep(doc []byte) ([]byte, *JSONMemo) {
	m := &JSONMemo{raw: doc}
	m.out = r.json(doc, true, m)
	return m.out, m
}

// JSONFrom returns JSON(doc), reusing m's redaction of the prefix doc
// shares with m's document. The redaction of a string depends only on the
// string, on whether a ':' follows it (a key) and on whether it is the
// value of a key that names a secret; after a value string nothing is
// carried to the next string. So the redaction is resumed after the last
// value string whose bytes and the bytes up to the next non-space byte
// are all shared, from m's output at that point.
func (r *Redactor) JSONFrom(m *JSONMemo, doc []byte) []byte {
	if m == nil {
		return r.JSON(doc)
	}
	p := m.resumeAt(doc, commonPrefix(m.raw, doc))
	if p <= 0 {
		return r.JSON(doc)
	}
	// The head of m's output up to p: doc's own bytes unless a string
	// before p was redacted.
	delta, changed := 0, false
	for _, s := range m.shifts {
		if s.rawEnd > p {
			break
		}
		delta, changed = s.delta, true
	}
	// The tail is scanned as a document of its own, which it is to json:
	// the scan starts outside a string with nothing carried over.
	tail := r.JSON(doc[p:])
	if !changed && len(tail) == len(doc)-p && (len(tail) == 0 || &tail[0] == &doc[p]) {
		return doc // neither part changed: doc is its own redaction
	}
	head := m.out[:p+delta]
	out := make([]byte, 0, len(head)+len(tail))
	return append(append(out, head...), tail...)
}

// commonPrefix is the length of the longest common prefix of a and b.
func commonPrefix(a, b []byte) int {
	n := min(len(a), len(b))
	i := 0
	for i+8 <= n && string(a[i:i+8]) == string(b[i:i+8]) {
		i += 8
	}
	for i < n && a[i] == b[i] {
		i++
	}
	return i
}

// resumeAt is the last position of doc, within its first shared bytes,
// just after a value string (one no ':' follows) whose closing quote and
// next non-space byte are within the shared bytes: where json's scan of
// doc can start afresh. 0 when there is none. The strings are delimited
// exactly as json's scan delimits them.
func resumeAt(doc []byte, shared int) int {
	at := 0
	for i := 0; i < shared; i++ {
		j := bytes.IndexByte(doc[i:shared], '"')
		if j < 0 {
			break
		}
		i += j
		end, _ := stringEnd(doc, i)
		if end < 0 || end >= shared {
			break
		}
		k := end + 1
		for k < len(doc) && (doc[k] == ' ' || doc[k] == '\n' || doc[k] == '\t' || doc[k] == '\r') {
			k++
		}
		if k >= shared {
			break
		}
		if doc[k] != ':' {
			at = end + 1
		}
		i = end
	}
	return at
}

// lowerScratch holds buffers for lowerASCIIInto (*[]byte).
var lowerScratch = sync.Pool{New: func() any { return new([]byte) }}

// json is JSON; with skip false every string is passed to String (the
// reference the skipping is tested against). m, when not nil, records
// where the output's length parts from doc's.
func (r *Redactor) json(doc []byte, skip bool, m *JSONMemo) []byte {
	if len(doc) == 0 {
		return doc
	}
	whole := unsafe.String(unsafe.SliceData(doc), len(doc))
	// The lower-cased copy the keyword scan reads is a page's size and
	// dropped right after the scan (matches hold offsets): its buffer is
	// reused from call to call.
	scratch := lowerScratch.Get().(*[]byte)
	matches := r.keywords.FindAllOverlapping(lowerASCIIInto(scratch, whole))
	lowerScratch.Put(scratch)
	// A "\u" escape may spell a keyword, so a document with one always
	// takes the slow path.
	if !bytes.Contains(doc, []byte(`\u`)) && len(r.selectedFrom(whole, matches)) == 0 {
		return doc
	}
	// In the order a scan of one string finds them (by end); next is the
	// first that ends after the current string's opening quote.
	sort.SliceStable(matches, func(i, j int) bool { return matches[i].End < matches[j].End })
	next := 0
	// A string without escapes is held verbatim by the document, so no
	// trigger the document does not fire fires on it.
	live := r.firing(whole)
	var within []ahocorasick.Match
	var out []byte // allocated on the first change
	last := 0
	secretValueAt := -1 // after the ':' of a key that names a secret
	// The last string with keyword matches inside it and its redaction:
	// the redaction of such a string depends on the string alone (see
	// below), and a page repeats its strings (every record's objective
	// preview of a seeded store, a status).
	var memoText, memoRed string
	memo := false
	for i := 0; i < len(doc); i++ {
		q := bytes.IndexByte(doc[i:], '"')
		if q < 0 {
			break
		}
		i += q
		valueOfSecretKey := secretValueAt >= 0 && onlySpace(doc[secretValueAt:i])
		secretValueAt = -1
		end, escaped := stringEnd(doc, i)
		if end < 0 {
			break // not valid JSON: leave the rest as it is
		}
		k := end + 1 // the next byte that is not space
		for k < len(doc) && (doc[k] == ' ' || doc[k] == '\n' || doc[k] == '\t' || doc[k] == '\r') {
			k++
		}
		if m != nil && k < len(doc) && doc[k] != ':' {
			m.resumes = append(m.resumes, resume{at: end + 1, next: k})
		}
		raw := doc[i+1 : end]
		var text string
		if escaped {
			// Decoded into a variable of its own: text, whose address
			// json.Unmarshal would take, would move to the heap for every
			// string of the document.
			var decoded string
			if err := json.Unmarshal(doc[i:end+1], &decoded); err != nil {
				i = end
				continue
			}
			text = decoded
		} else {
			text = unsafe.String(unsafe.SliceData(raw), len(raw)) // read only
		}
		isKey := false
		if k < len(doc) && doc[k] == ':' {
			isKey = true
			if keyNamesSecret(text) {
				secretValueAt = k + 1
			}
		}
		for next < len(matches) && matches[next].End <= i {
			next++
		}
		var red string
		switch {
		case valueOfSecretKey && !isKey && text != "" && !alreadyRedacted(text):
			red = Redacted
		case skip && !escaped && text != "" && memo && text == memoText:
			red = memoRed
		case skip && !escaped && text != "":
			// The matches inside the string, at its own offsets: those of
			// a scan of text alone, so with live (fixed for the document)
			// they make text's redaction a function of text.
			within = within[:0]
			for _, m := range matches[next:] {
				if m.End > end {
					break
				}
				if m.Start > i {
					within = append(within, ahocorasick.Match{PatternID: m.PatternID, Start: m.Start - i - 1, End: m.End - i - 1})
				}
			}
			red = r.redactSelected(text, r.selectedAmong(text, within, live))
			if len(within) > 0 {
				memoText, memoRed, memo = text, red, true
			}
		default:
			red = r.String(text)
		}
		if red != text {
			if out == nil {
				out = make([]byte, 0, len(doc))
			}
			out = append(out, doc[last:i]...)
			out = appendJSONString(out, red)
			last = end + 1
			if m != nil {
				m.shifts = append(m.shifts, shift{rawEnd: last, delta: len(out) - last})
			}
		}
		i = end
	}
	if m != nil {
		m.scanned = true
	}
	if out == nil {
		return doc
	}
	return append(out, doc[last:]...)
}

func onlySpace(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\n' && c != '\t' && c != '\r' {
			return false
		}
	}
	return true
}

// secretKeySuffixes end the names of JSON keys whose string values are
// secrets whatever they look like ("authToken", "client_secret",
// "DB_PASSWORD"); counts such as "inputTokens" do not end so.
var secretKeySuffixes = []string{"token", "secret", "password", "passwd", "apikey", "privatekey", "accesskey", "secretkey", "credential", "credentials", "cookie", "authorization", "launchid", "passphrase"}

// keyNamesSecret reports whether key, with '_', '-' and '.' left out and
// ASCII letters lower-cased, ends in one of secretKeySuffixes. The key is
// compared from its end, so most keys fail at their last letter.
func keyNamesSecret(key string) bool {
	if len(key) < 5 || len(key) > 100 {
		return false
	}
	// Only the suffixes that end in the key's last letter, as folded,
	// can match (foldedHasSuffix compares it first).
	c, i := foldedBefore(key, len(key))
	if i < 0 {
		return false
	}
	for _, suf := range suffixesByLast.Get()[c] {
		if foldedHasSuffix(key, suf) {
			return true
		}
	}
	return false
}

// suffixesByLast is secretKeySuffixes by their last byte (built on first
// use: package state costs every start, see internal/lazy).
var suffixesByLast = lazy.Value[*[256][]string]{New: func() *[256][]string {
	var t [256][]string
	for _, suf := range secretKeySuffixes {
		t[suf[len(suf)-1]] = append(t[suf[len(suf)-1]], suf)
	}
	return &t
}}

// foldedHasSuffix reports whether key folded as keyNamesSecret folds it
// ends in suf (lower-case ASCII).
func foldedHasSuffix(key, suf string) bool {
	i := len(key)
	for j := len(suf) - 1; j >= 0; j-- {
		var c byte
		if c, i = foldedBefore(key, i); i < 0 || c != suf[j] {
			return false
		}
	}
	return true
}

// foldedBefore returns the last byte of key before end that is not a
// separator ('_', '-', '.'), lower-cased, and its index (-1: none).
func foldedBefore(key string, end int) (byte, int) {
	i := end - 1
	for i >= 0 && (key[i] == '_' || key[i] == '-' || key[i] == '.') {
		i--
	}
	if i < 0 {
		return 0, -1
	}
	c := key[i]
	if c >= 'A' && c <= 'Z' {
		c += 'a' - 'A'
	}
	return c, i
}

// stringEnd returns the index of the quote closing the string that opens
// at start, and whether the string has escapes; -1 if it is not closed.
func stringEnd(doc []byte, start int) (int, bool) {
	// Most strings have no escape: the first quote closes the string
	// when no backslash comes before it.
	if q := bytes.IndexByte(doc[start+1:], '"'); q >= 0 && bytes.IndexByte(doc[start+1:start+1+q], '\\') < 0 {
		return start + 1 + q, false
	}
	escaped := false
	for j := start + 1; j < len(doc); j++ {
		switch doc[j] {
		case '\\':
			escaped = true
			j++
		case '"':
			return j, escaped
		}
	}
	return -1, escaped
}

// appendJSONString appends s as a JSON string, HTML characters unescaped
// (as the server's encoder writes them).
func appendJSONString(dst []byte, s string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return append(dst, bytes.TrimSuffix(b.Bytes(), []byte("\n"))...)
}
