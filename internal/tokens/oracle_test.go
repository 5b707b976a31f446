package tokens

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/tiktoken-go/tokenizer"

	"github.com/agent-interop/runtime/internal/tokens/bpe"
)

// The oracle is tiktoken-go's o200k_base codec, whose vocabulary the rank
// table is generated from: every count and encoding here is held to it.
var (
	oracleOnce  sync.Once
	oracleCodec tokenizer.Codec
	oracleErr   error
)

func oracle(t testing.TB) tokenizer.Codec {
	t.Helper()
	oracleOnce.Do(func() { oracleCodec, oracleErr = tokenizer.Get(tokenizer.O200kBase) })
	if oracleErr != nil {
		t.Fatal(oracleErr)
	}
	return oracleCodec
}

// exact counts text with the codec alone (the reference Count is checked
// against).
func exact(t testing.TB, text string) int {
	t.Helper()
	n, err := oracle(t).Count(text)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// ourEncoding is text's ranks as Count reaches them: cut into pieces, each
// byte-pair encoded over the embedded table.
func ourEncoding(t testing.TB, text string) []uint {
	t.Helper()
	table, err := openO200k()
	if err != nil {
		t.Fatal(err)
	}
	var s bpe.Scratch
	var out []uint
	split(validUTF8(text), func(p string) {
		for _, r := range table.Encode(nil, p, &s) {
			out = append(out, uint(r))
		}
	})
	return out
}

// checkText holds Count and the encoding of text to the codec's.
func checkText(t *testing.T, o *O200k, text string) {
	t.Helper()
	want, _, err := oracle(t).Encode(text)
	if err != nil {
		t.Fatal(err)
	}
	if got := ourEncoding(t, text); !slices.Equal(got, want) {
		t.Fatalf("encoding of %q:\n got  %v\n want %v", text, got, want)
	}
	got, err := o.Count(text)
	if err != nil {
		t.Fatal(err)
	}
	if got != len(want) {
		t.Fatalf("Count(%q) = %d, the codec counts %d", text, got, len(want))
	}
}

// TestTableIsTheGenerated checks the embedded table against the checksum
// the generator wrote next to it (load checks only its length).
func TestTableIsTheGenerated(t *testing.T) {
	if len(o200kTable) != o200kLen {
		t.Fatalf("o200k.bin is %d bytes, want %d", len(o200kTable), o200kLen)
	}
	sum := sha256.Sum256([]byte(o200kTable))
	if got := hex.EncodeToString(sum[:]); got != o200kSHA256 {
		t.Fatalf("o200k.bin's SHA-256 is %s, the generator's %s; run go run ./cmd/interopgen generate", got, o200kSHA256)
	}
}

// TestEveryTokenIsItsOwnRank: every rank's bytes are the codec's, are
// found at that rank, encode to that rank alone, and count as the codec
// counts them as a text of their own.
func TestEveryTokenIsItsOwnRank(t *testing.T) {
	codec := oracle(t)
	table, err := openO200k()
	if err != nil {
		t.Fatal(err)
	}
	o := NewO200k()
	var s bpe.Scratch
	for r := range table.Len() {
		tok := table.Token(r)
		want, err := codec.Decode([]uint{uint(r)})
		if err != nil || tok != want {
			t.Fatalf("rank %d: table %q, codec %q (%v)", r, tok, want, err)
		}
		if got, ok := table.Rank(tok); !ok || int(got) != r {
			t.Fatalf("Rank(%q) = %d, %v; want %d", tok, got, ok, r)
		}
		if got := table.Encode(nil, tok, &s); len(got) != 1 || int(got[0]) != r {
			t.Fatalf("Encode(%q) = %v, want [%d]", tok, got, r)
		}
		if got, want := mustCount(t, o, tok), exact(t, tok); got != want {
			t.Fatalf("Count(%q) = %d, the codec counts %d", tok, got, want)
		}
	}
	if _, err := codec.Decode([]uint{uint(table.Len())}); err == nil {
		t.Fatalf("the codec decodes rank %d, past the table", table.Len())
	}
}

func mustCount(t testing.TB, o *O200k, text string) int {
	t.Helper()
	n, err := o.Count(text)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestCountIsExact holds Count and the encoding to the codec on texts of
// every kind: words and JSON, long runs of one character (pieces long
// enough for the heap merge), digits, whitespace and line breaks,
// emoji and CJK, invalid UTF-8, and random texts (seeded).
func TestCountIsExact(t *testing.T) {
	o := NewO200k()
	cases := []string{
		"", " ", "a", "hello world", "Hello, World!", "don't DON'T we're", "\n", "\r\n", "\t\t\n  \n",
		"12345678901234567890", "3.14159 2,718 1e10 0x1F", "٣٤٥ ½ Ⅻ",
		"日本語のテキストです。", "中文文本，标点。", "한국어 텍스트", "Ελληνικά κείμενο", "русский текст", "עברית", "العربية",
		"🙂🙃😀 👍🏽 👨‍👩‍👧‍👦 🇫🇷", "e\u0301\u0302", "\u200b\u200d\ufeff", "\x00\x01\x7f",
		"ok \xff\xfe bytes", "\xe2\x82", "\xe2\x82\xac\xe2", "a\x80b\xc0\xafc", "\xf0\x9f\x99", "\xed\xa0\x80", string([]byte{0xff}),
		`{"id":"work_1767323045678_07ojtu","status":"open","evidenceIds":[],"n":12345,"f":-1.5e10}`,
	}
	for _, c := range []string{"a", "A", " ", "\n", "\t", "0", "!", "é", "日", "🙂", "ab", " a", "\r\n", " \n", "\xff", "=-", "ー"} {
		for _, n := range []int{95, 96, 97, 200, 1000, 5000} {
			cases = append(cases, strings.Repeat(c, n))
		}
	}
	for _, c := range cases {
		checkText(t, o, c)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	ascii := func() string {
		b := make([]byte, rng.IntN(300))
		for i := range b {
			b[i] = byte(rng.IntN(128))
		}
		return string(b)
	}
	unicode := func() string {
		var b strings.Builder
		for range rng.IntN(120) {
			switch rng.IntN(4) {
			case 0:
				b.WriteByte(byte(32 + rng.IntN(95)))
			case 1:
				b.WriteRune(rune(0x80 + rng.IntN(0x800-0x80)))
			case 2:
				b.WriteRune(rune(0x3000 + rng.IntN(0x7000)))
			default:
				b.WriteRune(rune(0x1F300 + rng.IntN(0x300)))
			}
		}
		return b.String()
	}
	words := []string{"work", "item", "Import", "don't", "the", " ", "  ", "\n", "\n\n", " \n", "\t", "{\"id\":\"", "\",\"", "\":", "[", "]}",
		"12345", "0.5", "é", "日本", "!!", "🙂", "ÉCOLE", "\u0301", "\\n", "\\\"", "https://example.com/a/b?c=d", "snake_case", "camelCase"}
	jsonish := func() string {
		var b strings.Builder
		for range rng.IntN(200) {
			b.WriteString(words[rng.IntN(len(words))])
		}
		return b.String()
	}
	invalid := func() string {
		b := []byte(jsonish())
		for range 1 + rng.IntN(4) {
			if len(b) > 0 {
				b[rng.IntN(len(b))] = byte(0x80 + rng.IntN(0x80))
			}
		}
		return string(b)
	}
	// Long pieces (the heap merge, from 96 bytes): runs of letters, of
	// CJK, of punctuation, and base64-like cursors.
	long := func() string {
		alphabets := []string{"abcdefghijklmnopqrstuvwxyz", "etaoinshrdlu", "ABCDEFGHIJabcdefghij", "日本語中文字", "!#$%&()*+-./:;<=>?@[]^_{|}~", "ぁあぃいぅうぇえ"}
		a := []rune(alphabets[rng.IntN(len(alphabets))])
		var b strings.Builder
		for range 40 + rng.IntN(400) {
			b.WriteRune(a[rng.IntN(len(a))])
		}
		return b.String()
	}
	n := 500 // 2,500 texts; the unit tier runs this under -race
	if testing.Short() {
		n = 150
	}
	for range n {
		for _, gen := range []func() string{ascii, unicode, jsonish, invalid, long} {
			checkText(t, o, gen())
		}
	}
}

// TestCountIsExactOnTheCatalog counts the catalogs' tools/list texts (as
// generated, and compacted as served).
func TestCountIsExactOnTheCatalog(t *testing.T) {
	paths, err := filepath.Glob("../../catalogs/snapshots/*.json")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no tools/list snapshots: %v", err)
	}
	o := NewO200k()
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, b); err != nil {
			t.Fatal(err)
		}
		checkText(t, o, string(b))
		checkText(t, o, compact.String())
	}
}

// TestInvalidUTF8CountsAsReplacements pins what the codec does with
// invalid UTF-8 (its default error mode): each byte that is not part of a
// valid sequence is read as one U+FFFD.
func TestInvalidUTF8CountsAsReplacements(t *testing.T) {
	if oracle(t).ErrorMode() != tokenizer.ErrorModeNone {
		t.Fatalf("the codec's default error mode is %v, not ErrorModeNone", oracle(t).ErrorMode())
	}
	for _, c := range []struct{ bad, asRead string }{
		{"a\xffb", "a\ufffdb"},
		{"\xe2\x82 x", "\ufffd\ufffd x"}, // a cut sequence: one per byte
		{"\xed\xa0\x80", "\ufffd\ufffd\ufffd"},
	} {
		if got := validUTF8(c.bad); got != c.asRead {
			t.Errorf("validUTF8(%q) = %q, want %q", c.bad, got, c.asRead)
		}
		if exact(t, c.bad) != exact(t, c.asRead) || !utf8.ValidString(validUTF8(c.bad)) {
			t.Errorf("the codec counts %q as %d, %q as %d", c.bad, exact(t, c.bad), c.asRead, exact(t, c.asRead))
		}
	}
}
