package stdio

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func nested(depth int, inner string) string {
	return strings.Repeat("[", depth) + inner + strings.Repeat("]", depth)
}

func TestInspect(t *testing.T) {
	cases := []struct {
		name string
		line string
		want string // "" = forwarded; else a fragment of the answer
	}{
		{"ping", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, ""},
		{"notification", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, ""},
		{"response", `{"jsonrpc":"2.0","id":"a","result":{}}`, ""},
		{"null params", `{"jsonrpc":"2.0","id":2,"method":"ping","params":null}`, ""},
		{"not json", `{not json`, `"id":null,"error":{"code":-32700`},
		{"invalid utf-8", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xff\"}", `"code":-32700`},
		{"invalid utf-8 sanitized", string(sanitize([]byte("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"p\xffing\"}"))), ""},
		{"batch", `[]`, `"code":-32600,"message":"Invalid Request: batches`},
		{"scalar", `42`, `"code":-32600`},
		{"bad version", `{"jsonrpc":"1.0","id":3,"method":"x"}`, `"id":3,"error":{"code":-32600`},
		{"numeric version", `{"jsonrpc":2.0,"id":3,"method":"x"}`, `"id":3,"error":{"code":-32600`},
		{"object id", `{"jsonrpc":"2.0","id":{"x":1},"method":"x"}`, `"id":null,"error":{"code":-32600`},
		{"null id", `{"jsonrpc":"2.0","id":null,"method":"ping"}`, `"id":null,"error":{"code":-32600,"message":"Invalid Request: id must not be null"`},
		{"no method", `{"jsonrpc":"2.0","id":4}`, `"id":4,"error":{"code":-32600`},
		{"empty method", `{"jsonrpc":"2.0","id":5,"method":""}`, `"code":-32600`},
		{"method not a string", `{"jsonrpc":"2.0","id":6,"method":7}`, `"id":6,"error":{"code":-32600`},
		{"params scalar", `{"jsonrpc":"2.0","id":7,"method":"ping","params":3}`, `"id":7,"error":{"code":-32602`},
		{"duplicate id member", `{"jsonrpc":"2.0","id":8,"id":9,"method":"ping"}`, `"code":-32600`},
		{"params at the depth limit", `{"jsonrpc":"2.0","id":10,"method":"ping","params":` + nested(MaxDepth-1, "") + `}`, ""},
		{"params one level too deep", `{"jsonrpc":"2.0","id":11,"method":"tools/call","params":` + nested(MaxDepth, "") + `}`, `"id":11,"error":{"code":-32602`},
		{"params far too deep", `{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"a":` + nested(200000, "1") + `}}`, `"id":12,"error":{"code":-32602`},
		{"unknown member too deep", `{"jsonrpc":"2.0","id":13,"method":"ping","x":` + nested(MaxDepth, "") + `}`, `"id":13,"error":{"code":-32600`},
		{"deep and broken", `{"jsonrpc":"2.0","id":14,"method":"ping","params":` + nested(5000, "") + `]}`, `"code":-32700`},
		{"huge exponent id", `{"jsonrpc":"2.0","id":1e400,"method":"ping"}`, ""},
		{"huge exponent id refused later", `{"jsonrpc":"2.0","id":1e400,"method":""}`, `"id":1e400,"error"`},
		{"bad response error", `{"jsonrpc":"2.0","id":1,"error":"boom"}`, "silent"},
		{"response with null id", `{"jsonrpc":"2.0","id":null,"result":{}}`, "silent"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, ref := inspect([]byte(c.line))
			got := ""
			if ref != nil {
				got = "silent"
				if !ref.silent {
					got = string(errorAnswer(ref.id, ref.code, ref.msg))
				}
			}
			if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
				t.Errorf("inspect = %.200s, want %q", got, c.want)
			}
			if c.want == "" {
				if _, err := jsonrpc.DecodeMessage([]byte(c.line)); err != nil && !strings.Contains(c.name, "id") {
					t.Errorf("forwarded a line the SDK cannot decode: %v", err)
				}
			}
		})
	}
}

func TestClassifyID(t *testing.T) {
	cases := map[string]idKind{
		`"x"`: idString, `0`: idInteger, `-12`: idInteger, `9007199254740992`: idInteger,
		`9007199254740993`: idOther, `-0`: idOther, `1.5`: idOther, `1e400`: idOther, `1E2`: idOther,
		`123456789012345678901234567890`: idOther, `null`: idNull, `true`: idInvalid, `[1]`: idInvalid,
	}
	for raw, want := range cases {
		if got := classifyID([]byte(raw)); got != want {
			t.Errorf("classifyID(%s) = %d, want %d", raw, got, want)
		}
	}
}

// session runs a real go-sdk server over the guard and lets a test talk to
// it line by line.
type session struct {
	t    *testing.T
	in   *io.PipeWriter
	out  *bufio.Reader
	done chan error
}

func startSession(t *testing.T, opts Options) *session {
	t.Helper()
	return startSessionAt(t, opts, "2025-06-18")
}

// startSessionAt starts a session that negotiates protocol version
// version; "" leaves it uninitialized.
func startSessionAt(t *testing.T, opts Options, version string) *session {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "guard-test", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "echo", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var args struct {
				DelayMs int `json:"delayMs"`
			}
			_ = json.Unmarshal(req.Params.Arguments, &args)
			if args.DelayMs > 0 {
				select {
				case <-time.After(time.Duration(args.DelayMs) * time.Millisecond):
				case <-ctx.Done():
				}
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
		})
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	s := &session{t: t, in: inW, out: bufio.NewReaderSize(outR, 1<<20), done: make(chan error, 1)}
	go func() {
		s.done <- srv.Run(context.Background(), New(inR, outW, opts))
		outW.Close()
	}()
	// Closing the reading end too ends any answer still being written
	// when a test stops reading (a late answer nobody waits for).
	t.Cleanup(func() { inW.Close(); outR.Close() })
	if version == "" {
		return s
	}
	s.send(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"` + version + `","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	if m := s.await(`"init"`); !strings.Contains(string(m["result"]), `"protocolVersion":"`+version+`"`) {
		t.Fatalf("initialize at %s: %v", version, m)
	}
	s.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return s
}

// recvLine returns the next line the server wrote, as written.
func (s *session) recvLine() string {
	s.t.Helper()
	line, err := s.out.ReadBytes('\n')
	if err != nil {
		s.t.Fatalf("read: %v (server ended: %v)", err, s.ended())
	}
	return strings.TrimSuffix(string(line), "\n")
}

func (s *session) send(line string) {
	s.t.Helper()
	if _, err := io.WriteString(s.in, line+"\n"); err != nil {
		s.t.Fatalf("write: %v", err)
	}
}

// recv returns the next line the server wrote.
func (s *session) recv() map[string]json.RawMessage {
	s.t.Helper()
	line, err := s.out.ReadBytes('\n')
	if err != nil {
		s.t.Fatalf("read: %v (server ended: %v)", err, s.ended())
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(line, &m); err != nil {
		s.t.Fatalf("server wrote %q: %v", line, err)
	}
	return m
}

func (s *session) ended() error {
	select {
	case err := <-s.done:
		return err
	default:
		return nil
	}
}

// await reads lines until the answer with this id, returning it.
func (s *session) await(id string) map[string]json.RawMessage {
	s.t.Helper()
	for {
		m := s.recv()
		if string(m["id"]) == id {
			return m
		}
	}
}

func TestHostileFramesGetAnswersAndTheSessionGoesOn(t *testing.T) {
	s := startSession(t, Options{})
	hostile := []struct {
		line string
		id   string // the id the answer must carry
		want string // fragment of the answer
	}{
		{`{"jsonrpc":"2.0","id":101,"method":"tools/call","params":{"name":"echo","arguments":` + nested(1200, "1") + `}}`, "101", `"code":-32602`},
		{`{"jsonrpc":"2.0","id":102,"method":"tools/call","params":{"name":"echo","arguments":{"a":` + nested(100000, "0") + `}}}`, "102", `"code":-32602`},
		{`{"jsonrpc":"2.0","id":1e400,"method":"ping"}`, "1e400", `"result"`},
		{`{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"ping"}`, "123456789012345678901234567890", `"result"`},
		{`{"jsonrpc":"2.0","id":1.25,"method":"ping"}`, "1.25", `"result"`},
		{`{"jsonrpc":"2.0","id":-0,"method":"ping"}`, "-0", `"result"`},
		{`{"jsonrpc":"2.0","id":null,"method":"ping"}`, "null", `"code":-32600`},
		{`{"jsonrpc":"2.0","id":"` + strings.Repeat("x", 1<<20) + `","method":"ping"}`, `"` + strings.Repeat("x", 1<<20) + `"`, `"result"`},
		{`{"jsonrpc":"2.0","id":103,"method":"ping","params":"oops"}`, "103", `"code":-32602`},
		{`{"jsonrpc":"2.0","id":104,"method":"tools/call","params":{"name":"nope"}}`, "104", `"error"`},
		{`{"jsonrpc":"2.0","id":105,"method":"tools/call","params":{"name":"echo","arguments":3}}`, "105", `"id":105`},
		{`{"jsonrpc":"2.0","id":106,"method":"tools/call","params":{"name":"echo","_meta":{"progressToken":1e400}}}`, "106", `"id":106`},
		{`{"jsonrpc":"2.0","id":107,"method":"initialize","params":{"protocolVersion":7}}`, "107", `"id":107`},
	}
	for i, h := range hostile {
		s.send(h.line)
		got := s.await(h.id)
		raw, _ := json.Marshal(got)
		if !strings.Contains(string(raw), h.want) {
			t.Errorf("frame %d: answer %.300s, want %s", i, raw, h.want)
		}
		// The session goes on.
		ping := fmt.Sprintf(`"after-%d"`, i)
		s.send(`{"jsonrpc":"2.0","id":` + ping + `,"method":"ping"}`)
		if m := s.await(ping); m["result"] == nil {
			t.Fatalf("ping after frame %d: %v", i, m)
		}
	}
	// A second call with an id still in flight gets an answer of its own.
	s.send(`{"jsonrpc":"2.0","id":200,"method":"tools/call","params":{"name":"echo","arguments":{"delayMs":300}}}`)
	s.send(`{"jsonrpc":"2.0","id":200,"method":"ping"}`)
	first := s.await("200")
	second := s.await("200")
	if first["error"] == nil || !strings.Contains(string(first["error"]), "in flight") || second["result"] == nil {
		t.Errorf("duplicate id: first %v, second %v", first, second)
	}
	if err := s.ended(); err != nil {
		t.Fatalf("server ended: %v", err)
	}
}

func TestEOFDrainsAnswersOfRequestsAlreadyRead(t *testing.T) {
	s := startSession(t, Options{})
	for i := range 5 {
		s.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"delayMs":%d}}}`, 300+i, 50*i))
	}
	s.send(`{"jsonrpc":"2.0","id":1e400,"method":"tools/call","params":{"name":"echo","arguments":{"delayMs":100}}}`)
	s.in.Close()
	seen := map[string]bool{}
	for len(seen) < 6 {
		m := s.recv()
		if m["result"] == nil {
			t.Fatalf("answer %v", m)
		}
		seen[string(m["id"])] = true
	}
	if !seen["1e400"] || !seen["304"] {
		t.Errorf("answered %v", seen)
	}
	if err := <-s.done; err != nil {
		t.Errorf("Run after EOF = %v, want nil", err)
	}
}

func TestDrainIsBounded(t *testing.T) {
	s := startSession(t, Options{DrainTimeout: 50 * time.Millisecond})
	s.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"delayMs":600000}}}`)
	s.in.Close()
	go func() { _, _ = io.Copy(io.Discard, s.out) }()
	select {
	case <-s.done:
	case <-time.After(30 * time.Second):
		t.Fatal("server still running 30 s after EOF with a 50 ms drain bound")
	}
}

func TestCancelledCallIsNotWaitedFor(t *testing.T) {
	s := startSession(t, Options{})
	s.send(`{"jsonrpc":"2.0","id":1e400,"method":"tools/call","params":{"name":"echo","arguments":{"delayMs":600000}}}`)
	s.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1e400}}`)
	s.in.Close()
	go func() { _, _ = io.Copy(io.Discard, s.out) }()
	select {
	case <-s.done:
	case <-time.After(30 * time.Second):
		t.Fatal("a cancelled call held the drain")
	}
}

func TestLinesNeverInterleave(t *testing.T) {
	var out bytes.Buffer
	g := newGuard(&out, Options{})
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // the SDK writes one message at a time, possibly in pieces
		defer wg.Done()
		for i := range 50 {
			line := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"pad":"%s"}}`+"\n", i, strings.Repeat("y", 1000))
			_, _ = g.Write([]byte(line[:10]))
			_, _ = g.Write([]byte(line[10:]))
		}
	}()
	go func() { // the pump answers malformed lines meanwhile
		defer wg.Done()
		for range 50 {
			g.answer(&refusal{code: codeParseError, msg: "Parse error"})
		}
	}()
	wg.Wait()
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 100 {
		t.Fatalf("%d lines, want 100", len(lines))
	}
	for _, line := range lines {
		if !json.Valid([]byte(line)) {
			t.Fatalf("interleaved line %.100q", line)
		}
	}
}

// FuzzFrames checks the frame layer's promise on any input line: it is
// either answered by the guard with a well-formed JSON-RPC error, or
// forwarded as a message the SDK decodes (so the session cannot end on it).
func FuzzFrames(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"echo","arguments":{"a":[1,2,{"b":null}]}}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1e400}}`,
		`{"jsonrpc":"2.0","id":7,"result":{"ok":true}}`,
		`{"jsonrpc":"2.0","id":8,"error":{"code":-1,"message":"m","data":[1]}}`,
		`{"jsonrpc":"2.0","id":1e400,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":null,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":2,"method":"ping","params":` + nested(999, "") + `}`,
		`{"jsonrpc":"2.0","id":2,"method":"ping","params":` + nested(1001, "") + `}`,
		`{"jsonrpc":"2\u002e0","\u0069d":3,"method":"ping"}`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`,
		`{"jsonrpc":"2.0","id":"\ud800","method":"p\u0000"}`,
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"a\":\"\x01\"}}",
		`{"jsonrpc":"2.0","id":-0.0e-0,"method":"ping"}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		if bytes.IndexByte(line, '\n') >= 0 || len(bytes.TrimSpace(line)) == 0 {
			return
		}
		line = sanitize(line)
		msg, ref := inspect(line)
		if ref != nil {
			if ref.silent {
				if bytes.Contains(line, []byte(`"method"`)) && !bytes.Contains(line, []byte(`"result"`)) && !bytes.Contains(line, []byte(`"error"`)) {
					// A request is never dropped silently; only responses are.
					if _, err := jsonrpc.DecodeMessage(line); err == nil {
						if m, _ := jsonrpc.DecodeMessage(line); m != nil {
							if _, isReq := m.(*jsonrpc.Request); isReq {
								t.Fatalf("request dropped without an answer: %q", line)
							}
						}
					}
				}
				return
			}
			answer := errorAnswer(ref.id, ref.code, ref.msg)
			var a struct {
				JSONRPC string          `json:"jsonrpc"`
				ID      json.RawMessage `json:"id"`
				Error   struct {
					Code    int    `json:"code"`
					Message string `json:"message"`
				} `json:"error"`
			}
			if err := json.Unmarshal(answer, &a); err != nil || a.JSONRPC != "2.0" || a.Error.Code == 0 || a.Error.Message == "" {
				t.Fatalf("answer %q to %q is not a JSON-RPC error: %v", answer, line, err)
			}
			return
		}
		fwd := line
		if msg.isCall && msg.idKind == idOther {
			fwd = splice(line, msg.idStart, msg.idStart+len(msg.id), []byte(`"interop-id-fuzz-1"`))
		}
		m, err := jsonrpc.DecodeMessage(fwd)
		if err != nil {
			t.Fatalf("forwarded %q, which the SDK cannot decode: %v", fwd, err)
		}
		if req, ok := m.(*jsonrpc.Request); ok && msg.isCall && !req.IsCall() {
			t.Fatalf("forwarded call %q became a notification", fwd)
		}
	})
}
