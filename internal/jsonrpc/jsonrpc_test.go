package jsonrpc

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

// peer is the far end of a net.Pipe, read line by line.
type peer struct {
	conn net.Conn
	r    *bufio.Reader
}

func newPair(t *testing.T, opts Options) (*Conn, *peer) {
	t.Helper()
	a, b := net.Pipe()
	c := NewConn(a, opts)
	t.Cleanup(func() { c.Close(); b.Close() })
	return c, &peer{conn: b, r: bufio.NewReader(b)}
}

func (p *peer) readMsg(t *testing.T) map[string]any {
	t.Helper()
	line, err := p.r.ReadBytes('\n')
	if err != nil {
		t.Fatalf("peer read: %v", err)
	}
	var m map[string]any
	if err := json.Unmarshal(line, &m); err != nil {
		t.Fatalf("peer decode %q: %v", line, err)
	}
	return m
}

func (p *peer) send(t *testing.T, s string) {
	t.Helper()
	if _, err := io.WriteString(p.conn, s+"\n"); err != nil {
		t.Fatalf("peer write: %v", err)
	}
}

func TestCallWithoutVersionFieldAndSeparateIDSpaces(t *testing.T) {
	got := make(chan *Request, 4)
	c, p := newPair(t, Options{Handler: func(r *Request) { got <- r }})
	done := make(chan error, 1)
	var res struct{ OK bool }
	go func() { done <- c.Call(context.Background(), "thread/list", map[string]any{}, &res) }()
	m := p.readMsg(t)
	if m["jsonrpc"] != "2.0" || m["method"] != "thread/list" {
		t.Fatalf("request = %v", m)
	}
	id := m["id"].(float64)
	// A server request that reuses the same id number must not answer the call.
	p.send(t, `{"id":`+jsonNum(id)+`,"method":"item/commandExecution/requestApproval","params":{"x":1}}`)
	r := <-got
	if r.Method != "item/commandExecution/requestApproval" || string(r.ID) != jsonNum(id) {
		t.Fatalf("server request = %+v", r)
	}
	select {
	case err := <-done:
		t.Fatalf("call answered by a server request: %v", err)
	default:
	}
	p.send(t, `{"id":`+jsonNum(id)+`,"result":{"OK":true}}`) // no "jsonrpc" field
	if err := <-done; err != nil || !res.OK {
		t.Fatalf("call = %v, %+v", err, res)
	}
	// Reply to the server request goes back with the server's id.
	go func() { _ = c.Reply(r.ID, map[string]string{"decision": "accept"}) }()
	m = p.readMsg(t)
	if m["id"].(float64) != id || m["result"].(map[string]any)["decision"] != "accept" {
		t.Fatalf("reply = %v", m)
	}
}

func jsonNum(f float64) string { b, _ := json.Marshal(f); return string(b) }

func TestMethodNotSupported(t *testing.T) {
	cases := []struct {
		err  error
		want bool
	}{
		{&Error{Code: -32601, Message: "Method not found"}, true},
		{&Error{Code: -32600, Message: "Invalid request: unknown variant `bogus/x`, expected one of `initialize`"}, true},
		{&Error{Code: -32600, Message: "Invalid Request"}, true},
		{&Error{Code: -32600, Message: "Invalid request: missing field `threadId`"}, false},
		{&Error{Code: -32600, Message: "no active turn to interrupt"}, false},
		{&Error{Code: -32603, Message: "Internal error"}, false},
		{errors.New("other"), false},
	}
	for _, tc := range cases {
		if got := IsMethodNotSupported(tc.err); got != tc.want {
			t.Errorf("IsMethodNotSupported(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

func TestCallErrorsSayWhetherSent(t *testing.T) {
	c, p := newPair(t, Options{})
	// Timeout after the request left: Sent = true.
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	errc := make(chan error, 1)
	go func() { errc <- c.Call(ctx, "turn/start", nil, nil) }()
	p.readMsg(t)
	err := <-errc
	var ce *CallError
	if !errors.As(err, &ce) || !ce.Sent || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("timeout error = %#v", err)
	}
	// Connection lost after the request left: Sent = true.
	go func() { errc <- c.Call(context.Background(), "turn/start", nil, nil) }()
	p.readMsg(t)
	p.conn.Close()
	err = <-errc
	if !errors.As(err, &ce) || !ce.Sent {
		t.Fatalf("lost error = %#v", err)
	}
	<-c.Done()
	// Closed before the call: Sent = false.
	err = c.Call(context.Background(), "turn/start", nil, nil)
	if !errors.As(err, &ce) || ce.Sent || WasSent(err) {
		t.Fatalf("closed error = %#v", err)
	}
	// A peer error answer counts as sent.
	if !WasSent(&Error{Code: 1}) {
		t.Fatal("peer error must count as sent")
	}
}

func TestUnknownRequestWithoutHandlerGetsMethodNotFound(t *testing.T) {
	_, p := newPair(t, Options{OmitVersion: true})
	p.send(t, `{"id":"abc","method":"weird/thing","params":{}}`)
	m := p.readMsg(t)
	if _, ok := m["jsonrpc"]; ok {
		t.Fatalf("OmitVersion ignored: %v", m)
	}
	if m["id"] != "abc" || m["error"].(map[string]any)["code"].(float64) != -32601 {
		t.Fatalf("answer = %v", m)
	}
}

func TestLateAnswerToAbandonedCallIsIgnored(t *testing.T) {
	var next int64
	c, p := newPair(t, Options{NextID: func() int64 { next++; return next }})
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- c.Call(ctx, "a", nil, nil) }()
	first := p.readMsg(t)
	cancel()
	<-errc
	go func() { errc <- c.Call(context.Background(), "b", nil, nil) }()
	second := p.readMsg(t)
	if first["id"] == second["id"] {
		t.Fatal("ids reused")
	}
	p.send(t, `{"id":`+jsonNum(first["id"].(float64))+`,"error":{"code":1,"message":"late"}}`)
	p.send(t, `{"id":`+jsonNum(second["id"].(float64))+`,"result":{}}`)
	if err := <-errc; err != nil {
		t.Fatalf("second call got %v", err)
	}
}

func TestNonJSONLinesIgnoredAndLongLines(t *testing.T) {
	c, p := newPair(t, Options{})
	errc := make(chan error, 1)
	var res struct{ S string }
	go func() { errc <- c.Call(context.Background(), "x", nil, &res) }()
	m := p.readMsg(t)
	p.send(t, "WARNING: not json")
	long := strings.Repeat("y", 200<<10)
	p.send(t, `{"id":`+jsonNum(m["id"].(float64))+`,"result":{"S":"`+long+`"}}`)
	if err := <-errc; err != nil || len(res.S) != len(long) {
		t.Fatalf("call = %v len %d", err, len(res.S))
	}
}
