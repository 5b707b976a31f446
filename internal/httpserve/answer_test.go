package httpserve

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-interop/runtime/internal/testutil/wait"
)

func TestAnswerOnly(t *testing.T) {
	tests := []struct {
		name   string
		stream string
		want   string // the data when it is an answer alone
	}{
		{"a result", "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}\n\n", `{"jsonrpc":"2.0","id":2,"result":{}}`},
		{"an error with an event id", "event: message\nid: s_1\ndata: {\"jsonrpc\":\"2.0\",\"id\":\"a\",\"error\":{\"code\":-1,\"message\":\"x\"}}\n\n", `{"jsonrpc":"2.0","id":"a","error":{"code":-1,"message":"x"}}`},
		{"a notification", "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}\n\n", ""},
		{"a request to the client", "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"roots/list\"}\n\n", ""},
		{"an answer after a notification", "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"n\"}\n\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}\n\n", ""},
		{"an incomplete event", "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}\n", ""},
		{"a priming event", "id: s_0\ndata: \n\n", ""},
		{"another event name", "event: other\ndata: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}\n\n", ""},
		{"two data lines", "event: message\ndata: {\"id\":2,\ndata: \"result\":{}}\n\n", ""},
		{"a retry field", "retry: 10\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}\n\n", ""},
		{"no id", "event: message\ndata: {\"jsonrpc\":\"2.0\",\"result\":{}}\n\n", ""},
		{"not JSON", "event: message\ndata: {oops\n\n", ""},
		{"nothing", "", ""},
		{"a string id with an escaped quote", "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":\"a\\\"b\",\"result\":{}}\n\n", `{"jsonrpc":"2.0","id":"a\"b","result":{}}`},
		{"another field order", "event: message\ndata: {\"id\":2,\"jsonrpc\":\"2.0\",\"result\":{}}\n\n", `{"id":2,"jsonrpc":"2.0","result":{}}`},
		{"a method after the result", "event: message\ndata: {\"id\":2,\"result\":{},\"method\":\"m\"}\n\n", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			data, ok := answerOnly([]byte(tc.stream))
			if ok != (tc.want != "") || string(data) != tc.want {
				t.Errorf("answerOnly = %q, %v; want %q", data, ok, tc.want)
			}
		})
	}
}

// TestIsSDKResponse: the prefix check says yes only to what a full parse
// also calls a response with an id, and leaves the rest to it.
func TestIsSDKResponse(t *testing.T) {
	tests := []struct {
		data string
		want bool
	}{
		{`{"jsonrpc":"2.0","id":2,"result":{"content":[]}}`, true},
		{`{"jsonrpc":"2.0","id":-1.5e3,"error":{"code":-1,"message":"x"}}`, true},
		{`{"jsonrpc":"2.0","id":"s\\\"1","result":{}}`, true},
		{`{"jsonrpc":"2.0","id":2,"method":"roots/list"}`, false},
		{`{"jsonrpc":"2.0","method":"notifications/progress","params":{}}`, false},
		{`{"jsonrpc":"2.0","id":null,"error":{}}`, false},
		{`{"jsonrpc":"2.0","id":"open,"result":{}}`, false},
		{`{"jsonrpc":"2.0","id":,"result":{}}`, false},
		{`{"jsonrpc":"2.0","id":x2,"result":{}}`, false},
		{`{"jsonrpc": "2.0", "id": 2, "result": {}}`, false},
		{`{"jsonrpc":"2.0","id":2,"params":{}}`, false},
	}
	for _, tc := range tests {
		if got := isSDKResponse([]byte(tc.data)); got != tc.want {
			t.Errorf("isSDKResponse(%s) = %v, want %v", tc.data, got, tc.want)
		}
	}
}

// progressServer has the echo tool and "slow", which, when the call asked
// for progress, sends a progress notification and then waits for release
// before it answers.
func progressServer(release <-chan struct{}) *mcp.Server {
	s := echoServer()
	mcp.AddTool(s, &mcp.Tool{Name: "slow"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		if token := req.Params.GetProgressToken(); token != nil {
			if err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: 1, Message: "half"}); err != nil {
				return nil, nil, err
			}
			select {
			case <-release:
			case <-ctx.Done():
				return nil, nil, ctx.Err()
			}
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil, nil
	})
	return s
}

// TestAnswerContentType: a call whose handler sends nothing but its answer
// is answered application/json (initialize too); a call that asked for
// progress gets an SSE stream on which the progress notification arrives
// while the call is still running, then the answer.
func TestAnswerContentType(t *testing.T) {
	release := make(chan struct{})
	var once sync.Once
	free := func() { once.Do(func() { close(release) }) }
	s := start(t, testOptions{server: progressServer(release)})
	t.Cleanup(free) // before the server's stop, which waits for the tool

	status, h, body := raw(t, http.MethodPost, s.url, auth(), initialize)
	if status != http.StatusOK || h.Get("Content-Type") != "application/json" || h.Get("Content-Length") == "" || !strings.HasPrefix(body, `{"jsonrpc":"2.0","id":1,"result":`) {
		t.Fatalf("initialize: %d %v %s", status, h, body)
	}
	id := h.Get(HeaderSessionID)
	if status, _, body := raw(t, http.MethodPost, s.url, with(auth(), HeaderSessionID, id), `{"jsonrpc":"2.0","method":"notifications/initialized"}`); status != http.StatusAccepted {
		t.Fatalf("initialized: %d %s", status, body)
	}
	session := with(auth(), HeaderSessionID, id)

	for _, tc := range []struct {
		name, accept, call, want string
	}{
		{"echo", "application/json, text/event-stream", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`, `:hi"`},
		{"wildcard accept", "*/*", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`, `:hi"`},
		{"progress token, none sent", "application/json, text/event-stream", `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"_meta":{"progressToken":"p"},"name":"echo","arguments":{"text":"hi"}}}`, `:hi"`},
		{"no progress asked", "application/json, text/event-stream", `{"jsonrpc":"2.0","id":"five","method":"tools/call","params":{"name":"slow","arguments":{}}}`, `"done"`},
		{"a JSON-RPC error", "application/json, text/event-stream", `{"jsonrpc":"2.0","id":6,"method":"prompts/get","params":{"name":"none"}}`, `"error"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, h, body := raw(t, http.MethodPost, s.url, with(session, "Accept", tc.accept), tc.call)
			if status != http.StatusOK || h.Get("Content-Type") != "application/json" || h.Get("Content-Length") != fmt.Sprint(len(body)) || h.Get("Connection") != "" {
				t.Fatalf("%d %v %q", status, h, body)
			}
			if !strings.HasPrefix(body, "{") || !strings.Contains(body, tc.want) {
				t.Errorf("body %s, want it to contain %s", body, tc.want)
			}
		})
	}

	t.Run("only text/event-stream accepted", func(t *testing.T) {
		// The SDK refuses it, as before (the specification's clients
		// accept both).
		call := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`
		if status, _, body := raw(t, http.MethodPost, s.url, with(session, "Accept", "text/event-stream"), call); status != http.StatusBadRequest {
			t.Errorf("%d %s", status, body)
		}
	})

	t.Run("progress on the call's own stream", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), wait.InProcess)
		defer cancel()
		call := `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"_meta":{"progressToken":"p8"},"name":"slow","arguments":{}}}`
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.url, strings.NewReader(call))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range session {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
			t.Fatalf("%d %v", resp.StatusCode, resp.Header)
		}
		events := sseData(resp.Body)
		// The tool is still waiting for release: the notification came
		// as it was sent, not with the answer.
		first, ok := <-events
		if !ok || !strings.Contains(first, `"notifications/progress"`) || !strings.Contains(first, `"p8"`) {
			t.Fatalf("first event %q (%v), want the progress notification", first, ok)
		}
		free()
		answer, ok := <-events
		if !ok || !strings.Contains(answer, `"id":8`) || !strings.Contains(answer, `"done"`) {
			t.Fatalf("second event %q (%v), want the answer", answer, ok)
		}
		if extra, ok := <-events; ok {
			t.Errorf("event after the answer: %q", extra)
		}
	})
}

// sseData sends the data of each event read from r, and closes the channel
// at the end of the stream.
func sseData(r io.Reader) <-chan string {
	out := make(chan string, 4)
	go func() {
		defer close(out)
		sc := bufio.NewScanner(r)
		var data string
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "data: "):
				data = strings.TrimPrefix(line, "data: ")
			case line == "" && data != "":
				out <- data
				data = ""
			}
		}
	}()
	return out
}

// TestSDKClientOverJSONAnswers: the go-sdk's own client works against the
// answers as they now go out (application/json for plain calls, SSE with
// progress), progress notifications included.
func TestSDKClientOverJSONAnswers(t *testing.T) {
	release := make(chan struct{})
	close(release)
	s := start(t, testOptions{server: progressServer(release)})
	ctx, cancel := context.WithTimeout(context.Background(), wait.InProcess)
	defer cancel()
	progress := make(chan string, 1)
	client := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			progress <- req.Params.Message
		},
	})
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: s.url, HTTPClient: &http.Client{Transport: bearer{testToken, http.DefaultTransport}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}})
	if err != nil || res.IsError || !strings.HasSuffix(res.Content[0].(*mcp.TextContent).Text, ":hi") {
		t.Fatalf("echo: %v %+v", err, res)
	}
	params := &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{}}
	params.SetProgressToken("tok")
	if res, err := cs.CallTool(ctx, params); err != nil || res.IsError {
		t.Fatalf("slow: %v %+v", err, res)
	}
	select {
	case msg := <-progress:
		if msg != "half" {
			t.Errorf("progress message %q", msg)
		}
	case <-ctx.Done():
		t.Fatal("no progress notification")
	}
}

// BenchmarkAnswerOnly: how long telling an answer's event from anything
// else takes, for a trivial answer and a 64 KiB one (the prefix check reads
// a few bytes of either; a full parse reads all of it).
//
//	go test -run '^$' -bench AnswerOnly ./internal/httpserve/
func BenchmarkAnswerOnly(b *testing.B) {
	for _, size := range []int{0, 64 << 10} {
		data := `{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"` + strings.Repeat("x", size) + `"}]}}`
		stream := []byte("event: message\nid: s_1\ndata: " + data + "\n\n")
		b.Run(fmt.Sprintf("%dB", len(data)), func(b *testing.B) {
			for range b.N {
				if _, ok := answerOnly(stream); !ok {
					b.Fatal("not an answer")
				}
			}
		})
	}
}

// TestInterceptorWrites: a call's answer written as one event goes out as
// application/json at that write, before any flush; written in pieces, at
// the flush; anything else first makes the stream go out as the SSE the
// SDK wrote.
func TestInterceptorWrites(t *testing.T) {
	answer := `{"jsonrpc":"2.0","id":2,"result":{"content":[]}}`
	event := "event: message\ndata: " + answer + "\n\n"
	note := "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}\n\n"
	tests := []struct {
		name       string
		writes     []string
		jsonBefore bool // the JSON answer is out before the flush
		wantType   string
		wantBody   string
	}{
		{"one write", []string{event}, true, "application/json", answer},
		{"in pieces", []string{event[:10], event[10:]}, false, "application/json", answer},
		{"a notification first", []string{note, event}, false, "text/event-stream", note + event},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			i := &interceptor{ResponseWriter: rec, collapse: true}
			i.Header().Set("Content-Type", "text/event-stream")
			i.WriteHeader(http.StatusOK)
			for _, w := range tt.writes {
				if n, err := i.Write([]byte(w)); n != len(w) || err != nil {
					t.Fatalf("Write = %d, %v", n, err)
				}
			}
			if out := rec.Body.String() == answer; out != tt.jsonBefore {
				t.Errorf("answer out before the flush: %v, want %v (body %q)", out, tt.jsonBefore, rec.Body.String())
			}
			i.Flush()
			i.finish()
			if got := rec.Header().Get("Content-Type"); got != tt.wantType || rec.Body.String() != tt.wantBody {
				t.Fatalf("%s %q, want %s %q", got, rec.Body.String(), tt.wantType, tt.wantBody)
			}
			if tt.wantType == "application/json" && rec.Header().Get("Content-Length") != fmt.Sprint(len(answer)) {
				t.Errorf("Content-Length %q", rec.Header().Get("Content-Length"))
			}
		})
	}
}
