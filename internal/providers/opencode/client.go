package opencode

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"sync/atomic"

	"github.com/agent-interop/runtime/internal/clockctx"
)

// maxResponse bounds any JSON response the adapter reads.
const maxResponse = 64 << 20

// errRedirect is returned for any redirect: the adapter never follows one,
// so credentials never travel to another origin.
var errRedirect = errors.New("redirect refused: OpenCode endpoints must answer directly")

// newHTTPClients builds the adapter's clients: one for reads and the event
// stream, and one for writes (prompts, aborts, replies) that never reuses a
// pooled connection, so a write that fails before reaching the server is
// known not to have been sent (a stale pooled connection would make it
// uncertain). Timeouts are set per request through contexts because the
// event stream shares the read client.
func newHTTPClients(rt http.RoundTripper) (read, write *http.Client) {
	refuse := func(*http.Request, []*http.Request) error { return errRedirect }
	if rt != nil {
		c := &http.Client{Transport: rt, CheckRedirect: refuse}
		return c, c
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = 8
	w := t.Clone()
	w.DisableKeepAlives = true
	return &http.Client{Transport: t, CheckRedirect: refuse}, &http.Client{Transport: w, CheckRedirect: refuse}
}

// transportError is a failure below HTTP. Sent says whether any part of the
// request was written, which decides between "not sent" and "uncertain".
type transportError struct {
	Method, Path string
	Sent         bool
	Err          error
}

func (e *transportError) Error() string {
	return fmt.Sprintf("opencode %s %s: %v", e.Method, e.Path, e.Err)
}

func (e *transportError) Unwrap() error { return e.Err }

// request describes one API call.
type request struct {
	method string
	path   string // escaped path
	query  url.Values
	body   any  // JSON-encoded when non-nil
	out    any  // JSON-decoded from a 2xx answer when non-nil
	write  bool // a delivery-tracked write: sent on a fresh connection
}

// do performs r against base. A 2xx answer must be JSON unless it is 204 or
// r.out is nil; any other answer becomes an *APIError; a failure below HTTP
// becomes a *transportError.
func (a *Adapter) do(ctx context.Context, base string, r request) (int, error) {
	ctx, cancel := clockctx.WithTimeout(ctx, a.clock, a.cfg.RequestTimeout, "opencode", "request")
	defer cancel()
	u := base + r.path
	if len(r.query) > 0 {
		u += "?" + r.query.Encode()
	}
	var body io.Reader
	if r.body != nil {
		b, err := json.Marshal(r.body)
		if err != nil {
			return 0, fmt.Errorf("encoding %s %s body: %w", r.method, r.path, err)
		}
		body = bytes.NewReader(b)
	}
	var sent atomic.Bool
	trace := &httptrace.ClientTrace{WroteHeaders: func() { sent.Store(true) }}
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, trace), r.method, u, body)
	if err != nil {
		return 0, fmt.Errorf("building %s %s: %w", r.method, r.path, err)
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	a.authorize(req)
	client, write := a.clients()
	if r.write {
		client = write
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, &transportError{Method: r.method, Path: r.path, Sent: sent.Load(), Err: err}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse+1))
	if err != nil {
		return resp.StatusCode, &transportError{Method: r.method, Path: r.path, Sent: true, Err: fmt.Errorf("reading answer: %w", err)}
	}
	if len(data) > maxResponse {
		return resp.StatusCode, fmt.Errorf("opencode %s %s: answer larger than %d bytes", r.method, r.path, maxResponse)
	}
	ct := resp.Header.Get("Content-Type")
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return resp.StatusCode, newAPIError(r.method, r.path, resp.StatusCode, ct, data, a.secrets())
	}
	if resp.StatusCode == http.StatusNoContent || r.out == nil {
		return resp.StatusCode, nil
	}
	if !isJSON(ct) {
		// Unknown routes answer 200 with the web UI's HTML shell.
		return resp.StatusCode, &APIError{
			Method: r.method, Path: r.path, Status: resp.StatusCode, Name: "UnexpectedContentType",
			Message: fmt.Sprintf("expected application/json, got %q (not an OpenCode API route, or not an OpenCode server)", ct),
			Body:    redact(truncate(string(data), 300), a.secrets()),
		}
	}
	if err := json.Unmarshal(data, r.out); err != nil {
		return resp.StatusCode, fmt.Errorf("opencode %s %s: malformed answer: %w", r.method, r.path, err)
	}
	return resp.StatusCode, nil
}

func isJSON(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && (mt == "application/json" || (len(mt) > 5 && mt[len(mt)-5:] == "+json"))
}

// authorize adds HTTP Basic credentials when a password is configured.
func (a *Adapter) authorize(req *http.Request) {
	if a.cfg.Password != "" {
		req.SetBasicAuth(a.cfg.Username, a.cfg.Password)
	}
}

// secrets lists the configured values redacted from error details.
func (a *Adapter) secrets() []string {
	if a.cfg.Password == "" {
		return nil
	}
	return []string{a.cfg.Password}
}

// notSent reports whether err certainly left nothing at the server.
func notSent(err error) bool {
	var te *transportError
	return errors.As(err, &te) && !te.Sent
}
