package tokens

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// piecesAt returns text's pieces by end offset, with their reach.
func piecesAt(text string) (ends []int, reach map[int]int, piece map[int]string) {
	reach, piece = map[int]int{}, map[int]string{}
	splitReach(text, func(p string, end, r int) {
		ends = append(ends, end)
		reach[end], piece[end] = r, p
	})
	return ends, reach, piece
}

// TestReachBoundsWhatTheMatcherReads holds splitReach's reach to its
// promise: for random texts a and b that share a prefix, every piece of a
// whose reach (and every earlier piece's) lies within the shared prefix is
// also a piece of b, at the same place. The alphabet mixes the classes the
// matcher backtracks over (runes both upper- and lower-ish, marks, runs of
// capitals, contractions, whitespace runs before line breaks).
func TestReachBoundsWhatTheMatcherReads(t *testing.T) {
	alphabet := []string{"a", "A", "Z", "ª", "ʰ", "中", "\u0301", "é", "É", "ǅ", "0", "9", "½",
		" ", " ", "\t", "\n", "\r", "\u00a0", "'", "s", "S", "re", "VE", "ll", "d", "!", "/", "{", "\"", ",", ":", "\x7f", "🙂"}
	rng := rand.New(rand.NewPCG(5, 6))
	word := func(n int) string {
		var b strings.Builder
		for range n {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		return b.String()
	}
	for range 20000 {
		prefix := word(rng.IntN(30))
		a, b := prefix+word(rng.IntN(12)), prefix+word(rng.IntN(12))
		common := 0
		for common < len(a) && common < len(b) && a[common] == b[common] {
			common++
		}
		endsA, reachA, pieceA := piecesAt(a)
		_, _, pieceB := piecesAt(b)
		safe := 0
		for _, end := range endsA {
			safe = max(safe, reachA[end])
			if safe > common {
				break
			}
			if pieceB[end] != pieceA[end] {
				t.Fatalf("a=%q b=%q: piece ending at %d is %q in a (reach %d, common %d) but %q in b", a, b, end, pieceA[end], reachA[end], common, pieceB[end])
			}
		}
	}
}

// TestCountFromIsCount counts texts that part from a tallied one (random
// texts, and pages of JSON records cut shorter with a new cursor, as the
// answer guard does) with CountFrom and with Count.
func TestCountFromIsCount(t *testing.T) {
	o := NewO200k()
	rng := rand.New(rand.NewPCG(7, 8))
	words := []string{"work", "item", "Import", "don't", "the", " ", "  ", "\n", " \n", "{\"id\":\"", "\",\"", "12345", "é", "日本", "!!", "🙂", "ÉCOLE", "\u0301"}
	text := func(n int) string {
		var b strings.Builder
		for range n {
			b.WriteString(words[rng.IntN(len(words))])
		}
		return b.String()
	}
	check := func(a, b string) {
		t.Helper()
		tl, err := o.Tally(a)
		if err != nil {
			t.Fatal(err)
		}
		if want, _ := o.Count(a); tl.Total() != want {
			t.Fatalf("Tally(%q) = %d, Count %d", a, tl.Total(), want)
		}
		got, err := o.CountFrom(tl, b)
		if err != nil {
			t.Fatal(err)
		}
		if want, _ := o.Count(b); got != want {
			t.Fatalf("CountFrom = %d, Count = %d (a %d bytes, b %d bytes)", got, want, len(a), len(b))
		}
	}
	for range 300 {
		prefix := text(rng.IntN(600))
		check(prefix+text(rng.IntN(50)), prefix+text(rng.IntN(50)))
	}
	type rec struct {
		ID        string   `json:"id"`
		Objective string   `json:"objectivePreview"`
		Deps      []string `json:"dependsOn"`
	}
	type page struct {
		Works      []rec  `json:"works"`
		NextCursor string `json:"nextCursor,omitempty"`
	}
	var p page
	for i := range 100 {
		p.Works = append(p.Works, rec{ID: fmt.Sprintf("work_%d", i), Objective: text(20 + rng.IntN(40)), Deps: []string{fmt.Sprint("work_", i-1)}})
	}
	p.NextCursor = "eyJ2IjoxLCJrIjpbIndvcmtfOTkiXX0"
	full, _ := json.Marshal(p)
	for _, k := range []int{1, 2, 50, 99, 100} {
		cut := p
		cut.Works = p.Works[:k]
		cut.NextCursor = fmt.Sprintf("eyJ2IjoxLCJrIjpbIndvcmtf%dXX0", k)
		b, _ := json.Marshal(cut)
		check(string(full), string(b))
	}
	check(string(full), string(full))
	check(string(full), "")
	check("", string(full))
	check(string(full), "ok \xff\xfe bytes") // invalid UTF-8: counted as a whole
}

// TestFrontSlotSharedByPieces counts pieces that share an entry of the
// front cache in turn (each displacing the other), and the same pieces
// after the map behind it was cleared: every count is the codec's.
func TestFrontSlotSharedByPieces(t *testing.T) {
	o := NewO200k()
	if _, err := o.Count("x"); err != nil {
		t.Fatal(err)
	}
	bySlot := map[int]string{}
	var pairs [][2]string
	for i := 0; len(pairs) < 20 && i < 100000; i++ {
		w := fmt.Sprintf(" w%x", i*7919)
		w = " " + strings.Map(func(r rune) rune { return 'a' + (r % 26) }, w[1:]) // one letter piece
		if other, ok := bySlot[frontSlot(w)]; ok && other != w {
			pairs = append(pairs, [2]string{other, w})
		}
		bySlot[frontSlot(w)] = w
	}
	if len(pairs) == 0 {
		t.Fatal("no pieces share a slot")
	}
	for round := range 3 {
		for _, p := range pairs {
			for _, w := range []string{p[0], p[1], p[0], p[0] + p[1], p[1]} {
				got, err := o.Count(w)
				if err != nil {
					t.Fatal(err)
				}
				if want := exact(t, w); got != want {
					t.Fatalf("round %d: Count(%q) = %d, want %d", round, w, got, want)
				}
			}
		}
		o.mu.Lock()
		clear(o.pieces) // the front keeps its entries; they must stay right
		o.mu.Unlock()
	}
}

// TestPieceCacheStaysBounded counts more distinct pieces than the cache
// keeps: it never holds more than maxCached, and the pieces counted again
// after it was dropped are counted as the codec counts them.
func TestPieceCacheStaysBounded(t *testing.T) {
	o := NewO200k()
	var words []string
	for i := range maxCached + maxCached/2 {
		words = append(words, " "+strings.Map(func(r rune) rune { return 'a' + (r % 26) }, fmt.Sprintf("%x", i*7919)))
	}
	text := strings.Join(words, "")
	got, err := o.Count(text)
	if err != nil {
		t.Fatal(err)
	}
	o.mu.Lock()
	n := len(o.pieces)
	o.mu.Unlock()
	if n > maxCached {
		t.Errorf("the cache holds %d pieces, at most %d", n, maxCached)
	}
	if want := exact(t, text); got != want {
		t.Errorf("Count of %d distinct pieces = %d, want %d", len(words), got, want)
	}
	for _, w := range words[:50] { // dropped with the first fill
		if got, want := mustCount(t, o, w), exact(t, w); got != want {
			t.Errorf("Count(%q) after the drop = %d, want %d", w, got, want)
		}
	}
}
