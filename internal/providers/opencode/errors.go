package opencode

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/agent-interop/runtime/internal/security"
)

// ErrUnknownSession is wrapped by operations on a session the server does
// not know (HTTP 404).
var ErrUnknownSession = errors.New("unknown OpenCode session")

// APIError is an HTTP-level failure reported by an OpenCode server. It is
// built from any of the server's three error-body shapes:
//
//	{"name":"NotFoundError","data":{"message":"…"}}           (NotFound, BadRequest)
//	{"_tag":"PermissionNotFoundError","message":"…",…}          (effect errors)
//	{"name":"APIError","data":{"message":"…","statusCode":401}} (model provider errors)
//
// Secrets are redacted from Message and Body.
type APIError struct {
	Method string
	Path   string // route without query
	Status int    // HTTP status
	Name   string // error name or _tag
	// Message is the server's message, redacted.
	Message string
	// Body is the raw error body (truncated, redacted) for diagnostics.
	Body string
}

func (e *APIError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "opencode %s %s: HTTP %d", e.Method, e.Path, e.Status)
	if e.Name != "" {
		b.WriteString(" " + e.Name)
	}
	if e.Message != "" {
		b.WriteString(": " + e.Message)
	}
	return b.String()
}

// Unwrap lets errors.Is(err, ErrUnknownSession) match a missing session.
func (e *APIError) Unwrap() error {
	if e.Status == http.StatusNotFound && (e.Name == "NotFoundError" || e.Name == "SessionNotFoundError") {
		return ErrUnknownSession
	}
	return nil
}

// errorBody is the union of the server's error shapes.
type errorBody struct {
	Name    string          `json:"name"`
	Tag     string          `json:"_tag"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
	Error   json.RawMessage `json:"error"`
}

type errorData struct {
	Message    string `json:"message"`
	StatusCode int    `json:"statusCode"`
	Kind       string `json:"kind"`
}

// describeError turns an error object (a response body, or the "error" of a
// session.error event / assistant message) into a name and a message.
func describeError(raw []byte) (name, message string, ok bool) {
	var eb errorBody
	if len(raw) == 0 || json.Unmarshal(raw, &eb) != nil {
		return "", "", false
	}
	switch {
	case eb.Name != "":
		name = eb.Name
		var d errorData
		if len(eb.Data) > 0 && json.Unmarshal(eb.Data, &d) == nil {
			message = d.Message
			if d.StatusCode != 0 && !strings.Contains(message, fmt.Sprint(d.StatusCode)) {
				message = fmt.Sprintf("%s (status %d)", message, d.StatusCode)
			}
		}
		if message == "" {
			message = eb.Message
		}
	case eb.Tag != "":
		name, message = eb.Tag, eb.Message
	case len(eb.Error) > 0:
		// {"error":"…"} or {"error":{"message":"…"}} from proxies in front.
		var s string
		if json.Unmarshal(eb.Error, &s) == nil {
			message = s
		} else {
			var d errorData
			_ = json.Unmarshal(eb.Error, &d)
			message = d.Message
		}
	case eb.Message != "":
		message = eb.Message
	default:
		return "", "", false
	}
	return name, message, true
}

// newAPIError builds the error for a failed response.
func newAPIError(method, path string, status int, contentType string, body []byte, secrets []string) *APIError {
	e := &APIError{Method: method, Path: path, Status: status}
	if strings.Contains(contentType, "json") {
		if name, msg, ok := describeError(body); ok {
			e.Name, e.Message = name, msg
		}
	}
	if e.Message == "" {
		switch {
		case status == http.StatusUnauthorized:
			e.Name = "Unauthorized"
			e.Message = "the server requires credentials; set OPENCODE_SERVER_USERNAME and OPENCODE_SERVER_PASSWORD"
		case strings.Contains(contentType, "text/html"):
			e.Message = "answered an HTML page, not the OpenCode API"
		default:
			e.Message = strings.TrimSpace(truncate(string(body), 300))
			if e.Message == "" {
				e.Message = http.StatusText(status)
			}
		}
	}
	e.Message = redact(e.Message, secrets)
	e.Body = redact(truncate(string(body), 2000), secrets)
	return e
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// redact removes the given secrets (the configured password) and anything
// credential-shaped (security.RedactString) from s.
func redact(s string, secrets []string) string {
	for _, sec := range secrets {
		if len(sec) >= 3 {
			s = strings.ReplaceAll(s, sec, security.Redacted)
		}
	}
	return security.RedactString(s)
}
