package tokens

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agent-interop/runtime/internal/tokens/bpe"
)

// referenceTally is what sumASCII must give for text: the pieces and
// reaches of splitBytes (the matcher the rune path is held to, see
// TestASCIIBytesCutAsRunes), each counted by pieceCount, and the marks
// Tally makes from them.
func referenceTally(o *O200k, text string) (ends []int, total int, marks []mark) {
	safe, last := 0, 0
	splitBytes(text, asBytes(text), func(p string, end, reach int) {
		ends = append(ends, end)
		total += o.pieceCount(p)
		safe = max(safe, reach)
		if end-last >= markEvery {
			marks = append(marks, mark{end: end, safe: safe, tokens: total})
			last = end
		}
	}, true)
	return ends, total, marks
}

// checkSumASCII holds sumASCII on text to referenceTally: the same piece
// ends, the same count (with and without a tally) and the same marks.
func checkSumASCII(t testing.TB, o *O200k, text string) {
	t.Helper()
	o.mu.Lock()
	defer o.mu.Unlock()
	wantEnds, want, wantMarks := referenceTally(o, text)
	var ends []int
	tl := &Tally{text: text}
	got := o.sumASCII(text, tl, &ends)
	if !slices.Equal(ends, wantEnds) {
		t.Fatalf("%q: pieces end at %v, splitBytes cuts them at %v", text, ends, wantEnds)
	}
	if got != want || !slices.Equal(tl.marks, wantMarks) {
		t.Fatalf("%q: count %d, marks %v; want %d, %v", text, got, tl.marks, want, wantMarks)
	}
	if n := o.sumASCII(text, nil, nil); n != want {
		t.Fatalf("%q: count %d without a tally, want %d", text, n, want)
	}
}

// TestSumASCIIIsSplitBytes holds the fused ASCII counter to the matcher
// it writes out (splitBytes, readToASCII, pieceCount), piece by piece, on
// random texts of every class the matcher tells apart, random bytes,
// long runs (marks inside a piece) and pages of answer JSON; some of them
// are also counted by the codec.
func TestSumASCIIIsSplitBytes(t *testing.T) {
	o := NewO200k()
	if err := o.load(); err != nil {
		t.Fatal(err)
	}
	alphabet := []string{"a", "z", "A", "Z", "0", "9", "123", " ", "  ", "\t", "\n", "\r", "\v", "\f", "'", "s", "S", "t", "T",
		"re", "RE", "ve", "m", "ll", "LL", "d", "D", "!", "/", "{", "}", "\"", ":", ",", "-", "_", ".", "\x00", "\x1f", "\x7f",
		"Make", " the", " importer", "\":\"", "\",\"", "2026-12-03T15:39:11.424Z", "work_seed_0099999", "\n\n  ", " \n", "'s", "'LL"}
	rng := rand.New(rand.NewPCG(31, 32))
	var texts []string
	for range 20000 {
		var b strings.Builder
		for range 1 + rng.IntN(60) {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		texts = append(texts, b.String())
	}
	for range 2000 {
		b := make([]byte, 1+rng.IntN(600))
		for i := range b {
			b[i] = byte(rng.IntN(128))
		}
		texts = append(texts, string(b))
	}
	for _, c := range []string{"a", "A", " ", "\n", "\t", "0", "!", "ab", " a", "\r\n", " \n", "aA", "'s"} {
		for _, n := range []int{1, 7, 8, 9, 16, 17, 255, 256, 257, 1000} {
			texts = append(texts, strings.Repeat(c, n))
		}
	}
	var works []map[string]any
	for i := range 100 {
		works = append(works, map[string]any{"id": fmt.Sprintf("work_seed_%07d", 99999-i), "sourceSession": fmt.Sprintf("codex:seed-%d", i%50),
			"status": "in_progress", "changedFiles": []string{"src/importer.go"}, "createdAt": "2026-12-03T15:39:11.424Z",
			"objectivePreview": strings.Repeat("Make the importer idempotent and cover it with tests. ", 3), "acceptanceCriteriaCount": 2})
	}
	page, _ := json.Marshal(map[string]any{"works": works, "nextCursor": "eyJ2IjoxLCJ0IjoibGlzdF93b3JrX2l0ZW1zIn0"})
	indented, _ := json.MarshalIndent(map[string]any{"works": works[:10]}, "", "  ")
	texts = append(texts, "", string(page), string(indented))
	for i, text := range texts {
		if !isASCII(text) {
			t.Fatalf("%q is not ASCII", text)
		}
		checkSumASCII(t, o, text)
		if i%20 == 0 || len(text) > 1000 {
			if got, want := mustCount(t, o, text), exact(t, text); got != want {
				t.Fatalf("Count(%q) = %d, the codec counts %d", text, got, want)
			}
		}
	}
}

// FuzzSumASCIIIsSplitBytes is TestSumASCIIIsSplitBytes on any text, its
// bytes taken modulo 128.
func FuzzSumASCIIIsSplitBytes(f *testing.F) {
	for _, s := range []string{"Hello World's", " \n x", "{\"a\":1}", "  !!\r\n//x", "DON'T 123456", "\x7f\x7f a"} {
		f.Add(s)
	}
	o := NewO200k()
	if err := o.load(); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b := []byte(s)
		for i := range b {
			b[i] &= 0x7f
		}
		checkSumASCII(t, o, string(b))
	})
}

// TestPieceWords holds pieceWords to its definition (the first 8 bytes,
// zero past the end; the last 8 of a longer piece), for every length up
// to 24, and every entry of the front cache to its piece's words after
// counts through sumASCII, which reads them from the text instead: an
// entry of at most 16 bytes is compared by its words alone.
func TestPieceWords(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	word := func(b []byte) (w uint64) {
		for i, c := range b {
			w |= uint64(c) << (8 * i)
		}
		return w
	}
	for n := range 25 {
		for range 200 {
			b := make([]byte, n)
			for i := range b {
				b[i] = byte(rng.IntN(256))
			}
			var w1, w2 uint64
			w1 = word(b[:min(n, 8)])
			if n > 8 {
				w2 = word(b[n-8:])
			}
			if g1, g2 := pieceWords(string(b)); g1 != w1 || g2 != w2 {
				t.Fatalf("pieceWords(%q) = %#x, %#x; want %#x, %#x", b, g1, g2, w1, w2)
			}
		}
	}
	o := NewO200k()
	for _, text := range []string{
		`{"works":[{"id":"work_seed_0099999","objectivePreview":"Make the importer idempotent and cover it with tests."}]}`,
		"abcdefghijklmnopq rstuvwxyzabcdefgh ijklmnopqrstuvwxyzab 12345678 xy", " aa bbb cccc ddddd eeeeee fffffff gggggggg",
		"DON'T we'll  \n\n  tail",
	} {
		mustCount(t, o, text)
		tl, err := o.Tally(text + " more")
		if err != nil || tl.Total() != exact(t, text+" more") {
			t.Fatalf("Tally(%q) = %v, %v", text, tl, err)
		}
	}
	entries := 0
	for _, e := range o.front {
		if e.piece == "" {
			continue
		}
		entries++
		if w1, w2 := pieceWords(e.piece); e.w1 != w1 || e.w2 != w2 {
			t.Fatalf("the entry of %q holds words %#x, %#x; pieceWords %#x, %#x", e.piece, e.w1, e.w2, w1, w2)
		}
		if frontSlot(e.piece) != slotOf(len(e.piece), e.w1, e.w2) {
			t.Fatalf("the entry of %q is not in its slot", e.piece)
		}
	}
	if entries < 20 {
		t.Fatalf("%d front entries, want the texts' pieces", entries)
	}
}

// TestOneBytePieceIsOneToken: pieceCount counts a piece of one byte as 1
// without looking it up; the table encodes every byte so.
func TestOneBytePieceIsOneToken(t *testing.T) {
	table, err := openO200k()
	if err != nil {
		t.Fatal(err)
	}
	var s bpe.Scratch
	for c := range 256 {
		p := string([]byte{byte(c)})
		if n := table.Count(p, &s); n != 1 {
			t.Fatalf("the table counts byte %#x as %d tokens", c, n)
		}
		if c < 128 {
			if n := exact(t, p); n != 1 && c != 0x7f {
				t.Fatalf("the codec counts byte %#x as %d tokens", c, n)
			}
		}
	}
}

// TestASCIIClassTable checks the literal asciiClass against the class
// functions it stands for, byte by byte.
func TestASCIIClassTable(t *testing.T) {
	classes := []struct {
		bit uint8
		in  func(rune) bool
	}{{aUpper, isUpperish}, {aLower, isLowerish}, {aDigit, isNumber}, {aPunct, isPunct}, {aPrefix, isPrefix}, {aSpace, isSpace}}
	for b := range 256 {
		var want uint8
		if b < utf8.RuneSelf {
			for _, c := range classes {
				if c.in(rune(b)) {
					want |= c.bit
				}
			}
		}
		if got := asciiClass[b]; got != want {
			t.Errorf("asciiClass[%#02x] = %06b, the class functions say %06b", b, got, want)
		}
	}
}
