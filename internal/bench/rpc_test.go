package bench

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agent-interop/runtime/internal/testutil/wait"
)

// requestLog records what a Conn sends and says when the first request
// arrived, so a fake server answers after it, as a real one must.
type requestLog struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	once    sync.Once
	arrived chan struct{}
}

func (l *requestLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	defer l.once.Do(func() { close(l.arrived) })
	return l.buf.Write(p)
}

func (l *requestLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// fakeServer answers through a pipe: whatever the test writes to out.
func fakeServer(t *testing.T) (c *Conn, requests *requestLog, out *io.PipeWriter) {
	t.Helper()
	pr, pw := io.Pipe()
	requests = &requestLog{arrived: make(chan struct{})}
	c = NewConn(requests, pr)
	t.Cleanup(func() {
		pw.Close()
		c.Close()
	})
	return c, requests, pw
}

func TestConnCallSkipsOtherMessages(t *testing.T) {
	c, requests, out := fakeServer(t)
	go func() {
		<-requests.arrived // an answer read before the request was sent has a negative latency
		io.WriteString(out, "\n")
		io.WriteString(out, `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info"}}`+"\n")
		io.WriteString(out, `{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\n")
		io.WriteString(out, `{"jsonrpc":"2.0","id":99,"result":{}}`+"\n")
		io.WriteString(out, `{"jsonrpc":"2.0","id":1,"result":{"ok":true}}`+"\r\n")
	}()
	ex, err := c.Call(callCtx(t), "tools/list", nil)
	if err != nil {
		t.Fatal(err)
	}
	if string(ex.Result) != `{"ok":true}` {
		t.Errorf("result = %s", ex.Result)
	}
	if ex.Latency() < 0 || ex.Recv.IsZero() {
		t.Errorf("latency %v, recv %v", ex.Latency(), ex.Recv)
	}
	if got := requests.String(); got != `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`+"\n" {
		t.Errorf("sent %q", got)
	}
}

func TestConnCallLongLine(t *testing.T) {
	c, requests, out := fakeServer(t)
	long := strings.Repeat("x", 300<<10)
	go func() {
		<-requests.arrived // an answer read before its request was sent matches no call
		io.WriteString(out, `{"jsonrpc":"2.0","id":1,"result":{"s":"`+long+`"}}`+"\n")
	}()
	ex, err := c.Call(callCtx(t), "tools/list", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(ex.Result) != len(long)+8 {
		t.Errorf("result is %d bytes", len(ex.Result))
	}
}

func TestConnCallErrorAnswer(t *testing.T) {
	c, requests, out := fakeServer(t)
	go func() {
		<-requests.arrived
		io.WriteString(out, `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method not found"}}`+"\n")
	}()
	_, err := c.Call(callCtx(t), "nope", nil)
	var rpcErr *RPCError
	if !errors.As(err, &rpcErr) || rpcErr.Code != -32601 {
		t.Fatalf("err = %v", err)
	}
	if !strings.Contains(err.Error(), "nope") {
		t.Errorf("error does not name the method: %v", err)
	}
}

func TestConnCallTimeout(t *testing.T) {
	c, _, _ := fakeServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := c.Call(ctx, "initialize", nil)
		done <- err
	}()
	// The server never answers: only ctx's end can end the call.
	if err := wait.Recv(t, "the call to end with its context", wait.InProcess, done); !errors.Is(err, ErrTimeout) {
		t.Fatalf("err = %v, want ErrTimeout", err)
	}
}

func TestConnCallEOF(t *testing.T) {
	c, _, out := fakeServer(t)
	out.Close()
	_, err := c.Call(callCtx(t), "initialize", nil)
	if err == nil || !strings.Contains(err.Error(), "closed its output") {
		t.Fatalf("err = %v", err)
	}
	// The end of the stream is remembered: the next call fails at once.
	// A call that did not know would wait for an answer until its bound
	// and fail with ErrTimeout; this one fails naming the closed stream.
	if _, err := c.Call(callCtx(t), "tools/list", nil); err == nil || errors.Is(err, ErrTimeout) || !strings.Contains(err.Error(), "closed its output") {
		t.Fatalf("second call: err = %v, want the closed output named at once", err)
	}
}

func TestConnCallPartialLine(t *testing.T) {
	c, _, out := fakeServer(t)
	go func() {
		io.WriteString(out, `{"jsonrpc":"2.0","id":1`)
		out.Close()
	}()
	_, err := c.Call(callCtx(t), "initialize", nil)
	if err == nil || !strings.Contains(err.Error(), "inside a line") {
		t.Fatalf("err = %v", err)
	}
}

func TestConnNotify(t *testing.T) {
	c, requests, _ := fakeServer(t)
	if err := c.Notify("notifications/initialized", nil); err != nil {
		t.Fatal(err)
	}
	if got := requests.String(); got != `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n" {
		t.Errorf("sent %q", got)
	}
}

func TestConnCallCancelled(t *testing.T) {
	c, _, _ := fakeServer(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.Call(ctx, "initialize", nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

func TestConnDrain(t *testing.T) {
	c, _, out := fakeServer(t)
	go func() {
		io.WriteString(out, `{"jsonrpc":"2.0","method":"notifications/message"}`+"\n")
		out.Close()
	}()
	if err := c.Drain(callCtx(t)); err != nil {
		t.Fatal(err)
	}
	if err := c.Drain(callCtx(t)); err != nil {
		t.Fatalf("second Drain: %v", err)
	}

	c2, _, _ := fakeServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := c2.Drain(ctx); !errors.Is(err, ErrTimeout) {
		t.Fatalf("Drain of an open stream: %v", err)
	}
}

// callCtx bounds a call to the fake server generously: a loaded machine
// may be slow to answer through the pipe, and no test here times that.
func callCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), wait.InProcess)
	t.Cleanup(cancel)
	return ctx
}
