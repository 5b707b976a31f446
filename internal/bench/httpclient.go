package bench

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
	"sync/atomic"
	"time"

	"github.com/agent-interop/runtime/internal/jsonrpc"
)

// HTTPStatusError is a non-2xx answer of the HTTP server.
type HTTPStatusError struct {
	Status int
	Body   string
}

func (e *HTTPStatusError) Error() string {
	return fmt.Sprintf("HTTP %d: %s", e.Status, truncate([]byte(e.Body), 200))
}

// HTTPSession is one MCP session over Streamable HTTP, spoken by hand so
// every request's status and latency are seen exactly: POST a JSON-RPC
// message, read the answer (an SSE stream or JSON) up to the response
// with the request's id.
type HTTPSession struct {
	url    string
	token  string
	client *http.Client
	id     string // Mcp-Session-Id once initialized
	nextID atomic.Int64
}

// NewHTTPTransport is a keep-alive transport for many sessions against one
// loopback server; it never uses a proxy.
func NewHTTPTransport(conns int) *http.Transport {
	return &http.Transport{MaxIdleConns: conns, MaxIdleConnsPerHost: conns, IdleConnTimeout: time.Minute, DisableCompression: true}
}

// NewHTTPSession prepares a session on url; Initialize opens it.
func NewHTTPSession(url, token string, client *http.Client) *HTTPSession {
	return &HTTPSession{url: url, token: token, client: client}
}

// ID is the session id the server assigned.
func (s *HTTPSession) ID() string { return s.id }

// Initialize sends initialize and notifications/initialized; the exchange
// is the initialize round trip.
func (s *HTTPSession) Initialize(ctx context.Context, protocol string) (Exchange, error) {
	ex, err := s.Call(ctx, "initialize", map[string]any{"protocolVersion": protocol, "capabilities": map[string]any{}, "clientInfo": clientInfo()})
	if err != nil {
		return ex, err
	}
	if s.id == "" {
		return ex, errors.New("initialize answered without an Mcp-Session-Id")
	}
	return ex, s.Notify(ctx, "notifications/initialized", nil)
}

// Call sends a request and waits for its response.
func (s *HTTPSession) Call(ctx context.Context, method string, params any) (Exchange, error) {
	id := s.nextID.Add(1)
	body, err := jsonrpc.EncodeRequest(id, method, params)
	if err != nil {
		return Exchange{}, err
	}
	ex := Exchange{Sent: time.Now()}
	resp, err := s.post(ctx, body)
	if err != nil {
		return ex, err
	}
	defer resp.Body.Close()
	if method == "initialize" {
		s.id = resp.Header.Get("Mcp-Session-Id")
	}
	msg, recv, err := readResponse(resp, id)
	ex.Recv = recv
	// Read the rest of the answer (the end of an SSE stream, which the
	// server sends right after the response) so the connection goes back
	// to the pool: net/http closes a connection whose body is closed
	// unread, and the next request would pay for a new one.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return ex, fmt.Errorf("%s: %w", method, err)
	}
	if msg.Error != nil {
		return ex, fmt.Errorf("%s: %w", method, msg.Error)
	}
	ex.Result = msg.Result
	return ex, nil
}

// Notify sends a notification; the server answers 202.
func (s *HTTPSession) Notify(ctx context.Context, method string, params any) error {
	body, err := jsonrpc.EncodeRequest(-1, method, params)
	if err != nil {
		return err
	}
	resp, err := s.post(ctx, body)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusAccepted {
		return &HTTPStatusError{Status: resp.StatusCode}
	}
	return nil
}

// Close ends the session with DELETE.
func (s *HTTPSession) Close(ctx context.Context) error {
	if s.id == "" {
		return nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, s.url, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+s.token)
	req.Header.Set("Mcp-Session-Id", s.id)
	resp, err := s.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode/100 != 2 {
		return &HTTPStatusError{Status: resp.StatusCode}
	}
	return nil
}

func (s *HTTPSession) post(ctx context.Context, body []byte) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+s.token)
	if s.id != "" {
		req.Header.Set("Mcp-Session-Id", s.id)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		resp.Body.Close()
		return nil, &HTTPStatusError{Status: resp.StatusCode, Body: string(b)}
	}
	return resp, nil
}

// readResponse reads the response to request id from resp's body, plain
// JSON or an SSE stream, and when its last byte was read: the latency
// ends there, before the message is decoded, as the stdio client stamps a
// line when it is read (jsonrpc.Conn), so both transports' figures leave
// out the client's decoding alike.
func readResponse(resp *http.Response, id int64) (*jsonrpc.Message, time.Time, error) {
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b, err := io.ReadAll(resp.Body)
		recv := time.Now()
		if err != nil {
			return nil, recv, err
		}
		m, err := jsonrpc.DecodeMessage(b)
		if err != nil {
			return nil, recv, err
		}
		if !m.IsResponseTo(id) {
			return nil, recv, fmt.Errorf("answer %s is not the response to request %d", truncate(b, 200), id)
		}
		return m, recv, nil
	}
	r := bufio.NewReaderSize(resp.Body, 64<<10)
	var data []byte
	for {
		l, err := r.ReadBytes('\n')
		l = bytes.TrimRight(l, "\r\n")
		switch {
		case bytes.HasPrefix(l, []byte("data:")):
			if len(data) > 0 {
				data = append(data, '\n') // SSE joins data lines with a newline
			}
			data = append(data, bytes.TrimPrefix(bytes.TrimPrefix(l, []byte("data:")), []byte(" "))...)
		case len(l) == 0 && len(data) > 0:
			recv := time.Now()
			m, derr := jsonrpc.DecodeMessage(data)
			data = nil
			if derr != nil {
				return nil, recv, derr
			}
			if m.IsResponseTo(id) {
				return m, recv, nil
			}
			if m.Method == "" {
				return nil, recv, fmt.Errorf("a response to another request (id %s) on request %d's stream", m.ID, id)
			}
		}
		if err != nil {
			return nil, time.Now(), fmt.Errorf("the stream ended before the response to request %d: %w", id, err)
		}
	}
}

// toolResult is the part of a tools/call result the benchmark reads.
type toolResult struct {
	IsError           bool            `json:"isError"`
	StructuredContent json.RawMessage `json:"structuredContent"`
	Content           []struct {
		Text string `json:"text"`
	} `json:"content"`
}
