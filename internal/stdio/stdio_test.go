package stdio

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-interop/runtime/internal/jsonrpc"
	"github.com/agent-interop/runtime/internal/stdio/frame"
)

func nested(depth int, inner string) string {
	return strings.Repeat("[", depth) + inner + strings.Repeat("]", depth)
}

// session runs a real go-sdk server over the guard and lets a test talk to
// it line by line.
type session struct {
	t    *testing.T
	tr   *Transport
	in   *io.PipeWriter
	out  *bufio.Reader
	done chan error
	// held is sent a value when a call of the hold tool starts; the call
	// answers once release is closed.
	held    chan struct{}
	release chan struct{}
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
	s := &session{t: t, tr: New(inR, outW, opts), in: inW, out: bufio.NewReaderSize(outR, 1<<20), done: make(chan error, 1),
		held: make(chan struct{}, 1), release: make(chan struct{})}
	srv.AddTool(&mcp.Tool{Name: "hold", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			s.held <- struct{}{}
			select {
			case <-s.release:
			case <-ctx.Done():
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "released"}}}, nil
		})
	go func() {
		s.done <- srv.Run(context.Background(), s.tr)
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

// TestInterruptAnswersTheCallInFlightAndEnds: Interrupt ends the input
// while stdin stays open; the call in flight is still answered, then Run
// returns as at EOF.
func TestInterruptAnswersTheCallInFlightAndEnds(t *testing.T) {
	s := startSession(t, Options{InterruptDrain: 10 * time.Minute})
	s.send(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"hold","arguments":{}}}`)
	<-s.held
	s.tr.Interrupt()
	close(s.release)
	if m := s.await("9"); !strings.Contains(string(m["result"]), "released") {
		t.Fatalf("answer to the call in flight: %v", m)
	}
	select {
	case err := <-s.done:
		if err != nil {
			t.Errorf("Run after Interrupt = %v, want nil", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("server still running 30 s after Interrupt")
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
			g.answer(&frame.Refusal{Code: jsonrpc.CodeParseError, Msg: "Parse error"})
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

// TestWritePassesLinesAsWritten holds the guard's writer, which passes the
// lines of a Write straight from it when nothing is buffered, to the bytes
// written: random lines (answers, notifications, substituted-id answers)
// written in random pieces, whole lines, several lines at once and partial
// lines, come out as the lines they make, the substituted ids restored.
func TestWritePassesLinesAsWritten(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for round := range 300 {
		var out bytes.Buffer
		g := newGuard(&out, Options{})
		var in, want bytes.Buffer
		for i := range 1 + rng.IntN(8) {
			switch rng.IntN(3) {
			case 0:
				line := fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"n":%d}}`+"\n", i)
				in.WriteString(line)
				want.WriteString(line)
			case 1:
				line := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"pad":"%s"}}`+"\n", i, strings.Repeat("y", rng.IntN(300)))
				in.WriteString(line)
				want.WriteString(line)
			default: // an answer to a call whose id the guard substituted
				orig := fmt.Sprintf(`"orig-%d"`, i)
				g.mu.Lock()
				sub := fmt.Sprintf(`"%s%d"`, g.idPrefix(), 1000+i)
				key, err := frame.IDKey([]byte(sub))
				if err != nil {
					g.mu.Unlock()
					t.Fatal(err)
				}
				g.subst[key] = []byte(orig)
				g.mu.Unlock()
				fmt.Fprintf(&in, `{"jsonrpc":"2.0","id":%s,"result":{}}`+"\n", sub)
				fmt.Fprintf(&want, `{"jsonrpc":"2.0","id":%s,"result":{}}`+"\n", orig)
			}
		}
		data := in.Bytes()
		for len(data) > 0 {
			n := 1 + rng.IntN(len(data))
			if rng.IntN(3) == 0 { // up to the end of a line
				if i := bytes.IndexByte(data, '\n'); i >= 0 {
					n = i + 1
				}
			}
			piece := append([]byte(nil), data[:n]...)
			if got, err := g.Write(piece); err != nil || got != n {
				t.Fatalf("round %d: Write of %d bytes = %d, %v", round, n, got, err)
			}
			for i := range piece {
				piece[i] = 'X' // the writer must not keep the caller's bytes
			}
			data = data[n:]
		}
		if out.String() != want.String() {
			t.Fatalf("round %d: wrote\n%s\nwant\n%s", round, out.String(), want.String())
		}
	}
}
