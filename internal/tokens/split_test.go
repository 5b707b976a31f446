package tokens

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/dlclark/regexp2/v2"
)

// o200kPattern is the pre-tokenizer of tiktoken-go's o200k_base codec,
// verbatim (codec/o200k_base.go).
const o200kPattern = `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`

var pattern = regexp2.MustCompile(o200kPattern, regexp2.None)

// referencePieces cuts text with the pattern itself.
func referencePieces(t testing.TB, text string) []string {
	var out []string
	m, err := pattern.FindStringMatch(text)
	for m != nil && err == nil {
		out = append(out, m.String())
		m, err = pattern.FindNextMatch(m)
	}
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func ourPieces(text string) []string {
	var out []string
	split(text, func(p string) { out = append(out, p) })
	return out
}

func samePieces(t testing.TB, text string) {
	t.Helper()
	want, got := referencePieces(t, text), ourPieces(text)
	if strings.Join(want, "\x00") != strings.Join(got, "\x00") {
		t.Errorf("pieces of %q:\n got  %q\n want %q", text, got, want)
	}
}

func TestSplitMatchesThePattern(t *testing.T) {
	cases := []string{
		"", "a", "A", "Hello World", "HELLO world", "HelloWorld", "iPhone", "McDonald's", "DON'T", "we're", "they'VE",
		"it'S", "I'm", "you'll", "he'd", "'s", "x'", "x'q", "ſ'ſ", "don'ſ",
		`{"id":"work_1767323045678_07ojtu","status":"open","evidenceIds":[],"n":12345,"f":-1.5e10}`,
		"  leading", "trailing  ", "a  b", "a\tb", "a \n b", "a\r\nb", "\n\n\n", " \n \n x", "\t\n\tx", "x \n",
		"1", "12", "123", "1234", "12345678", "٣٤٥٦", "Ⅻ", "½¼", "x1y22z333",
		"!!", " !!", "  !!", "a/b", "!\n/", ",/\r\n", "...\n\n", " {\n", "'", "''", "\"quoted\"",
		"naïve café", "ÉCOLE", "Straße", "日本語のテキスト", "한국어 텍스트", "Ǆungla ǅ", "ʰʲ", "x\u0301y", "\u0301\u0302",
		"e\u0301", "\u00a0nbsp\u00a0", "a\u2028b\u2029c", "\u3000全角", "\u0085nel", "\v\f", "emoji 🙂🙂 ok", "👍🏽",
		"line1\nline2\r\nline3\rline4", "   \n", "x\n   ", "tab\t\t\tend", "mixed \t \n\t y",
		strings.Repeat("a", 1000), strings.Repeat(" ", 50) + "x", strings.Repeat("é", 100),
		"\x7f", "!!\x7f!!", "a \x7f b", "\x7f\n", "\n\v\v\n", " \r\n \n x",
	}
	for _, c := range cases {
		samePieces(t, c)
	}
}

// TestSplitMatchesThePatternOnRandomText cuts random mixtures of every
// character class the pattern distinguishes, and real answer JSON.
func TestSplitMatchesThePatternOnRandomText(t *testing.T) {
	alphabet := []string{"a", "z", "A", "Z", "é", "É", "ß", "ǅ", "ʰ", "中", "\u0301", "0", "9", "٣", "½", "Ⅻ",
		" ", " ", "\t", "\n", "\r", "\v", "\u00a0", "\u2028", "\u3000", "\u0085", "'", "s", "S", "t", "re", "VE", "m", "ll", "d",
		"!", "/", "{", "}", "\"", ":", ",", "-", "_", ".", "🙂", "\u200b", "\x00", "\x1f", "\x7f"}
	rng := rand.New(rand.NewPCG(11, 12))
	for range 20000 {
		var b strings.Builder
		for range 1 + rng.IntN(40) {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		samePieces(t, b.String())
	}
	doc, _ := json.Marshal(map[string]any{"works": []map[string]any{{"id": "work_1", "objectivePreview": "Make the importer idempotent; don't drop rows.\nThen: ship it!", "n": 42}}})
	samePieces(t, string(doc))
}

func FuzzSplitMatchesThePattern(f *testing.F) {
	for _, s := range []string{"Hello World's", " \n x", "{\"a\":1}", "日本 語", "e\u0301x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !strings.ContainsRune(s, '\ufffd') && utf8Valid(s) {
			samePieces(t, s)
		}
	})
}

func utf8Valid(s string) bool { return strings.ToValidUTF8(s, "\ufffd") == s }

// BenchmarkCount compares the cached piecewise count, the same on a new
// counter (every piece encoded) and the codec's on a 26 KB answer (a page of 100 work previews).
func BenchmarkCount(b *testing.B) {
	var works []map[string]any
	for i := range 100 {
		works = append(works, map[string]any{"id": "work_seed_00" + string(rune('0'+i%10)), "status": "open",
			"objectivePreview": strings.Repeat("Make the importer idempotent and cover it with tests. ", 3),
			"createdAt":        "2026-01-02T03:04:05.678Z", "evidenceIds": []string{"evidence_seed_0001"}, "changedFiles": []string{"src/importer.go"}})
	}
	doc, _ := json.Marshal(map[string]any{"works": works})
	text := string(doc)
	o := NewO200k()
	if _, err := o.Count(text); err != nil {
		b.Fatal(err)
	}
	b.Run("cached pieces", func(b *testing.B) {
		b.SetBytes(int64(len(text)))
		for b.Loop() {
			_, _ = o.Count(text)
		}
	})
	b.Run("uncached", func(b *testing.B) {
		b.SetBytes(int64(len(text)))
		for b.Loop() {
			_, _ = NewO200k().Count(text)
		}
	})
	b.Run("tally", func(b *testing.B) {
		b.SetBytes(int64(len(text)))
		for b.Loop() {
			_, _ = o.Tally(text)
		}
	})
	b.Run("codec", func(b *testing.B) {
		b.SetBytes(int64(len(text)))
		for b.Loop() {
			_ = exact(b, text)
		}
	})
}

// TestASCIIBytesCutAsRunes holds the matcher run on the bytes of an ASCII
// text (split's fast path) to the same matcher run on its runes: the same
// pieces, ends and reaches, on random ASCII texts of every class the
// matcher tells apart and on a page of answer JSON; the pieces also match
// the pattern.
func TestASCIIBytesCutAsRunes(t *testing.T) {
	alphabet := []string{"a", "z", "A", "Z", "0", "9", "123", " ", "  ", "\t", "\n", "\r", "\v", "\f", "'", "s", "S", "t", "T",
		"re", "RE", "ve", "m", "ll", "LL", "d", "D", "!", "/", "{", "}", "\"", ":", ",", "-", "_", ".", "\x00", "\x1f", "\x7f"}
	type cut struct {
		p          string
		end, reach int
	}
	cuts := func(text string, bytes bool) []cut {
		var out []cut
		f := func(p string, end, reach int) { out = append(out, cut{p, end, reach}) }
		if bytes {
			splitUnits(text, asBytes(text), f, true)
		} else {
			splitUnits(text, []rune(text), f, true)
		}
		return out
	}
	rng := rand.New(rand.NewPCG(21, 22))
	texts := []string{`{"works":[{"id":"work_1767323045678_07ojtu","status":"open","objectivePreview":"Don't drop rows; it's OK?\n\n  Ship   it!"}]}`}
	for range 20000 {
		var b strings.Builder
		for range 1 + rng.IntN(40) {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		texts = append(texts, b.String())
	}
	for i, text := range texts {
		if !isASCII(text) {
			t.Fatalf("%q is not ASCII", text)
		}
		got, want := cuts(text, true), cuts(text, false)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("%q: the bytes cut as %v, the runes as %v", text, got, want)
		}
		if i%10 == 0 {
			samePieces(t, text)
		}
	}
}
