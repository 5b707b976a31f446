package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agent-interop/runtime/catalogs"
	"github.com/agent-interop/runtime/internal/secrets"
	"github.com/agent-interop/runtime/internal/tokens"
)

// record is one record of a test page.
type record struct {
	ID   int    `json:"id"`
	Text string `json:"text"`
}

// testPage is a cuttable answer whose cursor names the last record kept.
type testPage struct {
	Records    []record `json:"claims"`
	NextCursor string   `json:"nextCursor,omitempty"`
}

func (p testPage) PageLen() int { return len(p.Records) }
func (p testPage) CutPage(n int) any {
	p.Records = p.Records[:n]
	p.NextCursor = fmt.Sprint("after-", p.Records[n-1].ID)
	return p
}

func page(n, textLen int) testPage {
	p := testPage{}
	for i := range n {
		p.Records = append(p.Records, record{ID: i, Text: strings.Repeat("word ", textLen/5)})
	}
	return p
}

// uneven is a page whose records range from a few bytes to kilobytes and
// whose text tokenizes at very different rates.
func uneven(n int) testPage {
	p := testPage{}
	for i := range n {
		text := strings.Repeat("word ", (i*37)%400)
		if i%3 == 0 {
			text = strings.Repeat("\u4e16\u754c", (i*11)%300) // CJK: about a token per character
		}
		p.Records = append(p.Records, record{ID: i, Text: text})
	}
	return p
}

// countingCounter counts tokens with the real codec and how often it ran.
type countingCounter struct {
	inner tokens.Counter
	calls atomic.Int64
}

func (c *countingCounter) Count(s string) (int, error) {
	c.calls.Add(1)
	return c.inner.Count(s)
}

func TestGuardCutsPagesToTheirBudget(t *testing.T) {
	counter := &countingCounter{inner: tokens.NewO200k()}
	g := guard{counter: counter}
	tests := []struct {
		name      string
		page      testPage
		budget    int
		wantCut   bool
		maxCounts int64
		// maxEncodes bounds the shorter pages encoded: encoding with
		// redaction costs about what counting does.
		maxEncodes int
	}{
		{"small page: no tokenizer at all", page(10, 20), 8000, false, 0, 0},
		{"over the byte bound but within tokens", page(40, 200), 8000, false, 1, 0},
		{"over budget", page(100, 400), 8000, true, 2, 2},
		{"far over budget", page(1000, 400), 8000, true, 2, 3},
		{"tight budget", page(100, 400), 500, true, 2, 3},
		{"uneven records", uneven(200), 8000, true, 4, 20},
		{"one record over budget is kept whole", page(1, 50000), 1000, false, 1, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			counter.calls.Store(0)
			body, err := marshal(tt.page)
			if err != nil {
				t.Fatal(err)
			}
			res, err := g.fit(tt.page, body, tt.budget, marshal)
			if err != nil {
				t.Fatal(err)
			}
			if res.cut != tt.wantCut {
				t.Fatalf("cut = %v, want %v", res.cut, tt.wantCut)
			}
			if n := counter.calls.Load(); n > tt.maxCounts {
				t.Fatalf("tokenizer ran %d times, want at most %d", n, tt.maxCounts)
			}
			t.Logf("%d tokenizer runs, %d shorter pages encoded", counter.calls.Load(), res.encoded)
			if res.encoded > tt.maxEncodes {
				t.Fatalf("encoded %d shorter pages, want at most %d", res.encoded, tt.maxEncodes)
			}
			var got testPage
			if err := json.Unmarshal(res.body, &got); err != nil {
				t.Fatal(err)
			}
			if len(got.Records) == 0 {
				t.Fatal("a cut page lost every record")
			}
			for i, r := range got.Records {
				if r != tt.page.Records[i] {
					t.Fatalf("record %d changed: %+v", i, r)
				}
			}
			n, _ := tokens.NewO200k().Count(string(res.body))
			if tt.wantCut {
				if n > tt.budget {
					t.Fatalf("cut page is %d tokens, budget %d", n, tt.budget)
				}
				if got.NextCursor != fmt.Sprint("after-", got.Records[len(got.Records)-1].ID) {
					t.Fatalf("cut page cursor %q does not resume after its last record", got.NextCursor)
				}
				// Cut short, not cut down: one more record would not fit.
				more, _ := marshal(tt.page.CutPage(len(got.Records) + 1))
				if m, _ := tokens.NewO200k().Count(string(more)); m <= tt.budget && wireSize(more) <= MaxAnswerBytes {
					t.Logf("note: one more record (%d tokens) would still fit in %d", m, tt.budget)
				}
				if float64(n) < 0.8*float64(tt.budget) && len(got.Records) > 1 {
					t.Fatalf("page cut to %d records, %d tokens for budget %d: far below the budget", len(got.Records), n, tt.budget)
				}
			} else if string(res.body) != string(body) {
				t.Fatal("a page within budget was changed")
			}
		})
	}
}

// TestGuardKeepsAnswersUnderOneMiB cuts a page of large records by wire
// size, counting the escapes both copies of the answer get.
func TestGuardKeepsAnswersUnderOneMiB(t *testing.T) {
	g := guard{counter: tokens.NewO200k()}
	p := testPage{}
	for i := range 40 {
		// Quotes and HTML characters double or sextuple on the wire.
		p.Records = append(p.Records, record{ID: i, Text: strings.Repeat(`"<&>\`, 10000)})
	}
	body, _ := marshal(p)
	res, err := g.fit(p, body, 8000, marshal)
	if err != nil {
		t.Fatal(err)
	}
	if !res.cut || wireSize(res.body) > MaxAnswerBytes {
		t.Fatalf("cut %v, wire size %d", res.cut, wireSize(res.body))
	}
	// The computed wire size matches what encoding/json writes.
	text, _ := json.Marshal(string(res.body))
	structured, _ := json.Marshal(json.RawMessage(res.body))
	if got, want := wireSize(res.body)-wireOverhead, len(text)+len(structured); got != want {
		t.Fatalf("wireSize = %d, encoding/json writes %d", got, want)
	}
}

func TestCapWire(t *testing.T) {
	small := []byte(`{"a":1}`)
	if text, structured, err := capWire(small, small); err != nil || text == nil || structured == nil {
		t.Fatalf("small answer: %v", err)
	}
	half := []byte(`{"a":"` + strings.Repeat("x", 600<<10) + `"}`)
	if text, structured, err := capWire(half, half); err != nil || text == nil || structured != nil {
		t.Fatalf("an answer fitting once keeps the text only: %v %v", err, structured != nil)
	}
	// The bound without the exact sizes: six bytes on the wire per byte at
	// most, whatever the byte (HTML characters, control characters,
	// invalid UTF-8, line and paragraph separators).
	for _, s := range []string{"<", ">", "&", "\x01", "\xff", "\u2028", "\u2029", "\"", "\\", "\n", "é", "x"} {
		b := []byte(strings.Repeat(s, 1000))
		if got, most := structuredSize(b), 6*len(b); got > most {
			t.Errorf("%q: structured size %d over %d", s, got, most)
		}
		if got, most := textSize(b), 6*len(b)+2; got > most {
			t.Errorf("%q: text size %d over %d", s, got, most)
		}
	}
	huge := []byte(`{"a":"` + strings.Repeat("x", 2<<20) + `"}`)
	if _, _, err := capWire(huge, huge); err == nil || !strings.Contains(err.Error(), "over the") {
		t.Fatalf("an answer over 1 MiB: %v", err)
	}
}

// pagedHandlers answers list_claims with a large cuttable page.
type pagedHandlers struct {
	catalogs.Unimplemented
	page testPage
}

func (h *pagedHandlers) ListClaims(context.Context, *catalogs.ListClaimsInput) (*catalogs.ListClaimsOutput, error) {
	return claimsOf(h.page), nil
}

// claimsOf is the list_claims answer of a test page: a claim per record,
// cut by the page's own cut.
func claimsOf(p testPage) *catalogs.ListClaimsOutput {
	out := &catalogs.ListClaimsOutput{Claims: []catalogs.Claim{}, Cut: func(n int) *catalogs.ListClaimsOutput { return claimsOf(p.CutPage(n).(testPage)) }}
	for _, r := range p.Records {
		out.Claims = append(out.Claims, catalogs.Claim{ID: fmt.Sprint("claim_", r.ID), WorkID: "work_1", SessionID: "codex:a", Resource: r.Text,
			Kind: "file", Mode: "exclusive", Status: "active", AcquiredAt: "2026-01-02T03:04:05Z", ExpiresAt: "2026-01-02T03:19:05Z"})
	}
	if p.NextCursor != "" {
		out.NextCursor = &p.NextCursor
	}
	return out
}

// TestServerCutsAPageAndAnswersTheCut runs the guard in the real call path:
// the answer the client reads is within the tool's budget, both copies of
// it agree, and nextCursor names where the cut fell.
func TestServerCutsAPageAndAnswersTheCut(t *testing.T) {
	p, _ := catalogs.LookupProfile("full")
	var budget int
	for _, e := range p.Entries(false) {
		if e.Name == "list_claims" {
			budget = e.Budget
		}
	}
	if budget == 0 {
		t.Fatal("list_claims has no budget")
	}
	h := &pagedHandlers{page: page(100, 500)}
	cs := session(t, "full", h)
	res, text := call(t, cs, "list_claims", map[string]any{})
	if res.IsError {
		t.Fatal(text)
	}
	n, _ := tokens.NewO200k().Count(text)
	var got struct {
		Claims     []catalogs.Claim `json:"claims"`
		NextCursor string           `json:"nextCursor"`
	}
	if err := json.Unmarshal([]byte(text), &got); err != nil || n > budget || len(got.Claims) == 0 || len(got.Claims) == 100 ||
		got.NextCursor != fmt.Sprint("after-", len(got.Claims)-1) {
		t.Fatalf("%d tokens (budget %d), %d records, cursor %q, %v", n, budget, len(got.Claims), got.NextCursor, err)
	}
	var fromText any
	_ = json.Unmarshal([]byte(text), &fromText)
	if !reflect.DeepEqual(fromText, res.StructuredContent) {
		t.Fatal("structuredContent and text disagree after the cut")
	}
	// The legacy claim_list unwraps the same cut page: a bare array, so
	// no structuredContent (it would show a client's model the modern
	// shape).
	legacy := session(t, "legacy", h)
	res, text = call(t, legacy, "claim_list", map[string]any{})
	var bare []catalogs.Claim
	if err := json.Unmarshal([]byte(text), &bare); err != nil || len(bare) != len(got.Claims) || res.StructuredContent != nil {
		t.Fatalf("legacy answer: %d records, structuredContent %v, %v", len(bare), res.StructuredContent != nil, err)
	}
}

// redacting encodes as the server does: compact JSON through the
// redactor.
func redacting(v any) ([]byte, error) {
	b, err := marshal(v)
	if err != nil {
		return nil, err
	}
	return secrets.Default().JSON(b), nil
}

// BenchmarkGuard measures what the budget guard adds to an answer: nothing
// to count when the page is within its budget in bytes, one count when it
// is larger in bytes but within tokens, a few counts when it is cut.
func BenchmarkGuard(b *testing.B) {
	g := guard{counter: tokens.NewO200k()}
	for _, bc := range []struct {
		name string
		p    testPage
	}{
		{"within bytes (20 records, 5 KB)", page(20, 200)},
		{"within tokens (60 records, 26 KB)", page(60, 400)},
		{"cut (200 records, 86 KB)", page(200, 400)},
	} {
		for _, enc := range []struct {
			name   string
			encode func(any) ([]byte, error)
		}{{"marshal", marshal}, {"marshal+redact", redacting}} {
			body, _ := enc.encode(bc.p)
			if _, err := g.fit(bc.p, body, 8000, enc.encode); err != nil { // warm the piece cache
				b.Fatal(err)
			}
			b.Run(bc.name+"/"+enc.name, func(b *testing.B) {
				b.SetBytes(int64(len(body)))
				for b.Loop() {
					if _, err := g.fit(bc.p, body, 8000, enc.encode); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// TestTallyingGuardCutsAsCounting holds the guard that counts a cut page
// from where it parts from the whole page (tokens.O200k's Tally) to the
// same cut, byte for byte, as the guard that counts every page whole.
func TestTallyingGuardCutsAsCounting(t *testing.T) {
	whole := guard{counter: &countingCounter{inner: tokens.NewO200k()}} // Count only
	tallying := guard{counter: tokens.NewO200k()}
	for _, tt := range []struct {
		name   string
		page   testPage
		budget int
	}{
		{"over budget", page(100, 400), 8000},
		{"far over budget", page(1000, 400), 8000},
		{"tight budget", page(100, 400), 500},
		{"uneven records", uneven(200), 8000},
		{"within tokens", page(40, 200), 8000},
	} {
		t.Run(tt.name, func(t *testing.T) {
			body, err := redacting(tt.page)
			if err != nil {
				t.Fatal(err)
			}
			want, err := whole.fit(tt.page, body, tt.budget, redacting)
			if err != nil {
				t.Fatal(err)
			}
			got, err := tallying.fit(tt.page, body, tt.budget, redacting)
			if err != nil {
				t.Fatal(err)
			}
			if string(got.body) != string(want.body) || got.cut != want.cut || got.counted != want.counted {
				t.Fatalf("tallying guard: %d bytes, cut %v, %d counts; counting guard: %d bytes, cut %v, %d counts",
					len(got.body), got.cut, got.counted, len(want.body), want.cut, want.counted)
			}
			if n, _ := tokens.NewO200k().Count(string(got.body)); got.cut && n > tt.budget {
				t.Fatalf("cut page is %d tokens, budget %d", n, tt.budget)
			}
		})
	}
}

// TestWireFitsNeverUnderestimates holds wireFits' quick bound against the
// exact size: for every byte, and for a body of the costliest byte just
// under the cap by the bound, wireFits never reports a body over the cap
// as fitting.
func TestWireFitsNeverUnderestimates(t *testing.T) {
	for c := 0; c < 256; c++ {
		b := []byte(strings.Repeat(string(rune(c)), 64))
		if c >= 0x80 {
			b = bytes.Repeat([]byte{byte(c)}, 64)
		}
		if got := wireSize(b) - wireOverhead; got > maxWirePerByte*len(b)+2 {
			t.Errorf("byte %#x: %d bytes on the wire for %d, over %d per byte", c, got, len(b), maxWirePerByte)
		}
	}
	for _, s := range []string{"<", "\u2028", "\x01", "x"} {
		// The longest body of s the quick bound passes, and one a little
		// longer than a seventh of the cap (an earlier, wrong bound).
		for _, n := range []int{(MaxAnswerBytes - wireOverhead - 2) / maxWirePerByte, (MaxAnswerBytes-wireOverhead)/7 - 8} {
			b := []byte(strings.Repeat(s, n/len(s)))
			if wireFits(b) && wireSize(b) > MaxAnswerBytes {
				t.Errorf("%q × %d: wireFits passes a body of %d bytes on the wire, over the %d cap", s, n/len(s), wireSize(b), MaxAnswerBytes)
			}
		}
	}
}
