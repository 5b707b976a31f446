package workflow

import "github.com/agent-interop/runtime/internal/tokens"

// TokenizerLabel names the tokenizer in packets and reports. The counts are
// an offline estimate, never a provider's own usage figure.
const TokenizerLabel = "tiktoken-go o200k_base (offline estimate, not native provider usage)"

// TokenCounter counts o200k tokens of a text.
type TokenCounter = tokens.Counter

// O200k is a TokenCounter of o200k_base tokens, exactly as tiktoken-go's
// codec counts them (hence TokenizerLabel), over a rank table embedded in
// the binary and read in place: nothing is built at start-up or on the
// first Count.
type O200k = tokens.O200k

// NewO200k returns an unloaded counter.
func NewO200k() *O200k { return tokens.NewO200k() }
