package fakemodel

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// Token usage reported for every answer.
const (
	inputTokens  = 10
	outputTokens = 5
)

// sse writes Server-Sent Events and flushes after each one.
type sse struct {
	w http.ResponseWriter
	f http.Flusher
}

func newSSE(w http.ResponseWriter) *sse {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("Connection", "keep-alive")
	w.WriteHeader(http.StatusOK)
	f, _ := w.(http.Flusher)
	return &sse{w: w, f: f}
}

// event writes one event; name may be empty (data-only event).
func (e *sse) event(name string, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		b = []byte(fmt.Sprintf(`{"error":%q}`, err.Error()))
	}
	e.data(name, string(b))
}

func (e *sse) data(name, data string) {
	if name != "" {
		fmt.Fprintf(e.w, "event: %s\n", name)
	}
	fmt.Fprintf(e.w, "data: %s\n\n", data)
	if e.f != nil {
		e.f.Flush()
	}
}

// splitText cuts text into at most three streaming deltas at word boundaries.
func splitText(text string) []string {
	words := strings.SplitAfter(text, " ")
	if len(words) <= 1 {
		return []string{text}
	}
	n := (len(words) + 2) / 3
	var out []string
	for i := 0; i < len(words); i += n {
		end := min(i+n, len(words))
		out = append(out, strings.Join(words[i:end], ""))
	}
	return out
}

// --- OpenAI Chat Completions ---

func (s *Server) answerChat(w http.ResponseWriter, p parsed, reply Reply, call *resolvedCall) {
	text := reply.Text
	id := s.newID("chatcmpl-fake")
	created := time.Now().Unix()
	model := p.model
	if model == "" {
		model = "echo"
	}
	usage := chatUsage(reply.usage())
	finish := "stop"
	if reply.Truncated {
		finish = "length"
	}
	var toolCalls []any
	if call != nil {
		finish = "tool_calls"
		toolCalls = []any{map[string]any{"index": 0, "id": s.callID("call_"), "type": "function",
			"function": map[string]any{"name": call.name, "arguments": call.args}}}
	}
	if !p.stream {
		msg := map[string]any{"role": "assistant", "content": text}
		if call != nil {
			msg["content"] = nil
			msg["tool_calls"] = toolCalls
		}
		writeJSON(w, http.StatusOK, map[string]any{
			"id": id, "object": "chat.completion", "created": created, "model": model,
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
			"usage":   usage,
		})
		return
	}
	e := newSSE(w)
	chunk := func(delta map[string]any, finishReason any, extra map[string]any) {
		c := map[string]any{
			"id": id, "object": "chat.completion.chunk", "created": created, "model": model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finishReason}},
		}
		for k, v := range extra {
			c[k] = v
		}
		e.event("", c)
	}
	chunk(map[string]any{"role": "assistant", "content": ""}, nil, nil)
	if call != nil {
		chunk(map[string]any{"tool_calls": toolCalls}, nil, nil)
	} else if !reply.Empty {
		for _, d := range splitText(text) {
			chunk(map[string]any{"content": d}, nil, nil)
		}
	}
	chunk(map[string]any{}, finish, map[string]any{"usage": usage})
	e.data("", "[DONE]")
}

// --- OpenAI Responses (Codex) ---

func (s *Server) answerResponses(w http.ResponseWriter, p parsed, reply Reply, call *resolvedCall) {
	text := reply.Text
	respID := s.newID("resp_fake")
	model := p.model
	if model == "" {
		model = "echo"
	}
	usage := responsesUsage(reply.usage())
	var item, added map[string]any
	if call != nil {
		callID := s.callID("call_")
		itemID := s.newID("fc_fake")
		if call.custom {
			item = map[string]any{"type": "custom_tool_call", "id": itemID, "call_id": callID, "name": call.name, "input": call.args, "status": "completed"}
			added = map[string]any{"type": "custom_tool_call", "id": itemID, "call_id": callID, "name": call.name, "input": "", "status": "in_progress"}
		} else {
			item = map[string]any{"type": "function_call", "id": itemID, "call_id": callID, "name": call.name, "arguments": call.args, "status": "completed"}
			added = map[string]any{"type": "function_call", "id": itemID, "call_id": callID, "name": call.name, "arguments": "", "status": "in_progress"}
		}
	} else {
		msgID := s.newID("msg_fake")
		item = map[string]any{"type": "message", "id": msgID, "role": "assistant", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": text, "annotations": []any{}}}}
		added = map[string]any{"type": "message", "id": msgID, "role": "assistant", "status": "in_progress", "content": []any{}}
	}
	response := func(status string, output []any) map[string]any {
		r := map[string]any{"id": respID, "object": "response", "created_at": time.Now().Unix(),
			"model": model, "status": status, "output": output}
		if status == "completed" || status == "incomplete" {
			r["usage"] = usage
		}
		if status == "incomplete" {
			r["incomplete_details"] = map[string]any{"reason": "max_output_tokens"}
		}
		return r
	}
	final, output := "completed", []any{item}
	if reply.Truncated {
		final = "incomplete"
	}
	if reply.Empty && call == nil {
		output = []any{}
	}
	if !p.stream {
		writeJSON(w, http.StatusOK, response(final, output))
		return
	}
	e := newSSE(w)
	seq := 0
	send := func(typ string, fields map[string]any) {
		fields["type"] = typ
		fields["sequence_number"] = seq
		seq++
		e.event(typ, fields)
	}
	send("response.created", map[string]any{"response": response("in_progress", []any{})})
	send("response.in_progress", map[string]any{"response": response("in_progress", []any{})})
	if len(output) == 0 {
		send("response.completed", map[string]any{"response": response(final, output)})
		return
	}
	send("response.output_item.added", map[string]any{"output_index": 0, "item": added})
	if call == nil {
		itemID := item["id"]
		send("response.content_part.added", map[string]any{"item_id": itemID, "output_index": 0, "content_index": 0,
			"part": map[string]any{"type": "output_text", "text": "", "annotations": []any{}}})
		for _, d := range splitText(text) {
			send("response.output_text.delta", map[string]any{"item_id": itemID, "output_index": 0, "content_index": 0, "delta": d})
		}
		send("response.output_text.done", map[string]any{"item_id": itemID, "output_index": 0, "content_index": 0, "text": text})
		send("response.content_part.done", map[string]any{"item_id": itemID, "output_index": 0, "content_index": 0,
			"part": map[string]any{"type": "output_text", "text": text, "annotations": []any{}}})
	} else if !call.custom {
		send("response.function_call_arguments.delta", map[string]any{"item_id": item["id"], "output_index": 0, "delta": call.args})
		send("response.function_call_arguments.done", map[string]any{"item_id": item["id"], "output_index": 0, "arguments": call.args})
	}
	send("response.output_item.done", map[string]any{"output_index": 0, "item": item})
	send("response."+final, map[string]any{"response": response(final, output)})
}

// --- Anthropic Messages (Claude Code) ---

func (s *Server) answerMessages(w http.ResponseWriter, p parsed, reply Reply, call *resolvedCall) {
	text := reply.Text
	msgID := s.newID("msg_fake")
	model := p.model
	if model == "" {
		model = "claude-fake"
	}
	stop := "end_turn"
	if reply.Truncated {
		stop = "max_tokens"
	}
	var block map[string]any
	var toolID string
	if call != nil {
		stop = "tool_use"
		toolID = s.callID("toolu_fake")
		var input any = map[string]any{}
		_ = json.Unmarshal([]byte(call.args), &input)
		block = map[string]any{"type": "tool_use", "id": toolID, "name": call.name, "input": input}
	} else {
		block = map[string]any{"type": "text", "text": text}
	}
	u := reply.usage()
	usage := messagesUsage(u)
	content := []any{block}
	if reply.Empty && call == nil {
		content = []any{}
	}
	if !p.stream {
		writeJSON(w, http.StatusOK, map[string]any{
			"id": msgID, "type": "message", "role": "assistant", "model": model,
			"content": content, "stop_reason": stop, "stop_sequence": nil, "usage": usage,
		})
		return
	}
	startUsage := messagesUsage(u)
	startUsage["output_tokens"] = 1
	e := newSSE(w)
	e.event("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": msgID, "type": "message", "role": "assistant", "model": model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil,
		"usage": startUsage,
	}})
	if len(content) == 0 {
		e.event("message_delta", map[string]any{"type": "message_delta",
			"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
			"usage": map[string]any{"output_tokens": u.Output}})
		e.event("message_stop", map[string]any{"type": "message_stop"})
		return
	}
	if call != nil {
		e.event("content_block_start", map[string]any{"type": "content_block_start", "index": 0,
			"content_block": map[string]any{"type": "tool_use", "id": toolID, "name": call.name, "input": map[string]any{}}})
		e.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
			"delta": map[string]any{"type": "input_json_delta", "partial_json": call.args}})
	} else {
		e.event("content_block_start", map[string]any{"type": "content_block_start", "index": 0,
			"content_block": map[string]any{"type": "text", "text": ""}})
		for _, d := range splitText(text) {
			e.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
				"delta": map[string]any{"type": "text_delta", "text": d}})
		}
	}
	e.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
	e.event("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": u.Output}})
	e.event("message_stop", map[string]any{"type": "message_stop"})
}
