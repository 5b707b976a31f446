package httpserve

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agent-interop/runtime/internal/testutil/testclock"
	"github.com/agent-interop/runtime/internal/testutil/wait"
)

// TestIdleConnsTrack: an idle connection is stamped, any other state
// forgets it, and closeIdle closes those idle long enough, only those.
func TestIdleConnsTrack(t *testing.T) {
	clock := testclock.At(t, time.Unix(1_700_000_000, 0))
	c := newIdleConns(clock)
	pipe := func() (net.Conn, net.Conn) {
		a, b := net.Pipe()
		t.Cleanup(func() { a.Close(); b.Close() })
		return a, b
	}
	old, oldPeer := pipe()
	recent, recentPeer := pipe()
	busy, _ := pipe()
	c.track(old, http.StateIdle)
	clock.Advance(3 * time.Minute)
	for _, tt := range []struct {
		conn  net.Conn
		state http.ConnState
	}{
		{recent, http.StateNew},
		{recent, http.StateIdle},
		{busy, http.StateIdle},
		{busy, http.StateActive},
	} {
		c.track(tt.conn, tt.state)
	}
	if n := c.count(); n != 2 {
		t.Fatalf("%d idle connections, want 2 (old and recent)", n)
	}
	if n := c.closeIdle(2 * time.Minute); n != 1 {
		t.Fatalf("closed %d connections idle for 2 minutes, want 1", n)
	}
	if _, err := oldPeer.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
		t.Errorf("the old connection's peer reads %v, want EOF", err)
	}
	_ = recentPeer.SetReadDeadline(time.Now().Add(10 * time.Millisecond))
	if _, err := recentPeer.Read(make([]byte, 1)); errors.Is(err, io.EOF) {
		t.Errorf("the recent connection was closed")
	}
	c.track(recent, http.StateClosed)
	if n := c.count(); n != 0 {
		t.Fatalf("%d idle connections after the last closed, want 0", n)
	}
}

// TestServeClosesIdleConnections: Serve closes a keep-alive connection
// once it has waited ConnIdle for its next request, on the handler's
// clock, and not before; a request in between starts the wait again.
func TestServeClosesIdleConnections(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	clock := testclock.At(t, time.Unix(1_700_000_000, 0))
	trap := clock.Trap().TickerFunc("httpserve", "idle-conns")
	defer trap.Close()
	s := start(t, testOptions{clock: clock, serve: ServeOptions{ConnIdle: 4 * time.Minute}})
	if call := trap.MustWait(ctx); call.Duration != time.Minute {
		t.Fatalf("idle connections checked every %v, want 1m (ConnIdle/4)", call.Duration)
	} else {
		call.MustRelease(ctx)
	}
	conn, err := net.Dial("tcp", strings.TrimPrefix(s.base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second)) // safety bound only
	r := bufio.NewReader(conn)
	health := func() error {
		if _, err := io.WriteString(conn, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"); err != nil {
			return err
		}
		resp, err := http.ReadResponse(r, nil)
		if err != nil {
			return err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return errors.New(resp.Status)
		}
		return nil
	}
	awaitIdle := func() {
		wait.For(t, "the connection to wait idle", wait.InProcess, func() bool { return s.h.conns.count() == 1 })
	}
	if err := health(); err != nil {
		t.Fatal(err)
	}
	awaitIdle()
	for range 3 {
		clock.Advance(time.Minute).MustWait(ctx)
	}
	if err := health(); err != nil {
		t.Fatalf("after 3 idle minutes of 4: %v", err)
	}
	awaitIdle()
	for range 3 {
		clock.Advance(time.Minute).MustWait(ctx)
	}
	if n := s.h.conns.count(); n != 1 {
		t.Fatalf("%d idle connections after 3 more minutes, want 1", n)
	}
	clock.Advance(time.Minute).MustWait(ctx)
	if _, err := r.ReadByte(); !errors.Is(err, io.EOF) {
		t.Fatalf("after 4 idle minutes the connection reads %v, want EOF", err)
	}
	if n := s.h.conns.count(); n != 0 {
		t.Fatalf("%d idle connections after the close, want 0", n)
	}
}
