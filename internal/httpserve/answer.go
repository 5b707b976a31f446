package httpserve

import (
	"bytes"
	"encoding/json"
	"mime"
	"net/http"
	"strconv"
	"strings"
)

// interceptor lets the handler see the status and headers the SDK writes
// before they go out; onHeader returning true means it answered instead,
// and the SDK's body is dropped.
//
// With collapse set (a single call whose client accepts application/json),
// it also chooses per request how the answer goes out. The SDK answers
// every call with an SSE stream (an event per message, each flushed). The
// interceptor holds the stream's headers and first event: when that event
// is the call's answer — the handler sent nothing else, so the stream ends
// with it — the answer goes out as one application/json body with a
// Content-Length, which the specification allows for any POST
// (2025-06-18 and 2025-11-25, "Sending Messages to the Server": the server
// answers either Content-Type) and which costs both sides about half of an
// SSE answer. When the first event is anything else (a progress
// notification the client asked for with a progressToken, a log message, a
// request to the client), the held headers and event go out at once as the
// SSE stream the SDK wrote, and every later event passes straight through,
// so notifications of a call still arrive on the call's own stream as
// they are sent, never later than without the interceptor.
type interceptor struct {
	http.ResponseWriter
	onHeader func(status int, header http.Header) bool
	collapse bool
	wrote    bool
	swallow  bool
	// held: the SDK's SSE headers (status) and the events in buf have not
	// been sent yet.
	held   bool
	status int
	buf    []byte
}

func (i *interceptor) WriteHeader(status int) {
	if i.wrote {
		return
	}
	i.wrote = true
	if i.onHeader != nil && i.onHeader(status, i.Header()) {
		i.swallow = true
		return
	}
	if i.collapse && status == http.StatusOK && isEventStream(i.Header().Get("Content-Type")) {
		i.held, i.status = true, status
		return
	}
	i.ResponseWriter.WriteHeader(status)
}

func (i *interceptor) Write(b []byte) (int, error) {
	if !i.wrote {
		i.WriteHeader(http.StatusOK)
	}
	switch {
	case i.swallow:
		return len(b), nil
	case i.held && len(i.buf) == 0:
		// The SDK writes each event whole, in one Write, then flushes it:
		// an event that is the call's answer goes out at once from b, as
		// it would at the flush, without a copy of it held (b may not be
		// kept past Write; for a large answer the copy was a second pass
		// over every byte).
		if data, ok := answerOnly(b); ok {
			i.sendJSON(data)
			return len(b), nil
		}
		i.buf = append(i.buf, b...)
		return len(b), nil
	case i.held:
		i.buf = append(i.buf, b...)
		return len(b), nil
	}
	return i.ResponseWriter.Write(b)
}

// Flush passes SSE frames on as the SDK flushes them. While the stream is
// held, a flush of the call's answer alone keeps holding it (the SDK ends
// the stream right after); a flush of anything else sends the stream.
func (i *interceptor) Flush() {
	if i.swallow {
		return
	}
	if i.held {
		if data, ok := answerOnly(i.buf); ok {
			i.sendJSON(data)
		} else {
			i.release()
		}
	}
	_ = http.NewResponseController(i.ResponseWriter).Flush()
}

// finish runs once the SDK's handler has returned and sends what is still
// held: an answer as application/json, anything else as the SSE stream it
// was.
func (i *interceptor) finish() {
	if !i.held {
		return
	}
	if data, ok := answerOnly(i.buf); ok {
		i.sendJSON(data)
		return
	}
	i.release()
}

// sendJSON sends data, the call's answer, as the whole application/json
// body. It goes out at the SDK's write of the answer (or its flush, when
// the answer came in pieces), from the goroutine that wrote it, rather than when the SDK's handler goroutine wakes up to
// return: the answer is the stream's last message (the SDK refuses any
// later write for the call), so nothing can follow it.
func (i *interceptor) sendJSON(data []byte) {
	i.held = false
	h := i.Header()
	h.Set("Content-Type", "application/json")
	h.Del("Connection") // the SDK's, for a stream
	h.Set("Content-Length", strconv.Itoa(len(data)))
	i.ResponseWriter.WriteHeader(i.status)
	_, _ = i.ResponseWriter.Write(data)
	i.buf = nil
}

// release sends the held SSE headers and events and stops holding.
func (i *interceptor) release() {
	i.held = false
	i.ResponseWriter.WriteHeader(i.status)
	if len(i.buf) > 0 {
		_, _ = i.ResponseWriter.Write(i.buf)
	}
	i.buf = nil
}

// Unwrap gives http.ResponseController the underlying writer.
func (i *interceptor) Unwrap() http.ResponseWriter { return i.ResponseWriter }

// answerOnly returns the data of stream when it is exactly one complete SSE
// event of the SDK's ("event: message", at most an "id:" line, one "data:"
// line) carrying a JSON-RPC response: an object with no "method". On a
// single call's stream the SDK writes only messages of that call, so a
// response there is its answer, and the last message of the stream.
func answerOnly(stream []byte) ([]byte, bool) {
	event, rest, ok := bytes.Cut(stream, []byte("\n\n"))
	if !ok || len(rest) > 0 {
		return nil, false
	}
	var data []byte
	for rest := event; rest != nil; {
		var line []byte
		line, rest, _ = bytes.Cut(rest, []byte("\n")) // the lines of bytes.Split, without its slice
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "event":
			if string(value) != "message" {
				return nil, false
			}
		case "id":
		case "data":
			if data != nil {
				return nil, false
			}
			data = value
		default:
			return nil, false
		}
	}
	if len(data) == 0 || data[0] != '{' {
		return nil, false
	}
	if isSDKResponse(data) {
		return data, true
	}
	var m struct {
		Method json.RawMessage `json:"method"`
		ID     json.RawMessage `json:"id"`
	}
	if err := json.Unmarshal(data, &m); err != nil || m.Method != nil || len(m.ID) == 0 {
		return nil, false
	}
	return data, true
}

// isSDKResponse reports data that begins the way the SDK encodes a
// JSON-RPC response (its wire struct's fields in order, "method" before
// "result" and "error", each left out when empty): {"jsonrpc":"2.0","id":
// then a number or a string, then "result" or "error". A message that
// begins so has no "method", so it is a response with an id, without
// reading the rest of what may be a large answer. Anything else (another
// order, spacing, a null id) is left to a full parse.
func isSDKResponse(data []byte) bool {
	rest, ok := bytes.CutPrefix(data, []byte(`{"jsonrpc":"2.0","id":`))
	if !ok {
		return false
	}
	n := jsonIDLen(rest)
	if n == 0 {
		return false
	}
	rest = rest[n:]
	return bytes.HasPrefix(rest, []byte(`,"result":`)) || bytes.HasPrefix(rest, []byte(`,"error":`))
}

// jsonIDLen is the length of the JSON number or string at the start of b,
// 0 when there is none (or it is not closed).
func jsonIDLen(b []byte) int {
	if len(b) == 0 {
		return 0
	}
	if b[0] == '"' {
		for i := 1; i < len(b); i++ {
			switch b[i] {
			case '\\':
				i++ // the escaped byte
			case '"':
				return i + 1
			}
		}
		return 0
	}
	n := 0
	for n < len(b) && (b[n] == '-' || b[n] == '+' || b[n] == '.' || b[n] == 'e' || b[n] == 'E' || (b[n] >= '0' && b[n] <= '9')) {
		n++
	}
	if n == 0 || (b[0] != '-' && (b[0] < '0' || b[0] > '9')) {
		return 0
	}
	return n
}

// isEventStream reports a text/event-stream Content-Type.
func isEventStream(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && mt == "text/event-stream"
}

// acceptsJSON reports a request whose Accept admits application/json (the
// SDK refuses a POST that does not also admit text/event-stream).
func acceptsJSON(r *http.Request) bool {
	for _, value := range r.Header.Values("Accept") {
		for part := range strings.SplitSeq(value, ",") {
			base, _, _ := strings.Cut(part, ";")
			switch strings.ToLower(strings.TrimSpace(base)) {
			case "application/json", "application/*", "*/*":
				return true
			}
		}
	}
	return false
}
