// Package frame checks one inbound line of the stdio transport (package
// stdio) before the MCP SDK sees it: a scanner without recursion, so no
// nesting depth or size can hurt it, the classification of request ids,
// and the JSON-RPC error answer the guard writes for a line it refuses. It
// is a package of its own so that its fuzz test (FuzzFrames) builds only
// what the frame layer and its oracle, the SDK's decoder, import.
package frame

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/agent-interop/runtime/internal/jsonrpc"
)

// MaxDepth is the deepest nesting of objects and arrays a forwarded message
// may have, counted the way the SDK counts it (the message object itself is
// level 1). go-sdk v1.8 refuses deeper messages by ending the session.
const MaxDepth = 1000

// JSON-RPC error codes the guard answers with.
const (
	codeParseError     = jsonrpc.CodeParseError
	codeInvalidRequest = jsonrpc.CodeInvalidRequest
	codeInvalidParams  = jsonrpc.CodeInvalidParams
)

// Member is one top-level member of a message object.
type Member struct {
	Key   string
	Raw   []byte // the value as written
	Start int    // offset of Raw in the line
	Depth int    // nesting of the value (0 for a scalar)
}

// syntaxError is a line that is not one JSON text.
type syntaxError struct {
	offset int
	msg    string
}

func (e *syntaxError) Error() string { return fmt.Sprintf("%s at byte %d", e.msg, e.offset) }

// Sanitize replaces invalid UTF-8 by U+FFFD, as encoding/json does when
// it decodes a string, so such a request is still served under its id
// (invalid bytes outside strings stay a syntax error).
func Sanitize(line []byte) []byte {
	if utf8.Valid(line) {
		return line
	}
	return bytes.ToValidUTF8(line, []byte("\uFFFD"))
}

// ScanObject parses line as one JSON text without recursion (so any depth
// costs one byte of stack per level, never a goroutine stack) and, when it
// is an object, returns its members. isObject is false for any other valid
// value. Invalid UTF-8 is a syntax error (RFC 8259 §8.1; see sanitize).
func ScanObject(line []byte) (members []Member, isObject bool, err error) {
	if !utf8.Valid(line) {
		return nil, false, &syntaxError{offset: 0, msg: "invalid UTF-8"}
	}
	i := skipSpace(line, 0)
	if i == len(line) {
		return nil, false, &syntaxError{offset: i, msg: "empty message"}
	}
	if line[i] != '{' {
		end, _, err := scanValue(line, i)
		if err != nil {
			return nil, false, err
		}
		if j := skipSpace(line, end); j != len(line) {
			return nil, false, &syntaxError{offset: j, msg: "data after the value"}
		}
		return nil, false, nil
	}
	i = skipSpace(line, i+1)
	if i < len(line) && line[i] == '}' {
		return members, true, trailing(line, i+1)
	}
	for {
		if i >= len(line) || line[i] != '"' {
			return nil, false, &syntaxError{offset: i, msg: "expected a Member name"}
		}
		kend, err := ScanString(line, i)
		if err != nil {
			return nil, false, err
		}
		key, err := decodeKey(line[i:kend])
		if err != nil {
			return nil, false, &syntaxError{offset: i, msg: err.Error()}
		}
		i = skipSpace(line, kend)
		if i >= len(line) || line[i] != ':' {
			return nil, false, &syntaxError{offset: i, msg: "expected ':'"}
		}
		i = skipSpace(line, i+1)
		vend, depth, err := scanValue(line, i)
		if err != nil {
			return nil, false, err
		}
		members = append(members, Member{Key: key, Raw: line[i:vend], Start: i, Depth: depth})
		i = skipSpace(line, vend)
		switch {
		case i < len(line) && line[i] == ',':
			i = skipSpace(line, i+1)
		case i < len(line) && line[i] == '}':
			return members, true, trailing(line, i+1)
		default:
			return nil, false, &syntaxError{offset: i, msg: "expected ',' or '}'"}
		}
	}
}

func trailing(line []byte, i int) error {
	if j := skipSpace(line, i); j != len(line) {
		return &syntaxError{offset: j, msg: "data after the value"}
	}
	return nil
}

// ScanArray returns the elements of line, a JSON array already checked by
// ScanObject (so it is well formed), each with its offset and depth.
func ScanArray(line []byte) ([]Member, error) {
	i := skipSpace(line, 0)
	if i == len(line) || line[i] != '[' {
		return nil, &syntaxError{offset: i, msg: "expected '['"}
	}
	i = skipSpace(line, i+1)
	var elems []Member
	if i < len(line) && line[i] == ']' {
		return elems, nil
	}
	for {
		end, depth, err := scanValue(line, i)
		if err != nil {
			return nil, err
		}
		elems = append(elems, Member{Raw: line[i:end], Start: i, Depth: depth})
		i = skipSpace(line, end)
		switch {
		case i < len(line) && line[i] == ',':
			i = skipSpace(line, i+1)
		case i < len(line) && line[i] == ']':
			return elems, nil
		default:
			return nil, &syntaxError{offset: i, msg: "expected ',' or ']'"}
		}
	}
}

// decodeKey returns a Member name as the SDK's decoder sees it.
func decodeKey(quoted []byte) (string, error) {
	if bytes.IndexByte(quoted, '\\') < 0 {
		return string(quoted[1 : len(quoted)-1]), nil
	}
	var s string
	if err := json.Unmarshal(quoted, &s); err != nil {
		return "", fmt.Errorf("bad Member name: %w", err)
	}
	return s, nil
}

func skipSpace(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// scanValue checks the value starting at b[i] and returns where it ends and
// how deeply it nests (an object or array counts 1 plus its contents).
// Containers are tracked with an explicit stack.
func scanValue(b []byte, i int) (end, depth int, err error) {
	var stack []byte // '{' or '['
	const (
		wantValue = iota
		wantValueOrClose
		wantKey
		wantKeyOrClose
		afterValue
	)
	state := wantValue
	for {
		if state == afterValue && len(stack) == 0 {
			return i, depth, nil
		}
		i = skipSpace(b, i)
		if i >= len(b) {
			return 0, 0, &syntaxError{offset: i, msg: "unexpected end of message"}
		}
		c := b[i]
		switch state {
		case wantValue, wantValueOrClose:
			if state == wantValueOrClose && c == ']' {
				stack = stack[:len(stack)-1]
				i++
				state = afterValue
				continue
			}
			switch {
			case c == '{' || c == '[':
				stack = append(stack, c)
				depth = max(depth, len(stack))
				i++
				if c == '{' {
					state = wantKeyOrClose
				} else {
					state = wantValueOrClose
				}
				continue
			case c == '"':
				i, err = ScanString(b, i)
			case c == '-' || (c >= '0' && c <= '9'):
				i, err = ScanNumber(b, i)
			case c == 't':
				i, err = scanLiteral(b, i, "true")
			case c == 'f':
				i, err = scanLiteral(b, i, "false")
			case c == 'n':
				i, err = scanLiteral(b, i, "null")
			default:
				err = &syntaxError{offset: i, msg: fmt.Sprintf("unexpected %q", c)}
			}
			if err != nil {
				return 0, 0, err
			}
			state = afterValue
		case wantKey, wantKeyOrClose:
			if state == wantKeyOrClose && c == '}' {
				stack = stack[:len(stack)-1]
				i++
				state = afterValue
				continue
			}
			if c != '"' {
				return 0, 0, &syntaxError{offset: i, msg: "expected a Member name"}
			}
			if i, err = ScanString(b, i); err != nil {
				return 0, 0, err
			}
			i = skipSpace(b, i)
			if i >= len(b) || b[i] != ':' {
				return 0, 0, &syntaxError{offset: i, msg: "expected ':'"}
			}
			i++
			state = wantValue
		case afterValue:
			top := stack[len(stack)-1]
			switch {
			case c == ',':
				i++
				if top == '{' {
					state = wantKey
				} else {
					state = wantValue
				}
			case (c == '}' && top == '{') || (c == ']' && top == '['):
				stack = stack[:len(stack)-1]
				i++
			default:
				return 0, 0, &syntaxError{offset: i, msg: fmt.Sprintf("unexpected %q", c)}
			}
		}
	}
}

// ScanString returns the offset after the string starting at b[i] ('"').
func ScanString(b []byte, i int) (int, error) {
	start := i
	i++
	for i < len(b) {
		c := b[i]
		switch {
		case c == '"':
			return i + 1, nil
		case c == '\\':
			if i+1 >= len(b) {
				return 0, &syntaxError{offset: i, msg: "unterminated escape"}
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(b) || !isHex4(b[i+2:i+6]) {
					return 0, &syntaxError{offset: i, msg: "bad \\u escape"}
				}
				i += 6
			default:
				return 0, &syntaxError{offset: i, msg: "bad escape"}
			}
		case c < 0x20:
			return 0, &syntaxError{offset: i, msg: "control character in string"}
		default:
			i++
		}
	}
	return 0, &syntaxError{offset: start, msg: "unterminated string"}
}

func isHex4(b []byte) bool {
	for _, c := range b {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// ScanNumber returns the offset after the number starting at b[i].
func ScanNumber(b []byte, i int) (int, error) {
	start := i
	if b[i] == '-' {
		i++
	}
	digits := func() int {
		n := 0
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
			n++
		}
		return n
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case digits() == 0:
		return 0, &syntaxError{offset: start, msg: "bad number"}
	}
	if i < len(b) && b[i] == '.' {
		i++
		if digits() == 0 {
			return 0, &syntaxError{offset: start, msg: "bad number"}
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if digits() == 0 {
			return 0, &syntaxError{offset: start, msg: "bad number"}
		}
	}
	return i, nil
}

func scanLiteral(b []byte, i int, lit string) (int, error) {
	if !bytes.HasPrefix(b[i:], []byte(lit)) {
		return 0, &syntaxError{offset: i, msg: "bad literal"}
	}
	return i + len(lit), nil
}

// maxSafeID is the largest integer id the SDK carries exactly (it decodes
// numeric ids through float64).
const maxSafeID = 1 << 53

// IDKind classifies a request id.
type IDKind int

const (
	IDNone    IDKind = iota // no id member: a notification
	IDNull                  // "id": null
	IDString                // passed through
	IDInteger               // an integer the SDK keeps exactly: passed through
	IDOther                 // any other number: carried under a substitute id
	IDInvalid               // not a string or a number
)

// ClassifyID says how the guard treats an id value.
func ClassifyID(raw []byte) IDKind {
	if raw == nil {
		return IDNone
	}
	switch c := raw[0]; {
	case c == '"':
		return IDString
	case c == 'n':
		return IDNull
	case c == '-' || (c >= '0' && c <= '9'):
		if canonicalInteger(raw) {
			return IDInteger
		}
		return IDOther
	}
	return IDInvalid
}

// validID reports whether raw is an id a request may carry.
func validID(raw []byte) bool {
	switch ClassifyID(raw) {
	case IDString, IDInteger, IDOther:
		return true
	}
	return false
}

// canonicalInteger reports whether raw is an integer literal the SDK
// decodes and re-encodes to the same bytes.
func canonicalInteger(raw []byte) bool {
	s := string(raw)
	if s == "-0" || len(s) > 17 {
		return false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || strconv.FormatInt(n, 10) != s {
		return false
	}
	return n >= -maxSafeID && n <= maxSafeID
}

// IDKey is the identity of an id as both ends see it: a string id by its
// decoded value, a number by its literal.
func IDKey(raw []byte) (string, error) {
	if len(raw) > 0 && raw[0] == '"' {
		if bytes.IndexByte(raw, '\\') < 0 {
			return "s" + string(raw[1:len(raw)-1]), nil
		}
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", err
		}
		return "s" + s, nil
	}
	return "n" + string(raw), nil
}

// Message is a checked inbound line.
type Message struct {
	ID       []byte // raw id, nil for a notification or response without one
	IDStart  int    // offset of ID in the line
	IDKind   IDKind
	IsCall   bool // a request with an id (needs an answer)
	Response bool
	// Initialize marks an initialize request: its answer names the
	// protocol version the session negotiated.
	Initialize bool
	// Cancels is the requestId member of a notifications/cancelled, with
	// its offset in the line.
	Cancels *Member
	// plain marks a request Decode can build itself; method and params
	// are its members' values as written (see Decode).
	plain          bool
	method, params []byte
}

// Refusal is the guard's own answer to a line it does not forward.
type Refusal struct {
	ID     []byte // the id to answer with (nil: null)
	Code   int
	Msg    string
	Silent bool // dropped without an answer (a response nobody can use)
}

// Inspect checks one non-blank line. It returns the message to forward, or
// the refusal to answer with. A malformed response is dropped silently:
// answering an answer is not allowed.
func Inspect(line []byte) (Message, *Refusal) {
	members, isObject, err := ScanObject(line)
	if err != nil {
		return Message{}, &Refusal{Code: codeParseError, Msg: "Parse error: " + err.Error()}
	}
	if !isObject {
		if bytes.TrimSpace(line)[0] == '[' {
			return Message{}, &Refusal{Code: codeInvalidRequest, Msg: "Invalid Request: batches are not supported"}
		}
		return Message{}, &Refusal{Code: codeInvalidRequest, Msg: "Invalid Request: not a JSON-RPC object"}
	}
	known := map[string]*Member{}
	twice := ""
	for i := range members {
		m := &members[i]
		switch m.Key {
		case "jsonrpc", "id", "method", "params", "result", "error":
			if known[m.Key] != nil && twice == "" {
				twice = m.Key
			}
			known[m.Key] = m
		}
	}
	var msg Message
	if id := known["id"]; id != nil && twice != "id" {
		msg.ID, msg.IDStart = id.Raw, id.Start
	}
	msg.IDKind = ClassifyID(msg.ID)
	answerID := msg.ID // refusals echo the id as it was written
	if msg.IDKind == IDInvalid {
		answerID = nil
	}
	refuse := func(code int, format string, args ...any) (Message, *Refusal) {
		return Message{}, &Refusal{ID: answerID, Code: code, Msg: fmt.Sprintf(format, args...)}
	}
	if twice != "" {
		return refuse(codeInvalidRequest, "Invalid Request: Member %q appears twice", twice)
	}
	for _, m := range members {
		if 1+m.Depth > MaxDepth {
			if m.Key == "params" {
				return refuse(codeInvalidParams, "Invalid params: params nest deeper than %d levels", MaxDepth-1)
			}
			return refuse(codeInvalidRequest, "Invalid Request: Member %q nests deeper than %d levels", m.Key, MaxDepth-1)
		}
	}
	if msg.IDKind == IDInvalid {
		return refuse(codeInvalidRequest, "Invalid Request: id must be a string or a number")
	}
	v := known["jsonrpc"]
	if v == nil || !jsonStringIs(v.Raw, "2.0") {
		return refuse(codeInvalidRequest, `Invalid Request: jsonrpc must be "2.0"`)
	}
	method := known["method"]
	if method == nil {
		if known["result"] == nil && known["error"] == nil {
			return refuse(codeInvalidRequest, "Invalid Request: no method")
		}
		// A response to a request of ours: forwarded only when the SDK can
		// decode it; otherwise dropped (answering an answer is not allowed).
		if msg.IDKind != IDString && msg.IDKind != IDInteger {
			return Message{}, &Refusal{Silent: true}
		}
		if e := known["error"]; e != nil && !wireError(e.Raw) {
			return Message{}, &Refusal{Silent: true}
		}
		msg.Response = true
		return msg, nil
	}
	if method.Raw[0] != '"' {
		return refuse(codeInvalidRequest, "Invalid Request: method must be a string")
	}
	if jsonStringIs(method.Raw, "") {
		return refuse(codeInvalidRequest, "Invalid Request: empty method")
	}
	if msg.IDKind == IDNull {
		return refuse(codeInvalidRequest, "Invalid Request: id must not be null")
	}
	if p := known["params"]; p != nil && p.Raw[0] != '{' && p.Raw[0] != '[' && string(p.Raw) != "null" {
		return refuse(codeInvalidParams, "Invalid params: params must be an object or an array")
	}
	msg.IsCall = msg.IDKind != IDNone
	msg.Initialize = msg.IsCall && jsonStringIs(method.Raw, "initialize")
	msg.plain = plainRequest(members, msg)
	msg.method = method.Raw
	if p := known["params"]; p != nil {
		msg.params = p.Raw
	}
	if p := known["params"]; !msg.IsCall && p != nil && p.Raw[0] == '{' && jsonStringIs(method.Raw, "notifications/cancelled") {
		if members, _, err := ScanObject(p.Raw); err == nil {
			for i := range members {
				if m := members[i]; m.Key == "requestId" && validID(m.Raw) {
					m.Start += p.Start
					msg.Cancels = &m
				}
			}
		}
	}
	return msg, nil
}

// jsonStringIs reports whether raw is a JSON string whose value is want.
func jsonStringIs(raw []byte, want string) bool {
	if len(raw) == 0 || raw[0] != '"' {
		return false
	}
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw[1:len(raw)-1]) == want
	}
	var s string
	return json.Unmarshal(raw, &s) == nil && s == want
}

// wireError reports whether raw decodes as the SDK's error object: null, or
// an object whose code is an integer and whose message is a string.
func wireError(raw []byte) bool {
	if string(raw) == "null" {
		return true
	}
	if raw[0] != '{' {
		return false
	}
	members, ok, err := ScanObject(raw)
	if err != nil || !ok {
		return false
	}
	for _, m := range members {
		switch m.Key {
		case "code":
			if string(m.Raw) != "null" {
				if _, err := strconv.ParseInt(string(m.Raw), 10, 64); err != nil {
					return false
				}
			}
		case "message":
			if string(m.Raw) != "null" && m.Raw[0] != '"' {
				return false
			}
		}
	}
	return true
}

// ErrorAnswer encodes a JSON-RPC error response.
func ErrorAnswer(id []byte, code int, msg string) []byte {
	if len(id) == 0 {
		id = []byte("null")
	}
	m, _ := json.Marshal(msg)
	out := make([]byte, 0, 64+len(id)+len(m))
	out = append(out, `{"jsonrpc":"2.0","id":`...)
	out = append(out, id...)
	out = append(out, `,"error":{"code":`...)
	out = strconv.AppendInt(out, int64(code), 10)
	out = append(out, `,"message":`...)
	out = append(out, m...)
	out = append(out, "}}"...)
	return out
}

// Splice returns line with line[start:end] replaced by with (an id swapped
// for its substitute, or back).
func Splice(line []byte, start, end int, with []byte) []byte {
	out := make([]byte, 0, len(line)-(end-start)+len(with))
	out = append(out, line[:start]...)
	out = append(out, with...)
	return append(out, line[end:]...)
}
