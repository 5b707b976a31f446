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
	"sync"

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
}

// NewO200k returns an unloaded counter.
func NewO200k() *O200k { return &O200k{} }

func (o *O200k) load() error {
	o.once.Do(func() {
		o.codec, o.err = tokenizer.Get(tokenizer.O200kBase)
		o.pieces = map[string]int{}
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
	total := 0
	var err error
	o.mu.Lock()
	defer o.mu.Unlock()
	ok := split(text, func(p string) {
		if err != nil {
			return
		}
		n, hit := o.pieces[p]
		if !hit {
			if n, err = o.codec.Count(p); err != nil {
				return
			}
			if len(o.pieces) >= maxCached {
				clear(o.pieces)
			}
			o.pieces[string([]byte(p))] = n // a copy: p aliases the caller's text
		}
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
