// Package tokens counts o200k_base tokens (tiktoken-go, offline) the way
// the catalog budgets, handoff packets and answer budgets count them. The
// vocabulary is loaded on the first Count, never at start-up.
//
// Counting is exact and fast: the text is cut into the codec's
// pre-tokenizer pieces by a hand-written matcher of the o200k pattern
// (split.go; a test checks it against the pattern itself), and each distinct
// piece is encoded once by the codec and remembered. A text's count is the
// sum of its pieces' counts, because the codec encodes every piece on its
// own. JSON answers repeat their keys and words, so most pieces are found
// in the cache; the codec's regular-expression engine, which dominates its
// own Count, runs only on new pieces.
package tokens

import (
	"fmt"
	"sort"
	"sync"
	"unicode/utf8"

	"github.com/tiktoken-go/tokenizer"
)

// Counter counts o200k tokens of a text.
type Counter interface {
	Count(text string) (int, error)
}

// maxCached bounds the remembered pieces (the cache is dropped when full).
const maxCached = 1 << 17

// O200k is a Counter over tiktoken-go's o200k_base codec, loaded lazily.
type O200k struct {
	once  sync.Once
	codec tokenizer.Codec
	err   error

	mu     sync.Mutex
	pieces map[string]int
	// front is a direct-mapped cache in front of pieces (see pieceLocked).
	front *[frontSize]frontEntry
}

// frontSize is the entries of O200k.front (48 KiB, allocated with the
// codec): a JSON answer has a few hundred distinct pieces (a 100-work
// list_work_items page: ~7,000 pieces, ~200 distinct), so most land in an
// entry of their own.
const frontSize = 1 << frontBits

const frontBits = 11

// frontEntry is a piece and its count; the piece is the cache's own copy.
type frontEntry struct {
	piece string
	n     int
}

// frontSlot is the entry of front a piece is kept in: a hash of its
// length and three of its bytes. Pieces that share a slot only cost a
// map lookup, never a wrong count (the entry holds the whole piece).
func frontSlot(p string) int {
	h := uint64(len(p))<<24 ^ uint64(p[0])<<16 ^ uint64(p[len(p)/2])<<8 ^ uint64(p[len(p)-1])
	return int((h * 0x9E3779B97F4A7C15) >> (64 - frontBits))
}

// NewO200k returns an unloaded counter.
func NewO200k() *O200k { return &O200k{} }

func (o *O200k) load() error {
	o.once.Do(func() {
		o.codec, o.err = tokenizer.Get(tokenizer.O200kBase)
		o.pieces = map[string]int{}
		o.front = new([frontSize]frontEntry)
	})
	if o.err != nil {
		return fmt.Errorf("load o200k tokenizer: %w", o.err)
	}
	return nil
}

// Count returns the number of o200k tokens in text.
func (o *O200k) Count(text string) (int, error) {
	if err := o.load(); err != nil {
		return 0, err
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.countLocked(text)
}

// countLocked counts text under o.mu.
func (o *O200k) countLocked(text string) (int, error) {
	total := 0
	var err error
	ok := split(text, func(p string) {
		if e := &o.front[frontSlot(p)]; e.piece == p {
			total += e.n
			return
		}
		if err != nil {
			return
		}
		n, perr := o.pieceLocked(p)
		err = perr
		total += n
	})
	if !ok {
		n, cerr := o.codec.Count(text)
		if cerr != nil {
			return 0, fmt.Errorf("count tokens: %w", cerr)
		}
		return n, nil
	}
	if err != nil {
		return 0, fmt.Errorf("count tokens: %w", err)
	}
	return total, nil
}

// pieceLocked is the count of one piece, from the cache or the codec; it
// also puts the piece in its entry of front, where the callers look first
// (a piece of a few bytes is found there for a hash of four bytes and one
// comparison, where the map hashes it whole and probes a group).
func (o *O200k) pieceLocked(p string) (int, error) {
	e := &o.front[frontSlot(p)]
	if n, hit := o.pieces[p]; hit {
		// The map does not hand out its key: the entry gets a copy. Two
		// pieces in turn in one slot copy each time; a slot is shared by
		// few of a page's pieces (see frontSize).
		e.piece, e.n = string([]byte(p)), n
		return n, nil
	}
	n, err := o.codec.Count(p)
	if err != nil {
		return 0, err
	}
	if len(o.pieces) >= maxCached {
		clear(o.pieces)
	}
	key := string([]byte(p)) // a copy: p aliases the caller's text
	o.pieces[key] = n
	e.piece, e.n = key, n
	return n, nil
}

// markEvery is the bytes between the marks of a Tally: a text that parts
// from a tallied one is counted from the last mark before they part, so
// at most about this many bytes of their common prefix are counted again.
const markEvery = 256

// Tally is the count of a text that also counts other texts sharing a
// prefix with it (a page and the same page cut shorter) from where they
// part, instead of from their start.
type Tally struct {
	text  string
	total int
	marks []mark
}

// mark is a piece boundary of a tallied text: end is its byte offset,
// tokens the count of text[:end], and safe the byte offset up to which
// another text must equal this one for its pieces up to end to be these
// (the largest reach of the pieces before end, see splitReach).
type mark struct {
	end, safe, tokens int
}

// Total is the tallied text's count.
func (t *Tally) Total() int { return t.total }

// Tally counts text (as Count) and keeps what CountFrom needs.
func (o *O200k) Tally(text string) (*Tally, error) {
	if err := o.load(); err != nil {
		return nil, err
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	t := &Tally{text: text}
	var err error
	safe, last := 0, 0
	ok := splitReach(text, func(p string, end, reach int) {
		if e := &o.front[frontSlot(p)]; e.piece == p {
			t.total += e.n
		} else if err == nil {
			n, perr := o.pieceLocked(p)
			err = perr
			t.total += n
		}
		safe = max(safe, reach)
		if end-last >= markEvery {
			t.marks = append(t.marks, mark{end: end, safe: safe, tokens: t.total})
			last = end
		}
	})
	if !ok {
		n, cerr := o.codec.Count(text)
		if cerr != nil {
			return nil, fmt.Errorf("count tokens: %w", cerr)
		}
		return &Tally{text: text, total: n}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("count tokens: %w", err)
	}
	return t, nil
}

// CountFrom returns the count of text (as Count), counting only from the
// last mark of t before the point where text parts from t's text: the
// pieces before that mark are the same in both texts, and the pattern
// looks only forward, so the rest is cut from the mark as it would be in
// text as a whole.
func (o *O200k) CountFrom(t *Tally, text string) (int, error) {
	if err := o.load(); err != nil {
		return 0, err
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	common := 0
	for common < len(text) && common < len(t.text) && text[common] == t.text[common] {
		common++
	}
	// The last mark whose pieces are cut the same in text.
	i := sort.Search(len(t.marks), func(i int) bool { return t.marks[i].safe > common }) - 1
	if i < 0 || !utf8.ValidString(text) {
		return o.countLocked(text)
	}
	m := t.marks[i]
	rest, err := o.countLocked(text[m.end:])
	if err != nil {
		return 0, err
	}
	return m.tokens + rest, nil
}

// Exact counts text with the codec alone (the reference Count is checked
// against).
func (o *O200k) Exact(text string) (int, error) {
	if err := o.load(); err != nil {
		return 0, err
	}
	n, err := o.codec.Count(text)
	if err != nil {
		return 0, fmt.Errorf("count tokens: %w", err)
	}
	return n, nil
}
