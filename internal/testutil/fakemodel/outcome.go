package fakemodel

// This file holds the replies that end a turn other than with a full
// answer (an empty reply, a length-limited one) and the token usage every
// reply reports, in the three dialects: OpenAI Chat Completions, OpenAI
// Responses and Anthropic Messages.

// Usage is the token usage an answer reports. Cached is part of Input
// (OpenAI prompt_tokens_details.cached_tokens, Responses
// input_tokens_details.cached_tokens; Anthropic reports it beside the
// input as cache_read_input_tokens), Reasoning part of Output (OpenAI
// completion_tokens_details.reasoning_tokens, Responses
// output_tokens_details.reasoning_tokens; Anthropic has none).
type Usage struct {
	Input, Output, Cached, Reasoning int64
}

// DefaultUsage is the usage an answer reports unless [Reply.WithUsage]
// set another.
func DefaultUsage() Usage { return Usage{Input: inputTokens, Output: outputTokens} }

// Empty answers a completed turn with no output at all: no text, no tool
// call.
func Empty() Reply { return Reply{Empty: true} }

// Truncated answers text cut off by the output token limit: finish_reason
// "length" (Chat Completions), an incomplete response for
// max_output_tokens (Responses), stop_reason "max_tokens" (Messages).
func Truncated(text string) Reply { return Reply{Text: text, Truncated: true} }

// WithUsage returns r reporting u as its token usage.
func (r Reply) WithUsage(u Usage) Reply { r.Usage = &u; return r }

func (r Reply) usage() Usage {
	if r.Usage != nil {
		return *r.Usage
	}
	return DefaultUsage()
}

// chatUsage is u in the Chat Completions dialect.
func chatUsage(u Usage) map[string]any {
	return map[string]any{
		"prompt_tokens": u.Input, "completion_tokens": u.Output, "total_tokens": u.Input + u.Output,
		"prompt_tokens_details":     map[string]any{"cached_tokens": u.Cached},
		"completion_tokens_details": map[string]any{"reasoning_tokens": u.Reasoning},
	}
}

// responsesUsage is u in the Responses dialect.
func responsesUsage(u Usage) map[string]any {
	return map[string]any{
		"input_tokens": u.Input, "input_tokens_details": map[string]any{"cached_tokens": u.Cached},
		"output_tokens": u.Output, "output_tokens_details": map[string]any{"reasoning_tokens": u.Reasoning},
		"total_tokens": u.Input + u.Output,
	}
}

// messagesUsage is u in the Anthropic dialect: input_tokens excludes the
// cache reads.
func messagesUsage(u Usage) map[string]any {
	return map[string]any{"input_tokens": u.Input - u.Cached, "output_tokens": u.Output,
		"cache_creation_input_tokens": 0, "cache_read_input_tokens": u.Cached}
}
