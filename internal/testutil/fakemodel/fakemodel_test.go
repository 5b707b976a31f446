package fakemodel

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agent-interop/runtime/internal/testutil/wait"
)

// sseEvent is one parsed Server-Sent Event.
type sseEvent struct {
	name string
	data string
}

func post(t *testing.T, ctx context.Context, url string, body any) *http.Response {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func readSSE(t *testing.T, r io.Reader) []sseEvent {
	t.Helper()
	var out []sseEvent
	var cur sseEvent
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if cur.data != "" {
				out = append(out, cur)
			}
			cur = sseEvent{}
		case strings.HasPrefix(line, "event: "):
			cur.name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			cur.data = strings.TrimPrefix(line, "data: ")
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("reading SSE: %v", err)
	}
	return out
}

func decode(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("decoding %q: %v", s, err)
	}
	return m
}

func dig(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			a, _ := v.([]any)
			if k >= len(a) {
				return nil
			}
			v = a[k]
		}
	}
	return v
}

func chatTools(names ...string) []any {
	var out []any
	for _, n := range names {
		out = append(out, map[string]any{"type": "function", "function": map[string]any{"name": n, "parameters": map[string]any{}}})
	}
	return out
}

func TestChatCompletionsStreamingText(t *testing.T) {
	fm := New(t)
	fm.On(Exact("say hi"), Text("Hello from the fake model."))
	resp := post(t, context.Background(), fm.BaseURL()+"/chat/completions", map[string]any{
		"model": "echo", "stream": true, "tools": chatTools("bash"),
		"messages": []any{
			map[string]any{"role": "system", "content": "you are a test"},
			map[string]any{"role": "user", "content": "earlier FAIL401 message"},
			map[string]any{"role": "assistant", "content": "ok"},
			map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "say hi"}}},
		},
	})
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	events := readSSE(t, resp.Body)
	if events[len(events)-1].data != "[DONE]" {
		t.Fatalf("last event %q, want [DONE]", events[len(events)-1].data)
	}
	var text strings.Builder
	finish := ""
	for _, e := range events[:len(events)-1] {
		m := decode(t, e.data)
		if m["object"] != "chat.completion.chunk" {
			t.Fatalf("object %v", m["object"])
		}
		if c, ok := dig(m, "choices", 0, "delta", "content").(string); ok {
			text.WriteString(c)
		}
		if f, ok := dig(m, "choices", 0, "finish_reason").(string); ok {
			finish = f
		}
	}
	if text.String() != "Hello from the fake model." || finish != "stop" {
		t.Fatalf("text %q finish %q", text.String(), finish)
	}
	reqs := fm.Requests()
	if len(reqs) != 1 || reqs[0].LastUser != "say hi" || reqs[0].API != ChatCompletions || reqs[0].Rule != `exact "say hi"` {
		t.Fatalf("log %+v", reqs)
	}
	if fm.Count("say hi") != 1 || fm.CountExact("say hi") != 1 || fm.Count("FAIL401") != 0 {
		t.Fatalf("counts %d %d %d", fm.Count("say hi"), fm.CountExact("say hi"), fm.Count("FAIL401"))
	}
}

func TestChatCompletionsJSONAndDefault(t *testing.T) {
	fm := New(t)
	fm.SetDefault(Text("default answer"))
	resp := post(t, context.Background(), fm.BaseURL()+"/chat/completions", map[string]any{
		"model": "echo", "tools": chatTools("bash"),
		"messages": []any{map[string]any{"role": "user", "content": "anything"}},
	})
	var body map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	if got := dig(body, "choices", 0, "message", "content"); got != "default answer" {
		t.Fatalf("content %v", got)
	}
	if got := dig(body, "usage", "total_tokens"); got != float64(15) {
		t.Fatalf("usage %v", got)
	}
}

func TestChatCompletionsToolCallThenFollowUp(t *testing.T) {
	fm := New(t)
	fm.On(Contains("WRITEFILE"), WriteFile("hello.txt", "hi\n").WithFollowUp("File written."))
	prompt := map[string]any{"role": "user", "content": "please WRITEFILE x1"}
	resp := post(t, context.Background(), fm.BaseURL()+"/chat/completions", map[string]any{
		"model": "echo", "stream": true, "tools": chatTools("bash", "write", "read"),
		"messages": []any{prompt},
	})
	var call map[string]any
	finish := ""
	for _, e := range readSSE(t, resp.Body) {
		if e.data == "[DONE]" {
			continue
		}
		m := decode(t, e.data)
		if c, ok := dig(m, "choices", 0, "delta", "tool_calls", 0).(map[string]any); ok {
			call = c
		}
		if f, ok := dig(m, "choices", 0, "finish_reason").(string); ok {
			finish = f
		}
	}
	if finish != "tool_calls" || dig(call, "function", "name") != "write" {
		t.Fatalf("finish %q call %v", finish, call)
	}
	args := decode(t, dig(call, "function", "arguments").(string))
	if args["filePath"] != "hello.txt" || args["content"] != "hi\n" {
		t.Fatalf("arguments %v", args)
	}
	// The program runs the tool and continues; the same last user message must
	// not trigger the tool again.
	resp = post(t, context.Background(), fm.BaseURL()+"/chat/completions", map[string]any{
		"model": "echo", "tools": chatTools("bash", "write"),
		"messages": []any{prompt,
			map[string]any{"role": "assistant", "tool_calls": []any{call}},
			map[string]any{"role": "tool", "tool_call_id": call["id"], "content": "Wrote file"}},
	})
	var body map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	if got := dig(body, "choices", 0, "message", "content"); got != "File written." {
		t.Fatalf("follow-up %v", got)
	}
	reqs := fm.Requests()
	if len(reqs) != 2 || !reqs[1].Continuation || reqs[1].Rule != "follow-up" {
		t.Fatalf("log %+v", reqs)
	}
	if n := fm.Count("WRITEFILE x1"); n != 1 {
		t.Fatalf("Count = %d, want 1 (continuations are not turn starts)", n)
	}
}

func TestSideRequestGetsText(t *testing.T) {
	fm := New(t)
	fm.On(Contains("WRITEFILE"), WriteFile("/tmp/x", "y"))
	resp := post(t, context.Background(), fm.BaseURL()+"/chat/completions", map[string]any{
		"model": "echo", "messages": []any{map[string]any{"role": "user", "content": "WRITEFILE title please"}},
	})
	var body map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	if got := dig(body, "choices", 0, "message", "content"); got != "Fake title" {
		t.Fatalf("side answer %v", got)
	}
	if r := fm.Requests()[0]; !r.Side || r.Rule != "side" || fm.Count("WRITEFILE") != 0 {
		t.Fatalf("side request %+v count %d", r, fm.Count("WRITEFILE"))
	}
}

func TestResponsesStreamingTextAndShellCall(t *testing.T) {
	fm := New(t)
	fm.On(Contains("RUNSHELL"), RunCommand("echo hi > shell.txt"))
	tools := []any{
		map[string]any{"type": "function", "name": "exec_command", "parameters": map[string]any{}},
		map[string]any{"type": "web_search"},
	}
	input := []any{
		map[string]any{"type": "message", "role": "developer", "content": []any{map[string]any{"type": "input_text", "text": "perms"}}},
		map[string]any{"type": "message", "role": "user", "content": []any{map[string]any{"type": "input_text", "text": "say hello"}}},
		map[string]any{"type": "message", "role": "user", "content": []any{map[string]any{"type": "input_text", "text": "<environment_context>\n  <cwd>/x</cwd>\n</environment_context>"}}},
	}
	resp := post(t, context.Background(), fm.BaseURL()+"/responses", map[string]any{"model": "echo", "stream": true, "tools": tools, "input": input})
	var names []string
	var text strings.Builder
	for _, e := range readSSE(t, resp.Body) {
		m := decode(t, e.data)
		if m["type"] != e.name {
			t.Fatalf("event %q carries type %v", e.name, m["type"])
		}
		names = append(names, e.name)
		if e.name == "response.output_text.delta" {
			text.WriteString(m["delta"].(string))
		}
		if e.name == "response.completed" && dig(m, "response", "usage", "total_tokens") != float64(15) {
			t.Fatalf("usage missing: %v", m)
		}
	}
	for _, want := range []string{"response.created", "response.output_item.added", "response.output_text.delta", "response.output_item.done", "response.completed"} {
		if !strings.Contains(strings.Join(names, ","), want) {
			t.Fatalf("events %v lack %s", names, want)
		}
	}
	if text.String() != "Hello from fake model." {
		t.Fatalf("text %q", text.String())
	}
	if r := fm.Requests()[0]; r.LastUser != "say hello" || r.API != Responses {
		t.Fatalf("request %+v", r)
	}

	input = append(input, map[string]any{"type": "message", "role": "user", "content": []any{map[string]any{"type": "input_text", "text": "RUNSHELL now"}}})
	resp = post(t, context.Background(), fm.BaseURL()+"/responses", map[string]any{"model": "echo", "stream": true, "tools": tools, "input": input})
	var item map[string]any
	for _, e := range readSSE(t, resp.Body) {
		if e.name == "response.output_item.done" {
			item = decode(t, e.data)["item"].(map[string]any)
		}
	}
	if item["type"] != "function_call" || item["name"] != "exec_command" || item["call_id"] == "" {
		t.Fatalf("item %v", item)
	}
	if args := decode(t, item["arguments"].(string)); args["cmd"] != "echo hi > shell.txt" {
		t.Fatalf("arguments %v", args)
	}
	input = append(input, item, map[string]any{"type": "function_call_output", "call_id": item["call_id"], "output": "ok"})
	resp = post(t, context.Background(), fm.BaseURL()+"/responses", map[string]any{"model": "echo", "stream": true, "tools": tools, "input": input})
	readSSE(t, resp.Body)
	if r := fm.Requests()[2]; !r.Continuation || r.Rule != "follow-up" {
		t.Fatalf("continuation %+v", r)
	}
	if fm.Count("RUNSHELL") != 1 {
		t.Fatalf("Count(RUNSHELL) = %d", fm.Count("RUNSHELL"))
	}
}

// TestResponsesWriteFileEditsAFile: a Responses (Codex) write is a patch,
// through apply_patch when it is offered, else through Codex's shell as
// `apply_patch <<'EOF'`; a shell of another program writes with printf.
func TestResponsesWriteFileEditsAFile(t *testing.T) {
	patch := "*** Begin Patch\n*** Add File: it's.txt\n+a'b\n+EOF\n*** End Patch\n"
	for _, tc := range []struct {
		name     string
		tools    []any
		content  string
		itemType string // response item type
		tool     string // called tool
		field    string // "input" of a custom call, else the argument name
		want     string
	}{
		{"freeform apply_patch", []any{
			map[string]any{"type": "function", "name": "exec_command"},
			map[string]any{"type": "custom", "name": "apply_patch", "format": map[string]any{"type": "grammar"}},
		}, "a'b\nEOF\n", "custom_tool_call", "apply_patch", "input", patch},
		{"function apply_patch", []any{
			map[string]any{"type": "function", "name": "shell_command"},
			map[string]any{"type": "function", "name": "apply_patch"},
		}, "a'b\nEOF", "function_call", "apply_patch", "input", patch},
		{"Codex shell without apply_patch", []any{
			map[string]any{"type": "function", "name": "exec_command"},
		}, "a'b\nEOF\n", "function_call", "exec_command", "cmd", "apply_patch <<'EOF'\n" + patch + "EOF\n"},
		{"another program's shell", []any{
			map[string]any{"type": "function", "name": "bash"},
		}, "a'b", "function_call", "bash", "command", `printf '%s' 'a'\''b' > 'it'\''s.txt'`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fm := New(t)
			fm.On(Contains("WRITEFILE"), WriteFile("it's.txt", tc.content))
			resp := post(t, context.Background(), fm.BaseURL()+"/responses", map[string]any{
				"model": "echo", "stream": true, "input": "WRITEFILE", "tools": tc.tools,
			})
			var item map[string]any
			for _, e := range readSSE(t, resp.Body) {
				if e.name == "response.output_item.done" {
					item = decode(t, e.data)["item"].(map[string]any)
				}
			}
			if item["type"] != tc.itemType || item["name"] != tc.tool {
				t.Fatalf("item %v", item)
			}
			got, _ := item["input"].(string)
			if tc.field != "input" || tc.itemType != "custom_tool_call" {
				got, _ = decode(t, item["arguments"].(string))[tc.field].(string)
			}
			if got != tc.want {
				t.Fatalf("%s = %q, want %q", tc.field, got, tc.want)
			}
		})
	}
}

func TestMessagesStreamingToolUseAndFollowUp(t *testing.T) {
	fm := New(t)
	fm.On(Contains("WRITEFILE"), WriteFile("/abs/hello.txt", "hi\n"))
	tools := []any{map[string]any{"name": "Bash", "input_schema": map[string]any{}}, map[string]any{"name": "Write", "input_schema": map[string]any{}}}
	user := map[string]any{"role": "user", "content": []any{
		map[string]any{"type": "text", "text": "<system-reminder>\nThis is context.\n</system-reminder>"},
		map[string]any{"type": "text", "text": "please WRITEFILE"},
	}}
	resp := post(t, context.Background(), fm.URL()+"/v1/messages?beta=true", map[string]any{
		"model": "claude-sonnet-4-5", "stream": true, "max_tokens": 100, "tools": tools, "messages": []any{user},
	})
	var names []string
	var toolUse map[string]any
	var partial strings.Builder
	stop := ""
	for _, e := range readSSE(t, resp.Body) {
		names = append(names, e.name)
		m := decode(t, e.data)
		switch e.name {
		case "content_block_start":
			toolUse = m["content_block"].(map[string]any)
		case "content_block_delta":
			partial.WriteString(dig(m, "delta", "partial_json").(string))
		case "message_delta":
			stop = dig(m, "delta", "stop_reason").(string)
		}
	}
	want := "message_start,content_block_start,content_block_delta,content_block_stop,message_delta,message_stop"
	if strings.Join(names, ",") != want {
		t.Fatalf("events %v", names)
	}
	if toolUse["type"] != "tool_use" || toolUse["name"] != "Write" || stop != "tool_use" {
		t.Fatalf("tool_use %v stop %q", toolUse, stop)
	}
	if args := decode(t, partial.String()); args["file_path"] != "/abs/hello.txt" || args["content"] != "hi\n" {
		t.Fatalf("input %v", args)
	}
	if r := fm.Requests()[0]; r.LastUser != "please WRITEFILE" {
		t.Fatalf("last user %q", r.LastUser)
	}
	// Continue after the tool result, non-streaming this time.
	resp = post(t, context.Background(), fm.URL()+"/v1/messages", map[string]any{
		"model": "claude-sonnet-4-5", "max_tokens": 100, "tools": tools,
		"messages": []any{user,
			map[string]any{"role": "assistant", "content": []any{toolUse}},
			map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": toolUse["id"], "content": "ok"}}}},
	})
	var body map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	if dig(body, "content", 0, "text") != "Done." || body["stop_reason"] != "end_turn" {
		t.Fatalf("follow-up %v", body)
	}
	resp = post(t, context.Background(), fm.URL()+"/v1/messages/count_tokens", map[string]any{"model": "x", "messages": []any{user}})
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || body["input_tokens"] != float64(10) {
		t.Fatalf("count_tokens %v %v", body, err)
	}
	if fm.Count("WRITEFILE") != 1 || fm.Total() != 3 {
		t.Fatalf("Count %d Total %d", fm.Count("WRITEFILE"), fm.Total())
	}
}

func TestErrorsAreProviderShaped(t *testing.T) {
	fm := New(t)
	fm.On(Contains("FAIL401"), Fail(401, "Incorrect API key provided"))
	msg := []any{map[string]any{"role": "user", "content": "FAIL401"}}

	resp := post(t, context.Background(), fm.BaseURL()+"/chat/completions", map[string]any{"stream": true, "messages": msg, "tools": chatTools("bash")})
	var body map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 401 || dig(body, "error", "message") != "Incorrect API key provided" || dig(body, "error", "code") != "invalid_api_key" {
		t.Fatalf("openai error %d %v", resp.StatusCode, body)
	}

	resp = post(t, context.Background(), fm.URL()+"/v1/messages", map[string]any{"stream": true, "messages": msg, "tools": []any{map[string]any{"name": "Bash"}}})
	body = nil
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 401 || body["type"] != "error" || dig(body, "error", "type") != "authentication_error" {
		t.Fatalf("anthropic error %d %v", resp.StatusCode, body)
	}
	if r := fm.Requests()[0]; r.Status != 401 {
		t.Fatalf("logged status %d", r.Status)
	}
}

func TestTimesRuleIsUsedUp(t *testing.T) {
	fm := New(t)
	fm.Times(1, Contains("flaky"), Fail(500, "boom"))
	fm.On(Contains("flaky"), Text("recovered"))
	body := map[string]any{"messages": []any{map[string]any{"role": "user", "content": "flaky"}}, "tools": chatTools("bash")}
	if resp := post(t, context.Background(), fm.BaseURL()+"/chat/completions", body); resp.StatusCode != 500 {
		t.Fatalf("first status %d", resp.StatusCode)
	}
	if resp := post(t, context.Background(), fm.BaseURL()+"/chat/completions", body); resp.StatusCode != 200 {
		t.Fatalf("second status %d", resp.StatusCode)
	}
}

func TestDelayEndsWhenClientDisconnects(t *testing.T) {
	fm := New(t)
	fm.On(Contains("SLOW"), Text("late").WithDelay(time.Minute))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		b, _ := json.Marshal(map[string]any{"stream": true, "messages": []any{map[string]any{"role": "user", "content": "SLOW"}}, "tools": chatTools("bash")})
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, fm.BaseURL()+"/chat/completions", bytes.NewReader(b))
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		errc <- err
	}()
	awaitCtx, stop := context.WithTimeout(context.Background(), wait.InProcess)
	defer stop()
	if _, err := fm.Await(awaitCtx, func(r Request) bool { return r.LastUser == "SLOW" }); err != nil {
		t.Fatal(err)
	}
	cancel()
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("client error %v, want context.Canceled", err)
		}
	case <-awaitCtx.Done():
		t.Fatal("client did not return after cancel")
	}
	// Close must not wait for the abandoned delay.
	done := make(chan struct{})
	go func() { fm.Close(); close(done) }()
	select {
	case <-done:
	case <-awaitCtx.Done():
		t.Fatal("Close blocked on a cancelled delay")
	}
}

func TestCloseEndsPendingDelay(t *testing.T) {
	fm, err := Start()
	if err != nil {
		t.Fatal(err)
	}
	defer fm.Close()
	fm.On(Contains("SLOW"), Text("late").WithDelay(time.Minute))
	errc := make(chan error, 1)
	go func() {
		b, _ := json.Marshal(map[string]any{"messages": []any{map[string]any{"role": "user", "content": "SLOW"}}, "tools": chatTools("bash")})
		resp, err := http.Post(fm.BaseURL()+"/chat/completions", "application/json", bytes.NewReader(b))
		if err == nil {
			_, err = io.ReadAll(resp.Body)
			resp.Body.Close()
			if err == nil {
				err = errors.New("got an answer")
			}
		}
		errc <- err
	}()
	awaitCtx, stop := context.WithTimeout(context.Background(), wait.InProcess)
	defer stop()
	if _, err := fm.Await(awaitCtx, func(r Request) bool { return r.LastUser == "SLOW" }); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { fm.Close(); close(done) }()
	select {
	case <-done:
	case <-awaitCtx.Done():
		t.Fatal("Close did not end the delay")
	}
	select {
	case err := <-errc:
		if err == nil || err.Error() == "got an answer" {
			t.Fatalf("client got %v, want a dropped connection", err)
		}
	case <-awaitCtx.Done():
		t.Fatal("client still waiting after Close")
	}
	if _, err := fm.Await(context.Background(), func(Request) bool { return false }); err == nil {
		t.Fatal("Await on a closed server should fail")
	}
}

func TestUnknownRouteAndBadBody(t *testing.T) {
	fm := New(t)
	resp, err := http.Get(fm.URL() + "/nope")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	resp, err = http.Post(fm.BaseURL()+"/chat/completions", "application/json", strings.NewReader("{not json"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 400 || fm.Total() != 2 {
		t.Fatalf("status %d total %d", resp.StatusCode, fm.Total())
	}
	fm.Reset()
	if fm.Total() != 0 || len(fm.Requests()) != 0 {
		t.Fatal("Reset kept the log")
	}
}

func TestListensOnLoopback(t *testing.T) {
	fm := New(t)
	if !strings.HasPrefix(fm.URL(), "http://127.0.0.1:") {
		t.Fatalf("URL %s", fm.URL())
	}
}

func TestGateHoldsTheAnswerUntilOpened(t *testing.T) {
	fm := New(t)
	gate := make(chan struct{})
	fm.On(Contains("HELD"), Text("released").WithGate(gate))
	done := make(chan string, 1)
	go func() {
		// With tools: a request without any is a side request (a title…),
		// which is answered at once, gate or not.
		b, _ := json.Marshal(map[string]any{"tools": chatTools("bash"), "messages": []any{map[string]any{"role": "user", "content": "HELD"}}})
		resp, err := http.Post(fm.BaseURL()+"/chat/completions", "application/json", bytes.NewReader(b))
		if err != nil {
			done <- err.Error()
			return
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		done <- string(body)
	}()
	ctx, stop := context.WithTimeout(context.Background(), wait.InProcess)
	defer stop()
	if _, err := fm.Await(ctx, func(r Request) bool { return r.LastUser == "HELD" }); err != nil {
		t.Fatal(err)
	}
	select {
	case body := <-done:
		t.Fatalf("answered before the gate opened: %s", body)
	default:
	}
	close(gate)
	select {
	case body := <-done:
		if !strings.Contains(body, "released") {
			t.Fatalf("answer %s", body)
		}
	case <-ctx.Done():
		t.Fatal("no answer after the gate opened")
	}
}

func TestDropEndsAHeldAnswerWithoutOne(t *testing.T) {
	fm := New(t)
	gate, drop := make(chan struct{}), make(chan struct{})
	t.Cleanup(func() { close(gate) })
	fm.On(Contains("HELD"), Text("released").WithGate(gate).WithDrop(drop))
	done := make(chan error, 1)
	go func() {
		b, _ := json.Marshal(map[string]any{"tools": chatTools("bash"), "messages": []any{map[string]any{"role": "user", "content": "HELD"}}})
		resp, err := http.Post(fm.BaseURL()+"/chat/completions", "application/json", bytes.NewReader(b))
		if err == nil {
			resp.Body.Close()
			err = fmt.Errorf("answered %s", resp.Status)
		}
		done <- err
	}()
	ctx, stop := context.WithTimeout(context.Background(), wait.InProcess)
	defer stop()
	if _, err := fm.Await(ctx, func(r Request) bool { return r.LastUser == "HELD" }); err != nil {
		t.Fatal(err)
	}
	close(drop)
	select {
	case err := <-done:
		if err == nil || strings.Contains(err.Error(), "answered") {
			t.Fatalf("want the connection dropped without an answer, got %v", err)
		}
	case <-ctx.Done():
		t.Fatal("the held request was not dropped")
	}
}

func TestMatchRules(t *testing.T) {
	tests := []struct {
		match Match
		text  string
		want  bool
	}{
		{Exact("FAIL400-1"), " FAIL400-1\n", true},
		{Exact("FAIL400-1"), "FAIL401-2\n\nFAIL400-1", false},
		{Contains("FAIL400-1"), "FAIL400-1\n\nnext-3", true},
		{Last("FAIL400-1"), "FAIL400-1", true},
		{Last("FAIL400-1"), "FAIL401-2\n\nFAIL400-1\n", true},
		{Last("FAIL400-1"), "FAIL400-1\n\nnext-3", false},
		{Last("FAIL400-1"), "xFAIL400-1", false},
		{Last("FAIL400-1"), "see FAIL400-1", false},
	}
	for _, tt := range tests {
		if got := tt.match.matches(tt.text); got != tt.want {
			t.Errorf("%s matches %q = %v, want %v", tt.match, tt.text, got, tt.want)
		}
	}
}
