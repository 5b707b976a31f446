package opencode

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/quartz"

	"github.com/agent-interop/runtime/internal/testutil/testclock"
)

// fakeServer is a scripted OpenCode server for edge cases the real program
// cannot show. Routes are exact "METHOD /path" keys; a later handle
// replaces an earlier one.
type fakeServer struct {
	*httptest.Server
	mu       sync.Mutex
	routes   map[string]http.HandlerFunc // "METHOD /path" → handler
	requests []recorded
	password string

	events      chan string   // payload JSON objects pushed on /global/event
	drop        chan struct{} // a send ends the current event stream
	streamHits  atomic.Int32
	streamAuthz atomic.Int32 // streams opened with valid credentials
}

type recorded struct {
	Method, Path, Query string
	Body                []byte
}

func newFakeServer(t *testing.T) *fakeServer {
	t.Helper()
	f := &fakeServer{routes: map[string]http.HandlerFunc{}, events: make(chan string, 64), drop: make(chan struct{})}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.shutdown)
	f.handle("GET /global/health", func(w http.ResponseWriter, r *http.Request) {
		writeJSONResp(w, 200, map[string]any{"healthy": true, "version": PinnedVersion})
	})
	f.handle("GET /global/event", f.serveEvents)
	return f
}

// shutdown drops open connections (event streams) and stops the server.
func (f *fakeServer) shutdown() {
	f.CloseClientConnections()
	f.Close()
}

func (f *fakeServer) handle(route string, h http.HandlerFunc) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.routes[route] = h
}

func (f *fakeServer) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	f.requests = append(f.requests, recorded{r.Method, r.URL.Path, r.URL.RawQuery, body})
	pass := f.password
	h := f.routes[r.Method+" "+r.URL.Path]
	f.mu.Unlock()
	if pass != "" {
		u, p, ok := r.BasicAuth()
		if !ok || u != "opencode" || p != pass {
			w.Header().Set("WWW-Authenticate", `Basic realm="Secure Area"`)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	if h == nil {
		writeJSONResp(w, 404, map[string]any{"name": "NotFoundError", "data": map[string]any{"message": "no route " + r.URL.Path}})
		return
	}
	h(w, r)
}

func (f *fakeServer) hits(method, path string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, r := range f.requests {
		if r.Method == method && r.Path == path {
			n++
		}
	}
	return n
}

func (f *fakeServer) last(method, path string) recorded {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := len(f.requests) - 1; i >= 0; i-- {
		if f.requests[i].Method == method && f.requests[i].Path == path {
			return f.requests[i]
		}
	}
	return recorded{}
}

// serveEvents streams server.connected, then whatever is pushed on events.
func (f *fakeServer) serveEvents(w http.ResponseWriter, r *http.Request) {
	f.streamHits.Add(1)
	if _, _, ok := r.BasicAuth(); ok {
		f.streamAuthz.Add(1)
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(200)
	fl := w.(http.Flusher)
	fmt.Fprint(w, `data: {"payload":{"id":"evt_1","type":"server.connected","properties":{}}}`+"\n\n")
	fl.Flush()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-f.drop:
			return
		case p := <-f.events:
			fmt.Fprintf(w, "data: %s\n\n", p)
			fl.Flush()
		}
	}
}

// push sends one /global/event message.
func (f *fakeServer) push(directory string, payload map[string]any) {
	b, _ := json.Marshal(map[string]any{"directory": directory, "payload": payload})
	f.events <- string(b)
}

// session registers GET /session/<id> answering a session in dir.
func (f *fakeServer) session(id, dir string) {
	f.handle("GET /session/"+id, func(w http.ResponseWriter, r *http.Request) {
		writeJSONResp(w, 200, map[string]any{"id": id, "slug": "s", "projectID": "global", "directory": dir,
			"title": "t", "version": PinnedVersion, "time": map[string]any{"created": 1, "updated": 2}})
	})
}

func writeJSONResp(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// closedURL returns a loopback URL nothing listens on.
func closedURL(t *testing.T) string {
	t.Helper()
	s := httptest.NewServer(http.NotFoundHandler())
	u := s.URL
	s.Close()
	return u
}

// newFakeClock is a manual clock: timers fire only when the test advances it.
func newFakeClock(t quartz.TestingT) *quartz.Mock {
	return testclock.At(t, time.Date(2026, 11, 30, 6, 0, 0, 0, time.UTC))
}
