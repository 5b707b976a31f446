// Package directhttp is an http.RoundTripper that writes each request and
// reads its answer in the caller's goroutine, for benchmarks that measure
// an HTTP server as a pipe is measured (interop-bench's HTTP latency, the
// httpserve benchmarks). It is test support: nothing in the runtime uses
// it.
package directhttp

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"
)

// Transport is an http.RoundTripper for one client making one request
// at a time to one loopback server: one keep-alive HTTP/1.1 connection,
// the request written and the answer read in the caller's goroutine. The
// latency measurement uses it so a call's figure holds the server's work
// and as little client as the stdio measurement's (a line written, a line
// read): net/http's own Transport hands each request to a writer goroutine
// and each answer from a reader goroutine to the caller, two goroutine
// wake-ups per call that a pipe does not have, which on a loaded machine
// cost as much as the server's share. The load test keeps net/http's
// Transport, as a real client would.
type Transport struct {
	mu   sync.Mutex // held from a request until its body is closed
	conn net.Conn
	r    *bufio.Reader
	w    *bufio.Writer
}

// RoundTrip sends req on the connection (dialling it first when there is
// none) and reads the answer's head; closing the answer's body reads the
// rest, so the connection is ready for the next request.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	t.mu.Lock()
	resp, err := t.roundTrip(req)
	if err != nil {
		t.drop()
		t.mu.Unlock()
		if req.Body != nil {
			_ = req.Body.Close()
		}
		return nil, err
	}
	resp.Body = &directBody{ReadCloser: resp.Body, t: t, reuse: !resp.Close}
	return resp, nil
}

func (t *Transport) roundTrip(req *http.Request) (*http.Response, error) {
	if t.conn == nil {
		var d net.Dialer
		c, err := d.DialContext(req.Context(), "tcp", req.URL.Host)
		if err != nil {
			return nil, fmt.Errorf("dial %s: %w", req.URL.Host, err)
		}
		t.conn, t.r, t.w = c, bufio.NewReaderSize(c, 64<<10), bufio.NewWriterSize(c, 16<<10)
	}
	deadline, _ := req.Context().Deadline()
	if err := t.conn.SetDeadline(deadline); err != nil {
		return nil, err
	}
	if err := req.Write(t.w); err != nil {
		return nil, fmt.Errorf("write request: %w", err)
	}
	if err := t.w.Flush(); err != nil {
		return nil, fmt.Errorf("write request: %w", err)
	}
	resp, err := http.ReadResponse(t.r, req)
	if err != nil {
		return nil, fmt.Errorf("read answer: %w", err)
	}
	return resp, nil
}

// drop closes the connection; the next request dials a new one.
func (t *Transport) drop() {
	if t.conn != nil {
		_ = t.conn.Close()
		t.conn, t.r, t.w = nil, nil, nil
	}
}

// CloseIdleConnections closes the connection.
func (t *Transport) CloseIdleConnections() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.drop()
}

// directBody reads the rest of an answer when closed and releases the
// transport for the next request; an answer not read to its end (or one
// that says Connection: close) drops the connection.
type directBody struct {
	io.ReadCloser
	t     *Transport
	reuse bool
	once  sync.Once
}

func (b *directBody) Close() error {
	b.once.Do(func() {
		_, err := io.Copy(io.Discard, io.LimitReader(b.ReadCloser, 1<<20))
		n, _ := b.ReadCloser.Read(make([]byte, 1))
		if err != nil || n > 0 || !b.reuse {
			b.t.drop()
		} else {
			_ = b.t.conn.SetDeadline(time.Time{})
		}
		_ = b.ReadCloser.Close()
		b.t.mu.Unlock()
	})
	return nil
}
