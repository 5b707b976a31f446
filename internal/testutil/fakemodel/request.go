package fakemodel

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"
)

// parsed is the part of a model request the server acts on.
type parsed struct {
	model        string
	stream       bool
	lastUser     string
	continuation bool
	tools        []string
	toolTypes    map[string]string // Responses API: tool name → "function" | "custom"
}

// serve routes one request.
func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if !loopbackAddr(r.RemoteAddr) {
		http.Error(w, "fakemodel: loopback clients only", http.StatusForbidden)
		return
	}
	rec := Request{Time: time.Now(), Method: r.Method, Path: r.URL.Path, API: OtherAPI}
	path := strings.TrimSuffix(r.URL.Path, "/")
	switch {
	case r.Method == http.MethodPost && path == "/v1/chat/completions":
		rec.API = ChatCompletions
	case r.Method == http.MethodPost && path == "/v1/responses":
		rec.API = Responses
	case r.Method == http.MethodPost && path == "/v1/messages":
		rec.API = Messages
	case r.Method == http.MethodPost && path == "/v1/messages/count_tokens":
		rec.API = CountTokens
	case r.Method == http.MethodGet && path == "/v1/models":
		rec.API = Models
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxBody+1))
	rec.Body = body
	switch {
	case err != nil:
		rec.Status = http.StatusBadRequest
		rec.Note = "reading body: " + err.Error()
		s.record(rec)
		http.Error(w, rec.Note, rec.Status)
		return
	case len(body) > MaxBody:
		rec.Status = http.StatusRequestEntityTooLarge
		rec.Note = "body too large"
		s.record(rec)
		http.Error(w, rec.Note, rec.Status)
		return
	}

	switch rec.API {
	case OtherAPI:
		if path == "" && (r.Method == http.MethodHead || r.Method == http.MethodGet) {
			// Connectivity checks (Claude Code sends HEAD /).
			rec.Status = http.StatusOK
			s.record(rec)
			w.WriteHeader(http.StatusOK)
			return
		}
		rec.Status = http.StatusNotFound
		s.record(rec)
		writeJSON(w, http.StatusNotFound, map[string]any{"error": map[string]any{
			"message": "fakemodel: no route " + r.Method + " " + r.URL.Path, "type": "not_found_error"}})
		return
	case Models:
		rec.Status = http.StatusOK
		s.record(rec)
		writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": []any{
			map[string]any{"id": "echo", "object": "model", "owned_by": "fakemodel"}}})
		return
	case CountTokens:
		rec.Status = http.StatusOK
		s.record(rec)
		writeJSON(w, http.StatusOK, map[string]any{"input_tokens": 10})
		return
	}

	var p parsed
	switch rec.API {
	case ChatCompletions:
		p, err = parseChat(body)
	case Responses:
		p, err = parseResponses(body)
	case Messages:
		p, err = parseMessages(body)
	}
	if err != nil {
		rec.Status = http.StatusBadRequest
		rec.Note = err.Error()
		s.record(rec)
		writeAPIError(w, rec.API, http.StatusBadRequest, "fakemodel: "+err.Error())
		return
	}
	rec.Model, rec.Stream, rec.LastUser = p.model, p.stream, p.lastUser
	rec.Continuation, rec.Tools, rec.Side = p.continuation, p.tools, len(p.tools) == 0

	reply, label := s.decide(p)
	rec.Rule = label
	rec.Status = http.StatusOK
	if reply.Error != nil {
		rec.Status = reply.Error.Status
	}
	var call *resolvedCall
	if reply.Error == nil && reply.Tool != nil {
		c, err := resolveTool(rec.API, p, *reply.Tool)
		if err != nil {
			rec.Note = err.Error()
			reply = Text("fakemodel: " + err.Error())
		} else {
			call = &c
		}
	}
	s.record(rec)

	if !s.wait(r.Context(), reply.Delay) || !s.hold(r.Context(), reply.Gate, reply.Drop) {
		// Client gone, server closing or drop closed: drop the connection without an
		// answer (net/http recovers this panic silently).
		panic(http.ErrAbortHandler)
	}
	if reply.Error != nil {
		writeAPIError(w, rec.API, reply.Error.Status, reply.Error.Message)
		return
	}
	switch rec.API {
	case ChatCompletions:
		s.answerChat(w, p, reply, call)
	case Responses:
		s.answerResponses(w, p, reply, call)
	case Messages:
		s.answerMessages(w, p, reply, call)
	}
}

func loopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// contextPrefixes mark text blocks that programs add to user messages for
// context; they are not what the user typed.
var contextPrefixes = [...]string{
	"<system-reminder>",
	"<environment_context>",
	"<user_instructions>",
	"<permissions instructions>",
	"<INSTRUCTIONS>",
	"# AGENTS.md instructions",
}

func isContextBlock(text string) bool {
	t := strings.TrimSpace(text)
	for _, p := range contextPrefixes {
		if strings.HasPrefix(t, p) {
			return true
		}
	}
	return false
}

// userText joins a message's typed text blocks.
func userText(blocks []string) string {
	var kept []string
	for _, b := range blocks {
		if strings.TrimSpace(b) != "" && !isContextBlock(b) {
			kept = append(kept, b)
		}
	}
	return strings.Join(kept, "\n")
}

// textBlocks decodes content that is either a string or an array of blocks
// with a "text" field, keeping only blocks of the given types.
func textBlocks(raw json.RawMessage, types ...string) []string {
	if len(raw) == 0 {
		return nil
	}
	var str string
	if json.Unmarshal(raw, &str) == nil {
		return []string{str}
	}
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &blocks) != nil {
		return nil
	}
	var out []string
	for _, b := range blocks {
		for _, t := range types {
			if b.Type == t {
				out = append(out, b.Text)
				break
			}
		}
	}
	return out
}

func parseChat(body []byte) (parsed, error) {
	var req struct {
		Model    string `json:"model"`
		Stream   bool   `json:"stream"`
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
		Tools []struct {
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return parsed{}, fmt.Errorf("decoding chat completions request: %w", err)
	}
	if len(req.Messages) == 0 {
		return parsed{}, errors.New("chat completions request without messages")
	}
	p := parsed{model: req.Model, stream: req.Stream}
	for _, t := range req.Tools {
		p.tools = append(p.tools, t.Function.Name)
	}
	p.continuation = req.Messages[len(req.Messages)-1].Role == "tool"
	for i := len(req.Messages) - 1; i >= 0; i-- {
		m := req.Messages[i]
		if m.Role != "user" {
			continue
		}
		if t := userText(textBlocks(m.Content, "text")); t != "" {
			p.lastUser = t
			break
		}
	}
	return p, nil
}

func parseResponses(body []byte) (parsed, error) {
	var req struct {
		Model  string          `json:"model"`
		Stream bool            `json:"stream"`
		Input  json.RawMessage `json:"input"`
		Tools  []struct {
			Type string `json:"type"`
			Name string `json:"name"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return parsed{}, fmt.Errorf("decoding responses request: %w", err)
	}
	p := parsed{model: req.Model, stream: req.Stream, toolTypes: map[string]string{}}
	for _, t := range req.Tools {
		if t.Name != "" {
			p.tools = append(p.tools, t.Name)
			p.toolTypes[t.Name] = t.Type
		}
	}
	var str string
	if json.Unmarshal(req.Input, &str) == nil {
		p.lastUser = str
		return p, nil
	}
	var items []struct {
		Type    string          `json:"type"`
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(req.Input, &items); err != nil {
		return parsed{}, fmt.Errorf("decoding responses input: %w", err)
	}
	if len(items) == 0 {
		return parsed{}, errors.New("responses request without input")
	}
	p.continuation = strings.HasSuffix(items[len(items)-1].Type, "_output")
	for i := len(items) - 1; i >= 0; i-- {
		it := items[i]
		if it.Role != "user" || (it.Type != "" && it.Type != "message") {
			continue
		}
		if t := userText(textBlocks(it.Content, "input_text", "text")); t != "" {
			p.lastUser = t
			break
		}
	}
	return p, nil
}

func parseMessages(body []byte) (parsed, error) {
	var req struct {
		Model    string `json:"model"`
		Stream   bool   `json:"stream"`
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return parsed{}, fmt.Errorf("decoding messages request: %w", err)
	}
	if len(req.Messages) == 0 {
		return parsed{}, errors.New("messages request without messages")
	}
	p := parsed{model: req.Model, stream: req.Stream}
	for _, t := range req.Tools {
		if t.Name != "" {
			p.tools = append(p.tools, t.Name)
		}
	}
	last := req.Messages[len(req.Messages)-1]
	if last.Role == "user" {
		var blocks []struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(last.Content, &blocks) == nil {
			for _, b := range blocks {
				if b.Type == "tool_result" {
					p.continuation = true
				}
			}
		}
	}
	for i := len(req.Messages) - 1; i >= 0; i-- {
		m := req.Messages[i]
		if m.Role != "user" {
			continue
		}
		if t := userText(textBlocks(m.Content, "text")); t != "" {
			p.lastUser = t
			break
		}
	}
	return p, nil
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// writeAPIError answers an error with the body shape of the API called.
func writeAPIError(w http.ResponseWriter, api API, status int, message string) {
	if api == Messages || api == CountTokens {
		typ := map[int]string{
			400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
			404: "not_found_error", 413: "request_too_large", 429: "rate_limit_error",
			500: "api_error", 529: "overloaded_error",
		}[status]
		if typ == "" {
			typ = "api_error"
		}
		w.Header().Set("request-id", "req_fake")
		writeJSON(w, status, map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": message}})
		return
	}
	typ, code := "invalid_request_error", any(nil)
	switch {
	case status == 401:
		code = "invalid_api_key"
	case status == 429:
		typ, code = "rate_limit_exceeded", "rate_limit_exceeded"
	case status >= 500:
		typ = "server_error"
	}
	writeJSON(w, status, map[string]any{"error": map[string]any{"message": message, "type": typ, "param": nil, "code": code}})
}
