package fakemodel

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// The Gemini API dialect, used by Gemini CLI through @google/genai when
// GOOGLE_GEMINI_BASE_URL points at URL() (with any GEMINI_API_KEY):
//
//   - POST /v1beta/models/{model}:streamGenerateContent?alt=sse (SSE of
//     GenerateContentResponse chunks, no end marker),
//   - POST /v1beta/models/{model}:generateContent (one JSON answer),
//   - POST /v1beta/models/{model}:countTokens.
//
// A request's contents alternate "user" and "model" turns; a tool result is
// a user turn of functionResponse parts (a Continuation), and a tool call is
// a model turn's functionCall part. The tools are the functionDeclarations
// of its tools.

// The Gemini APIs.
const (
	GeminiGenerate    API = "gemini.generate_content"
	GeminiCountTokens API = "gemini.count_tokens"
)

// geminiPrefix is the route of every Gemini API call.
const geminiPrefix = "/v1beta/models/"

// routes sends the Gemini dialect to serveGemini and the rest to serve.
func (s *Server) routes(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, geminiPrefix) {
		s.serveGemini(w, r)
		return
	}
	s.serve(w, r)
}

// serveGemini answers one Gemini API call.
func (s *Server) serveGemini(w http.ResponseWriter, r *http.Request) {
	if !loopbackAddr(r.RemoteAddr) {
		http.Error(w, "fakemodel: loopback clients only", http.StatusForbidden)
		return
	}
	rec := Request{Time: time.Now(), Method: r.Method, Path: r.URL.Path, API: OtherAPI}
	model, method, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, geminiPrefix), ":")
	stream := false
	switch {
	case r.Method != http.MethodPost:
	case method == "streamGenerateContent":
		rec.API, stream = GeminiGenerate, true
	case method == "generateContent":
		rec.API = GeminiGenerate
	case method == "countTokens":
		rec.API = GeminiCountTokens
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxBody+1))
	rec.Body = body
	if err == nil && len(body) > MaxBody {
		err = errors.New("body too large")
	}
	if err != nil {
		rec.Status, rec.Note = http.StatusBadRequest, "reading body: "+err.Error()
		s.record(rec)
		writeGeminiError(w, rec.Status, rec.Note)
		return
	}
	switch rec.API {
	case OtherAPI:
		rec.Status = http.StatusNotFound
		s.record(rec)
		writeGeminiError(w, rec.Status, "fakemodel: no route "+r.Method+" "+r.URL.Path)
		return
	case GeminiCountTokens:
		rec.Status = http.StatusOK
		s.record(rec)
		writeJSON(w, http.StatusOK, map[string]any{"totalTokens": inputTokens})
		return
	}
	p, err := parseGemini(body)
	if err != nil {
		rec.Status, rec.Note = http.StatusBadRequest, err.Error()
		s.record(rec)
		writeGeminiError(w, rec.Status, "fakemodel: "+err.Error())
		return
	}
	p.model, p.stream = model, stream
	rec.Model, rec.Stream, rec.LastUser = p.model, p.stream, p.lastUser
	rec.Continuation, rec.Tools, rec.Side = p.continuation, p.tools, len(p.tools) == 0

	reply, label := s.decide(p)
	rec.Rule, rec.Status = label, http.StatusOK
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
		panic(http.ErrAbortHandler) // client gone, server closing or drop closed
	}
	if reply.Error != nil {
		writeGeminiError(w, reply.Error.Status, reply.Error.Message)
		return
	}
	s.answerGemini(w, p, reply.Text, call)
}

// parseGemini reads a GenerateContentRequest.
func parseGemini(body []byte) (parsed, error) {
	var req struct {
		Contents []struct {
			Role  string `json:"role"`
			Parts []struct {
				Text             *string         `json:"text"`
				Thought          bool            `json:"thought"`
				FunctionResponse json.RawMessage `json:"functionResponse"`
			} `json:"parts"`
		} `json:"contents"`
		Tools []struct {
			FunctionDeclarations []struct {
				Name string `json:"name"`
			} `json:"functionDeclarations"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return parsed{}, fmt.Errorf("decoding gemini request: %w", err)
	}
	if len(req.Contents) == 0 {
		return parsed{}, errors.New("gemini request without contents")
	}
	var p parsed
	for _, t := range req.Tools {
		for _, f := range t.FunctionDeclarations {
			p.tools = append(p.tools, f.Name)
		}
	}
	last := req.Contents[len(req.Contents)-1]
	for _, part := range last.Parts {
		p.continuation = p.continuation || len(part.FunctionResponse) > 0
	}
	for i := len(req.Contents) - 1; i >= 0 && p.lastUser == ""; i-- {
		c := req.Contents[i]
		if c.Role != "user" && c.Role != "" {
			continue
		}
		var blocks []string
		for _, part := range c.Parts {
			if part.Text != nil && !part.Thought {
				blocks = append(blocks, *part.Text)
			}
		}
		p.lastUser = userText(blocks)
	}
	return p, nil
}

// answerGemini writes a GenerateContentResponse: text, or one function
// call; streamed as SSE data events when asked.
func (s *Server) answerGemini(w http.ResponseWriter, p parsed, text string, call *resolvedCall) {
	model := p.model
	if model == "" {
		model = "echo"
	}
	respID := s.newID("gemini-fake-")
	usage := map[string]any{"promptTokenCount": inputTokens, "candidatesTokenCount": outputTokens, "totalTokenCount": inputTokens + outputTokens}
	chunk := func(parts []any, finish string, last bool) map[string]any {
		cand := map[string]any{"index": 0, "content": map[string]any{"role": "model", "parts": parts}}
		if finish != "" {
			cand["finishReason"] = finish
		}
		c := map[string]any{"candidates": []any{cand}, "modelVersion": model, "responseId": respID}
		if last {
			c["usageMetadata"] = usage
		}
		return c
	}
	var parts []any
	if call != nil {
		var args map[string]any
		if err := json.Unmarshal([]byte(call.args), &args); err != nil {
			args = map[string]any{"input": call.args}
		}
		parts = []any{map[string]any{"functionCall": map[string]any{"name": call.name, "args": args, "id": s.callID("gemini_call_")}}}
	}
	if !p.stream {
		if call == nil {
			parts = []any{map[string]any{"text": text}}
		}
		writeJSON(w, http.StatusOK, chunk(parts, "STOP", true))
		return
	}
	e := newSSE(w)
	if call != nil {
		e.event("", chunk(parts, "STOP", true))
		return
	}
	deltas := splitText(text)
	for i, d := range deltas {
		finish := ""
		if i == len(deltas)-1 {
			finish = "STOP"
		}
		e.event("", chunk([]any{map[string]any{"text": d}}, finish, finish != ""))
	}
}

// writeGeminiError answers a Google API error body.
func writeGeminiError(w http.ResponseWriter, status int, message string) {
	st := map[int]string{400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
		429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE"}[status]
	if st == "" {
		st = "UNKNOWN"
	}
	writeJSON(w, status, map[string]any{"error": map[string]any{"code": status, "message": message, "status": st}})
}
