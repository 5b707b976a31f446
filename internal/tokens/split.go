package tokens

import (
	"encoding/binary"
	"unicode"
	"unicode/utf8"
	"unsafe"
)

// split calls piece for each pre-tokenizer piece of text, exactly as the
// o200k_base pattern cuts it:
//
//	[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?
//	|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?
//	|\p{N}{1,3}
//	| ?[^\s\p{L}\p{N}]+[\r\n/]*
//	|\s*[\r\n]+
//	|\s+(?!\S)
//	|\s+
//
// A backtracking engine tries the alternatives in order at each position
// and takes the first that matches, each quantifier greedy; the code below
// does the same with the backtracking written out (see the comments per
// alternative). A tokenizer encodes each piece on its own, so a text's
// token count is the sum of its pieces' counts. It returns false, and
// cuts nothing, for text that is not valid UTF-8 (the callers first make it
// valid as the codec does, see validUTF8).
func split(text string, piece func(string)) bool {
	if isASCII(text) {
		// One byte per rune: the matcher runs on the bytes themselves,
		// indexes are byte offsets (the same code as for runes, see unit).
		splitUnits(text, asBytes(text), func(p string, _, _ int) { piece(p) }, false)
		return true
	}
	if !utf8.ValidString(text) {
		return false
	}
	splitUnits(text, []rune(text), func(p string, _, _ int) { piece(p) }, false)
	return true
}

// unit is what the matcher reads: the runes of a text, or the bytes of an
// ASCII text, where each byte is the rune of the same value. The
// character classes take runes, so both are matched by the same code.
type unit interface{ ~byte | ~rune }

// isASCII reports whether every byte of s is below utf8.RuneSelf, eight
// bytes at a time.
func isASCII(s string) bool {
	b := asBytes(s)
	i := 0
	for ; i+8 <= len(b); i += 8 {
		if binary.LittleEndian.Uint64(b[i:i+8])&0x8080808080808080 != 0 {
			return false
		}
	}
	for ; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// asBytes is s's bytes, read only.
func asBytes(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// unitLen is the UTF-8 length of u (1 for a byte of an ASCII text).
func unitLen[U unit](u U) int {
	if rune(u) < utf8.RuneSelf {
		return 1
	}
	return utf8.RuneLen(rune(u))
}

// splitUnits cuts text, whose units are rs, into its pieces; with reach it
// also works out each piece's reach (see splitReach), else reach is 0.
func splitUnits[U unit](text string, rs []U, piece func(p string, end, reach int), reach bool) {
	if b, ok := any(rs).([]byte); ok {
		splitBytes(text, b, piece, reach)
		return
	}
	n := len(rs)
	at := 0 // the byte offset of rs[i] in text (valid UTF-8: each rune's own length)
	for i := 0; i < n; {
		e := matchAt(rs, i)
		if e == i {
			at += unitLen(rs[i])
			i++ // no piece starts here: the engine moves on, the rune is not encoded
			continue
		}
		end := at
		for _, r := range rs[i:e] {
			end += unitLen(r)
		}
		rb := 0
		if reach {
			r := readTo(rs, i, e)
			rb = end
			if r > n {
				rb = len(text) + 1
			} else {
				for _, x := range rs[e:r] {
					rb += unitLen(x)
				}
			}
		}
		piece(text[at:end], end, rb)
		at, i = end, e
	}
}

// splitBytes is splitUnits for the bytes of an ASCII text: a unit is a
// byte, so its index is its offset and no length is summed, and the
// pieces are matched by matchASCII.
func splitBytes(text string, b []byte, piece func(p string, end, reach int), reach bool) {
	n := len(b)
	for i := 0; i < n; {
		e := matchASCII(b, i)
		if e == i {
			i++ // no piece starts here (see splitUnits)
			continue
		}
		rb := 0
		if reach {
			rb = min(readTo(b, i, e), n+1)
		}
		piece(text[i:e], e, rb)
		i = e
	}
}

// matchAt returns the end of the piece that starts at i, or i when none
// does.
func matchAt[U unit](rs []U, i int) int {
	if e, ok := letters(rs, i, true); ok {
		return e
	}
	if e, ok := letters(rs, i, false); ok {
		return e
	}
	if isNumber(rune(rs[i])) { // \p{N}{1,3}
		e := i + 1
		for e < len(rs) && e-i < 3 && isNumber(rune(rs[e])) {
			e++
		}
		return e
	}
	if e, ok := punctuation(rs, i); ok {
		return e
	}
	if !isSpace(rune(rs[i])) {
		return i // only U+007F: see isPrefix
	}
	k := i // the whitespace run [i, k)
	for k < len(rs) && isSpace(rune(rs[k])) {
		k++
	}
	// \s*[\r\n]+ as the codec's engine runs it: the match ends after the
	// first line break of the run and the line breaks right after it (the
	// engine's compiled loop stops \s* at the first [\r\n], as a lazy
	// loop would; a test holds this against the engine).
	for m := i; m < k; m++ {
		if rs[m] == '\r' || rs[m] == '\n' {
			e := m + 1
			for e < k && (rs[e] == '\r' || rs[e] == '\n') {
				e++
			}
			return e
		}
	}
	// \s+(?!\S): the whole run at the end of the text, else all but its
	// last rune (which then starts the next piece), if that leaves one.
	if k == len(rs) {
		return k
	}
	if k-1 > i {
		return k - 1
	}
	return k // \s+
}

// Classes of ASCII bytes, as the class functions below tell them apart
// (asciiClass holds what they say of each ASCII byte).
const (
	aUpper  = 1 << iota // isUpperish
	aLower              // isLowerish
	aDigit              // isNumber
	aPunct              // isPunct
	aPrefix             // isPrefix
	aSpace              // isSpace
)

// asciiClass has an entry for every byte so that a lookup by byte needs
// no bounds check; the bytes from utf8.RuneSelf on are in no class (the
// ASCII matcher never reads one). It is a literal, so nothing builds it
// at start-up; TestASCIIClassTable checks it against the class functions.
var asciiClass = [256]uint8{
	pp, pp, pp, pp, pp, pp, pp, pp, pp, sp, ws, sp, sp, ws, pp, pp, // 0x00–0x0f
	pp, pp, pp, pp, pp, pp, pp, pp, pp, pp, pp, pp, pp, pp, pp, pp, // 0x10–0x1f
	sp, pp, pp, pp, pp, pp, pp, pp, pp, pp, pp, pp, pp, pp, pp, pp, // 0x20–0x2f
	dg, dg, dg, dg, dg, dg, dg, dg, dg, dg, pp, pp, pp, pp, pp, pp, // 0x30–0x3f
	pp, up, up, up, up, up, up, up, up, up, up, up, up, up, up, up, // 0x40–0x4f
	up, up, up, up, up, up, up, up, up, up, up, pp, pp, pp, pp, pp, // 0x50–0x5f
	pp, lo, lo, lo, lo, lo, lo, lo, lo, lo, lo, lo, lo, lo, lo, lo, // 0x60–0x6f
	lo, lo, lo, lo, lo, lo, lo, lo, lo, lo, lo, pp, pp, pp, pp, no, // 0x70–0x7f
}

// The entries of asciiClass, named for its rows.
const (
	no = 0
	up = aUpper
	lo = aLower
	dg = aDigit
	pp = aPunct | aPrefix
	sp = aSpace | aPrefix
	ws = aSpace
)

// matchASCII is matchAt for the bytes of an ASCII text, with the classes
// looked up in asciiClass. Upper- and lower-ish are disjoint in ASCII, so
// a letter run is its capitals and then its small letters (the first
// alternative when small letters follow, else the second), after an
// optional prefix byte when a letter follows it. Whitespace (and DEL)
// goes to matchAt.
func matchASCII(b []byte, i int) int {
	n := len(b)
	c := asciiClass[b[i]]
	j := i
	if c&aPrefix != 0 && i+1 < n && asciiClass[b[i+1]]&(aUpper|aLower) != 0 {
		j = i + 1
	}
	if asciiClass[b[j]]&(aUpper|aLower) != 0 {
		e := j
		for e < n && asciiClass[b[e]]&aUpper != 0 {
			e++
		}
		for e < n && asciiClass[b[e]]&aLower != 0 {
			e++
		}
		return contractionASCII(b, e)
	}
	if c&aDigit != 0 { // \p{N}{1,3}
		e := i + 1
		for e < n && e-i < 3 && asciiClass[b[e]]&aDigit != 0 {
			e++
		}
		return e
	}
	if b[i] == ' ' && i+1 < n && asciiClass[b[i+1]]&aPunct != 0 {
		j = i + 1
	}
	if asciiClass[b[j]]&aPunct != 0 { // ` ?[^\s\p{L}\p{N}]+[\r\n/]*`
		e := j + 1
		for e < n && asciiClass[b[e]]&aPunct != 0 {
			e++
		}
		for e < n && (b[e] == '\r' || b[e] == '\n' || b[e] == '/') {
			e++
		}
		return e
	}
	return matchAt(b, i)
}

// contractionASCII is contraction on ASCII bytes: a byte folds to an
// ASCII letter only as its other case.
func contractionASCII(b []byte, e int) int {
	if e >= len(b) || b[e] != '\'' {
		return e
	}
	for _, c := range contractions {
		if e+1+len(c) > len(b) {
			continue
		}
		ok := true
		for k := 0; k < len(c); k++ {
			if b[e+1+k]|0x20 != c[k] {
				ok = false
				break
			}
		}
		if ok {
			return e + 1 + len(c)
		}
	}
	return e
}

// letters matches the first (lowerRun) or second letter alternative:
//
//	P? U* L+ C?   (first)     P? U+ L* C?   (second)
//
// with P = [^\r\n\p{L}\p{N}], U = [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}],
// L = [\p{Ll}\p{Lm}\p{Lo}\p{M}] and C the contractions. P? is tried
// consuming first; in the first form U* gives back runes one at a time
// until L+ can start (runes in both classes serve either).
func letters[U unit](rs []U, i int, lowerRun bool) (int, bool) {
	n := len(rs)
	starts := []int{i}
	if isPrefix(rune(rs[i])) {
		starts = []int{i + 1, i}
	}
	for _, j := range starts {
		k := j
		for k < n && isUpperish(rune(rs[k])) {
			k++
		}
		if lowerRun {
			for u := k; u >= j; u-- {
				if u < n && isLowerish(rune(rs[u])) {
					e := u + 1
					for e < n && isLowerish(rune(rs[e])) {
						e++
					}
					return contraction(rs, e), true
				}
			}
			continue
		}
		if k == j {
			continue // U+ needs one
		}
		e := k
		for e < n && isLowerish(rune(rs[e])) {
			e++
		}
		return contraction(rs, e), true
	}
	return 0, false
}

// contractions in the pattern's order: the first that matches is taken.
var contractions = [...]string{"s", "t", "re", "ve", "m", "ll", "d"}

// contraction extends a letter match at e by (?i:'s|'t|'re|'ve|'m|'ll|'d).
func contraction[U unit](rs []U, e int) int {
	if e >= len(rs) || rs[e] != '\'' {
		return e
	}
	for _, c := range contractions {
		if e+1+len(c) > len(rs) {
			continue
		}
		ok := true
		for k := 0; k < len(c); k++ {
			if !foldsTo(rune(rs[e+1+k]), rune(c[k])) {
				ok = false
				break
			}
		}
		if ok {
			return e + 1 + len(c)
		}
	}
	return e
}

// foldsTo reports whether r equals the ASCII letter c under simple case
// folding ((?i) matches 'ſ' for 's').
func foldsTo(r, c rune) bool {
	for f := c; ; {
		if f == r {
			return true
		}
		if f = unicode.SimpleFold(f); f == c {
			return false
		}
	}
}

// punctuation matches ` ?[^\s\p{L}\p{N}]+[\r\n/]*`; the optional space is
// tried consumed first.
func punctuation[U unit](rs []U, i int) (int, bool) {
	starts := []int{i}
	if rs[i] == ' ' {
		starts = []int{i + 1, i}
	}
	for _, j := range starts {
		if j >= len(rs) || !isPunct(rune(rs[j])) {
			continue
		}
		e := j + 1
		for e < len(rs) && isPunct(rune(rs[e])) {
			e++
		}
		for e < len(rs) && (rs[e] == '\r' || rs[e] == '\n' || rs[e] == '/') {
			e++
		}
		return e, true
	}
	return 0, false
}

// Character classes, with an ASCII fast path; the table lookups are
// functions of their own so that the ASCII test inlines.

func isLetter(r rune) bool {
	if r < utf8.RuneSelf {
		c := r | 0x20 // A-Z to a-z; no other ASCII rune lands there
		return 'a' <= c && c <= 'z'
	}
	return isLetterTable(r)
}

//go:noinline
func isLetterTable(r rune) bool { return unicode.IsLetter(r) }

func isNumber(r rune) bool {
	if r < utf8.RuneSelf {
		return '0' <= r && r <= '9'
	}
	return isNumberTable(r)
}

//go:noinline
func isNumberTable(r rune) bool { return unicode.IsNumber(r) }

// isSpace is \s: [\f\n\r\t\v\x85\p{Z}].
func isSpace(r rune) bool {
	if r < utf8.RuneSelf {
		return r == ' ' || '\t' <= r && r <= '\r' // \t \n \v \f \r
	}
	return isSpaceTable(r)
}

//go:noinline
func isSpaceTable(r rune) bool { return r == 0x85 || unicode.Is(unicode.Z, r) }

// isPrefix is [^\r\n\p{L}\p{N}]. The codec's engine (regexp2) leaves
// U+007F (DEL) out of both negated classes, so DEL starts no piece and is
// not encoded at all; it is matched the same way here, or counts would
// differ from the codec's.
func isPrefix(r rune) bool {
	return r != '\r' && r != '\n' && r != 0x7f && !isLetter(r) && !isNumber(r)
}

// isPunct is [^\s\p{L}\p{N}] (without DEL, as isPrefix).
func isPunct(r rune) bool { return r != 0x7f && !isSpace(r) && !isLetter(r) && !isNumber(r) }

// isUpperish is [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}].
func isUpperish(r rune) bool {
	if r < utf8.RuneSelf {
		return 'A' <= r && r <= 'Z'
	}
	return isUpperishTable(r)
}

//go:noinline
func isUpperishTable(r rune) bool {
	return unicode.In(r, unicode.Lu, unicode.Lt, unicode.Lm, unicode.Lo, unicode.M)
}

// isLowerish is [\p{Ll}\p{Lm}\p{Lo}\p{M}].
func isLowerish(r rune) bool {
	if r < utf8.RuneSelf {
		return 'a' <= r && r <= 'z'
	}
	return isLowerishTable(r)
}

//go:noinline
func isLowerishTable(r rune) bool {
	return unicode.In(r, unicode.Ll, unicode.Lm, unicode.Lo, unicode.M)
}

// splitReach is split that also reports, for each piece, the byte offset
// in text up to which another text must agree with this one for the
// matcher to cut that piece the same way: the pattern has no look-behind,
// so a text sharing text[:reach] is cut into the same pieces up to end.
// A reach of len(text)+1 means the piece's cut depended on where the
// text ends.
func splitReach(text string, piece func(p string, end, reach int)) bool {
	if isASCII(text) {
		splitUnits(text, asBytes(text), piece, true)
		return true
	}
	if !utf8.ValidString(text) {
		return false
	}
	splitUnits(text, []rune(text), piece, true)
	return true
}

// readTo bounds the runes matchAt reads to cut the piece [i, e): the
// index one past the last rune it may look at (len(rs)+1 when it may look
// at the end of the text). Per alternative (see matchAt): a letter match
// scans the run of upper-ish runes from i or i+1 (the first form may give
// most of it back) and looks up to three runes past its end for a
// contraction; a number, punctuation or letter match reads the rune after
// its end; a whitespace match scans the whole whitespace run and the rune
// after it.
func readTo[U unit](rs []U, i, e int) int {
	if b, ok := any(rs).([]byte); ok {
		return readToASCII(b, i, e)
	}
	n := len(rs)
	r := e + 4
	if c := rs[i]; c < utf8.RuneSelf && !(c >= 'A' && c <= 'Z') && !isSpace(rune(c)) &&
		(i+1 >= n || rs[i+1] < utf8.RuneSelf && !(rs[i+1] >= 'A' && rs[i+1] <= 'Z')) {
		// ASCII, no capital at i or i+1, no whitespace: no upper-ish run
		// to scan and no whitespace run, so only the contraction's look.
		return min(r, n+1)
	}
	upper := func(j int) int {
		for j < n && isUpperish(rune(rs[j])) {
			j++
		}
		return j
	}
	r = max(r, upper(i)+1)
	if isPrefix(rune(rs[i])) {
		r = max(r, upper(i+1)+1)
	}
	if isSpace(rune(rs[i])) {
		k := i
		for k < n && isSpace(rune(rs[k])) {
			k++
		}
		r = max(r, k+1)
	}
	return min(r, n+1)
}

// readToASCII is readTo on the bytes of an ASCII text, with the classes
// looked up in asciiClass: an upper-ish run is scanned from i when rs[i]
// is a capital, from i+1 when it is a prefix byte (upper(i) is then i,
// below e+4), and the whitespace run from i when rs[i] is whitespace.
func readToASCII(b []byte, i, e int) int {
	n := len(b)
	r := e + 4
	c := asciiClass[b[i]]
	if c&(aUpper|aPrefix) != 0 {
		j := i
		if c&aPrefix != 0 {
			j = i + 1
		}
		for j < n && asciiClass[b[j]]&aUpper != 0 {
			j++
		}
		r = max(r, j+1)
	}
	if c&aSpace != 0 {
		k := i + 1
		for k < n && asciiClass[b[k]]&aSpace != 0 {
			k++
		}
		r = max(r, k+1)
	}
	return min(r, n+1)
}
