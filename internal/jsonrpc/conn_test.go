package jsonrpc

import (
	"bufio"
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agent-interop/runtime/internal/testutil/testclock"
	"github.com/agent-interop/runtime/internal/testutil/wait"
)

func guardCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait.InProcess)
	t.Cleanup(cancel)
	return ctx
}

// TestExchangeReportsTheWriteInstant: written runs once the request is
// written and before any answer; Sent and Recv come from the clock.
func TestExchangeReportsTheWriteInstant(t *testing.T) {
	clock := testclock.At(t, time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))
	c, p := newPair(t, Options{Clock: clock})
	wrote := make(chan struct{})
	type result struct {
		ex  Exchange
		err error
	}
	done := make(chan result, 1)
	go func() {
		ex, err := c.Exchange(guardCtx(t), "session/prompt", map[string]string{"text": "hi"}, func() { close(wrote) })
		done <- result{ex, err}
	}()
	m := p.readMsg(t)
	select {
	case <-wrote:
	case <-guardCtx(t).Done():
		t.Fatal("written did not run after the request was written")
	}
	clock.Advance(1500 * time.Millisecond)
	p.send(t, `{"id":`+jsonNum(m["id"].(float64))+`,"result":{"stopReason":"end_turn"}}`)
	r := <-done
	if r.err != nil || string(r.ex.Result) != `{"stopReason":"end_turn"}` || r.ex.Latency() != 1500*time.Millisecond {
		t.Fatalf("exchange = %+v (latency %v), %v", r.ex, r.ex.Latency(), r.err)
	}
}

// TestInboundQueueKeepsOrderAndNeverStallsTheReader: a handler that
// blocks does not stop the reader, and what the peer sent before an
// answer is handled before the call returns.
func TestInboundQueueKeepsOrderAndNeverStallsTheReader(t *testing.T) {
	release := make(chan struct{})
	var mu sync.Mutex
	var seen []string
	c, p := newPair(t, Options{Handler: func(r *Request) {
		if r.Method == "first" {
			<-release
		}
		mu.Lock()
		seen = append(seen, r.Method)
		mu.Unlock()
	}})
	done := make(chan error, 1)
	go func() { done <- c.Call(guardCtx(t), "ask", nil, nil) }()
	m := p.readMsg(t)
	// net.Pipe is synchronous: each of these writes returns only once the
	// reader took it, so they finish (before the deadline fails them) only
	// if the blocked handler does not hold the reader.
	if err := p.conn.SetWriteDeadline(time.Now().Add(wait.InProcess)); err != nil {
		t.Fatal(err)
	}
	p.send(t, `{"method":"first"}`)
	for range 20 {
		p.send(t, `{"method":"later"}`)
	}
	p.send(t, `{"id":`+jsonNum(m["id"].(float64))+`,"result":{}}`)
	select {
	case <-done:
		t.Fatal("the answer overtook the notifications sent before it")
	default:
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 21 || seen[0] != "first" {
		t.Fatalf("handled %d notifications before the answer (%v), want all 21 in order", len(seen), seen)
	}
}

func TestStrictEndsOnAForeignLine(t *testing.T) {
	c, p := newPair(t, Options{Strict: true, Peer: "the server"})
	errc := make(chan error, 1)
	go func() { errc <- c.Call(guardCtx(t), "tools/list", nil, nil) }()
	p.readMsg(t)
	p.send(t, `log: listening on stdout by mistake`)
	err := <-errc
	var ce *CallError
	if !errors.As(err, &ce) || !ce.Sent || !strings.Contains(err.Error(), "not a JSON-RPC message") {
		t.Fatalf("err = %v", err)
	}
	// A message without "jsonrpc":"2.0" is foreign too.
	c2, p2 := newPair(t, Options{Strict: true})
	go func() { errc <- c2.Call(guardCtx(t), "tools/list", nil, nil) }()
	m := p2.readMsg(t)
	p2.send(t, `{"id":`+jsonNum(m["id"].(float64))+`,"result":{}}`)
	if err := <-errc; err == nil || !strings.Contains(err.Error(), "not a JSON-RPC 2.0 message") {
		t.Fatalf("answer without a version: %v", err)
	}
}

func TestOversizeLinesEndOrAreDropped(t *testing.T) {
	long := `{"method":"` + strings.Repeat("x", 200) + `"}`
	c, p := newPair(t, Options{MaxMessageBytes: 100, DropOversize: true})
	errc := make(chan error, 1)
	go func() { errc <- c.Call(guardCtx(t), "x", nil, nil) }()
	m := p.readMsg(t)
	p.send(t, long)
	p.send(t, `{"id":`+jsonNum(m["id"].(float64))+`,"result":{}}`)
	if err := <-errc; err != nil {
		t.Fatalf("dropped line broke the call: %v", err)
	}

	c2, p2 := newPair(t, Options{MaxMessageBytes: 100})
	go func() { errc <- c2.Call(guardCtx(t), "x", nil, nil) }()
	p2.readMsg(t)
	go io.WriteString(p2.conn, long+"\n") // the conn may end before taking all of it
	if err := <-errc; err == nil || !strings.Contains(err.Error(), "larger than 100 bytes") {
		t.Fatalf("oversized line: %v", err)
	}
}

func TestEndOfInputIsWordedForThePeer(t *testing.T) {
	pr, pw := io.Pipe()
	c := New(pr, io.Discard, Options{Peer: "agent"})
	pw.Close()
	<-c.Done()
	if err := c.Err(); err == nil || err.Error() != "agent closed its output" {
		t.Fatalf("Err = %v", err)
	}
	pr2, pw2 := io.Pipe()
	c2 := New(pr2, io.Discard, Options{})
	pw2.CloseWithError(errors.New("pipe broke"))
	<-c2.Done()
	if err := c2.Err(); err == nil || !strings.Contains(err.Error(), "jsonrpc: connection lost: pipe broke") {
		t.Fatalf("Err = %v", err)
	}
}

func TestReadLine(t *testing.T) {
	in := strings.Repeat("y", 50) + "\n" + "a\r\n" + "\n" + "tail"
	br := bufio.NewReaderSize(strings.NewReader(in), 16) // lines span buffer refills
	type got struct {
		line    string
		tooLong bool
		err     error
	}
	want := []got{{"", true, nil}, {"a", false, nil}, {"", false, nil}, {"tail", false, io.EOF}}
	for i, w := range want {
		line, tooLong, err := ReadLine(br, 20)
		if string(line) != w.line || tooLong != w.tooLong || !errors.Is(err, w.err) && err != w.err {
			t.Errorf("line %d = %q, %v, %v; want %q, %v, %v", i, line, tooLong, err, w.line, w.tooLong, w.err)
		}
	}
}

// TestInspectSeesEveryLineInOrderBeforeTheAnswer: Inspect tells JSON-RPC
// messages from other lines (text, JSON that carries no JSON-RPC member,
// null) and runs, in input order, before a response reaches its caller.
func TestInspectSeesEveryLineInOrderBeforeTheAnswer(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	c, p := newPair(t, Options{Inspect: func(line []byte, m *Message) {
		kind := "message"
		if m == nil {
			kind = "stray"
		}
		mu.Lock()
		seen = append(seen, kind+" "+string(line))
		mu.Unlock()
	}})
	done := make(chan error, 1)
	go func() { done <- c.Call(guardCtx(t), "ask", nil, nil) }()
	m := p.readMsg(t)
	lines := []string{
		`Welcome to my agent!`,
		`{"level":"info","msg":"starting"}`,
		`null`,
		`42`,
		`{"jsonrpc":"2.0","method":"note"}`,
		`{"id":` + jsonNum(m["id"].(float64)) + `,"result":{}}`,
	}
	for _, l := range lines {
		p.send(t, l)
	}
	if err := wait.Recv(t, "the answer", wait.InProcess, done); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	got := append([]string(nil), seen...)
	mu.Unlock()
	want := []string{"stray " + lines[0], "stray " + lines[1], "stray " + lines[2], "stray " + lines[3], "message " + lines[4], "message " + lines[5]}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("inspected:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
