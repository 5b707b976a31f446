package directhttp

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

// TestTransport: answers of every form (a JSON body with a length, a
// flushed chunked stream, an error status) are read whole, and one
// connection serves them all; an answer that closes the connection makes
// the next request dial a new one.
func TestTransport(t *testing.T) {
	var conns atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/json":
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"ok":true}`)
		case "/sse":
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = io.WriteString(w, "data: 1\n\n")
			w.(http.Flusher).Flush()
			_, _ = io.WriteString(w, "data: 2\n\n")
		case "/close":
			w.Header().Set("Connection", "close")
			_, _ = io.WriteString(w, "bye")
		default:
			http.Error(w, "no", http.StatusNotFound)
		}
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	tr := &Transport{}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	tests := []struct {
		path, body string
		status     int
		conns      int64 // connections opened so far
	}{
		{"/json", `{"ok":true}`, 200, 1},
		{"/sse", "data: 1\n\ndata: 2\n\n", 200, 1},
		{"/missing", "no\n", 404, 1},
		{"/json", `{"ok":true}`, 200, 1},
		{"/close", "bye", 200, 1},
		{"/json", `{"ok":true}`, 200, 2},
	}
	for _, tc := range tests {
		req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, srv.URL+tc.path, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", tc.path, err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != tc.status || string(b) != tc.body {
			t.Errorf("%s: %d %q %v", tc.path, resp.StatusCode, b, err)
		}
		if got := conns.Load(); got != tc.conns {
			t.Errorf("after %s: %d connections, want %d", tc.path, got, tc.conns)
		}
	}
}
