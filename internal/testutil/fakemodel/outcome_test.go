package fakemodel

import (
	"context"
	"strings"
	"testing"
)

// TestEndingsAndUsageInEachDialect checks an empty reply, a length-limited
// reply and scripted usage in the streaming answer of each API.
func TestEndingsAndUsageInEachDialect(t *testing.T) {
	fm := New(t)
	u := Usage{Input: 120, Output: 30, Cached: 20, Reasoning: 7}
	fm.On(Exact("EMPTY"), Empty().WithUsage(u))
	fm.On(Exact("CUT"), Truncated("cut off mid").WithUsage(u))
	tools := map[API]any{
		ChatCompletions: chatTools("bash"),
		Responses:       []any{map[string]any{"type": "function", "name": "exec_command", "parameters": map[string]any{}}},
		Messages:        []any{map[string]any{"name": "Bash", "input_schema": map[string]any{}}},
	}
	ask := func(api API, text string) []map[string]any {
		var url string
		body := map[string]any{"model": "m", "stream": true, "tools": tools[api]}
		switch api {
		case ChatCompletions:
			url = fm.BaseURL() + "/chat/completions"
			body["messages"] = []any{map[string]any{"role": "user", "content": text}}
		case Responses:
			url = fm.BaseURL() + "/responses"
			body["input"] = []any{map[string]any{"type": "message", "role": "user", "content": []any{map[string]any{"type": "input_text", "text": text}}}}
		case Messages:
			url = fm.URL() + "/v1/messages"
			body["max_tokens"] = 100
			body["messages"] = []any{map[string]any{"role": "user", "content": text}}
		}
		var out []map[string]any
		for _, e := range readSSE(t, post(t, context.Background(), url, body).Body) {
			if e.data != "[DONE]" {
				out = append(out, decode(t, e.data))
			}
		}
		return out
	}
	text := func(evs []map[string]any) string {
		var b strings.Builder
		for _, m := range evs {
			for _, p := range [][]any{{"choices", 0, "delta", "content"}, {"delta"}, {"delta", "text"}} {
				if s, ok := dig(m, p...).(string); ok {
					b.WriteString(s)
				}
			}
		}
		return b.String()
	}
	for _, c := range []struct {
		prompt, wantText, wantEnd string
	}{{"EMPTY", "", ""}, {"CUT", "cut off mid", "cut"}} {
		t.Run(c.prompt, func(t *testing.T) {
			chat := ask(ChatCompletions, c.prompt)
			last := chat[len(chat)-1]
			finish := map[string]string{"": "stop", "cut": "length"}[c.wantEnd]
			if got := text(chat); got != c.wantText || dig(last, "choices", 0, "finish_reason") != finish ||
				dig(last, "usage", "prompt_tokens") != float64(120) || dig(last, "usage", "prompt_tokens_details", "cached_tokens") != float64(20) ||
				dig(last, "usage", "completion_tokens_details", "reasoning_tokens") != float64(7) {
				t.Fatalf("chat: text %q, last chunk %v", got, last)
			}
			resp := ask(Responses, c.prompt)
			last = resp[len(resp)-1]
			status := map[string]string{"": "completed", "cut": "incomplete"}[c.wantEnd]
			if got := text(resp); got != c.wantText || last["type"] != "response."+status || dig(last, "response", "status") != status ||
				dig(last, "response", "usage", "input_tokens") != float64(120) || dig(last, "response", "usage", "output_tokens_details", "reasoning_tokens") != float64(7) {
				t.Fatalf("responses: text %q, last event %v", got, last)
			}
			if c.wantEnd == "cut" && dig(last, "response", "incomplete_details", "reason") != "max_output_tokens" {
				t.Fatalf("responses: %v", last)
			}
			if c.prompt == "EMPTY" && len(dig(last, "response", "output").([]any)) != 0 {
				t.Fatalf("responses: empty reply has output %v", last)
			}
			msgs := ask(Messages, c.prompt)
			stop := map[string]string{"": "end_turn", "cut": "max_tokens"}[c.wantEnd]
			var gotStop any
			for _, m := range msgs {
				if m["type"] == "message_delta" {
					gotStop = dig(m, "delta", "stop_reason")
				}
			}
			if got := text(msgs); got != c.wantText || gotStop != stop ||
				dig(msgs[0], "message", "usage", "input_tokens") != float64(100) || dig(msgs[0], "message", "usage", "cache_read_input_tokens") != float64(20) {
				t.Fatalf("messages: text %q stop %v, first %v", got, gotStop, msgs[0])
			}
		})
	}
}
