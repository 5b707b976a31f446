// Package tokens counts o200k_base tokens (tiktoken-go, offline) the way
// the catalog budgets, handoff packets and answer budgets count them. The
// vocabulary is loaded on the first Count, never at start-up.
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

// O200k is a Counter over tiktoken-go's o200k_base codec, loaded lazily.
type O200k struct {
	once  sync.Once
	codec tokenizer.Codec
	err   error
}

// NewO200k returns an unloaded counter.
func NewO200k() *O200k { return &O200k{} }

// Count returns the number of o200k tokens in text.
func (o *O200k) Count(text string) (int, error) {
	o.once.Do(func() {
		o.codec, o.err = tokenizer.Get(tokenizer.O200kBase)
	})
	if o.err != nil {
		return 0, fmt.Errorf("load o200k tokenizer: %w", o.err)
	}
	n, err := o.codec.Count(text)
	if err != nil {
		return 0, fmt.Errorf("count tokens: %w", err)
	}
	return n, nil
}
