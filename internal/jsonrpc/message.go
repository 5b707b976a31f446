package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Standard JSON-RPC error codes.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603
)

// Error is a JSON-RPC error object: a peer's answer to one of our
// requests, or our answer to one of its.
type Error struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *Error) Error() string {
	if len(e.Data) > 0 && string(e.Data) != "null" {
		return fmt.Sprintf("%s (code %d, data %s)", e.Message, e.Code, e.Data)
	}
	return fmt.Sprintf("%s (code %d)", e.Message, e.Code)
}

// IsMethodNotSupported reports whether err is a peer's answer meaning "this
// method is not supported": -32601 always, and -32600 (codex app-server
// answers every unknown method with -32600 "Invalid request: unknown
// variant ...") when its message is the generic one or names the method as
// unknown. A -32600 about a parameter ("missing field `threadId`") is not.
func IsMethodNotSupported(err error) bool {
	var e *Error
	if !errors.As(err, &e) {
		return false
	}
	switch e.Code {
	case CodeMethodNotFound:
		return true
	case CodeInvalidRequest:
		m := strings.ToLower(strings.TrimSpace(e.Message))
		return m == "invalid request" || strings.Contains(m, "unknown variant") ||
			strings.Contains(m, "method not found") || strings.Contains(m, "unknown method") ||
			strings.Contains(m, "not supported")
	}
	return false
}

// ErrClosed is the reason of a connection ended by [Conn.Close].
var ErrClosed = errors.New("jsonrpc: connection closed")

// CallError is a call that did not get an answer. Sent reports whether the
// request may have reached the peer: false only when it certainly did not
// (nothing of it was written).
type CallError struct {
	Method string
	Sent   bool
	Err    error
}

func (e *CallError) Error() string {
	if e.Sent {
		return fmt.Sprintf("%s: no answer after the request was sent: %v", e.Method, e.Err)
	}
	return fmt.Sprintf("%s: not sent: %v", e.Method, e.Err)
}

func (e *CallError) Unwrap() error { return e.Err }

// WasSent reports whether err leaves open that the request reached the peer.
// A peer's error answer counts as sent; a CallError says so itself.
func WasSent(err error) bool {
	if err == nil {
		return true
	}
	var ce *CallError
	if errors.As(err, &ce) {
		return ce.Sent
	}
	return true
}

// ID is a request id as the peer sent it (a JSON number or string).
type ID = json.RawMessage

// Request is an incoming request or notification (ID is nil). Raw is the
// whole message as received (for fields outside JSON-RPC, such as codex's
// "emittedAtMs").
type Request struct {
	ID     ID
	Method string
	Params json.RawMessage
	Raw    []byte
}

// IsNotification reports whether r expects no answer.
func (r *Request) IsNotification() bool { return r.ID == nil }

// Message is one JSON-RPC message as read: a response (ID with Result or
// Error) or, when Method is set, a notification or a request.
type Message struct {
	JSONRPC string          `json:"jsonrpc,omitempty"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *Error          `json:"error,omitempty"`
}

// hasID reports whether m carries an id (null is none).
func (m *Message) hasID() bool { return len(m.ID) > 0 && !bytes.Equal(m.ID, []byte("null")) }

// isFrame reports whether m, decoded from a JSON object, carries any
// JSON-RPC member: a log line such as {"level":"info"} does not.
func (m *Message) isFrame() bool {
	return m.JSONRPC != "" || m.Method != "" || m.hasID() || len(m.Result) > 0 || m.Error != nil
}

// IsResponseTo reports whether m answers the request with this id (a
// string id never answers a numeric one).
func (m *Message) IsResponseTo(id int64) bool {
	return m.Method == "" && m.hasID() && idKey(m.ID) == idKey(json.RawMessage(strconv.FormatInt(id, 10)))
}

// DecodeMessage parses one line strictly: it must be a JSON-RPC 2.0
// message object.
func DecodeMessage(line []byte) (*Message, error) {
	var m Message
	if err := json.Unmarshal(line, &m); err != nil {
		return nil, fmt.Errorf("not a JSON-RPC message: %w (line %q)", err, truncate(line, 200))
	}
	if m.JSONRPC != "2.0" {
		return nil, fmt.Errorf("not a JSON-RPC 2.0 message (line %q)", truncate(line, 200))
	}
	return &m, nil
}

// EncodeRequest frames a request (id ≥ 0) or, for id < 0, a notification
// as one newline-terminated line of compact JSON. params may be nil (then
// the member is left out).
func EncodeRequest(id int64, method string, params any) ([]byte, error) {
	m := outMessage{Version: "2.0", Method: method, Params: params}
	if id >= 0 {
		m.ID = json.RawMessage(strconv.FormatInt(id, 10))
	}
	b, err := json.Marshal(&m)
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", method, err)
	}
	// json.Marshal never emits a raw newline (it escapes them inside
	// strings), so one message is exactly one line.
	return append(b, '\n'), nil
}

// outMessage is a message as written.
type outMessage struct {
	Version string          `json:"jsonrpc,omitempty"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  any             `json:"params,omitempty"`
	Result  any             `json:"result,omitempty"`
	Error   *Error          `json:"error,omitempty"`
}

// idKey canonicalises a JSON-RPC id: numbers by value (1, 1.0 and 1e0 are
// one id), strings as quoted (so "1" is another id).
func idKey(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if n, err := strconv.ParseFloat(string(raw), 64); err == nil {
		return strconv.FormatFloat(n, 'g', -1, 64)
	}
	return string(raw)
}

func truncate(b []byte, n int) string {
	if len(b) <= n {
		return string(b)
	}
	return string(b[:n]) + "…"
}
