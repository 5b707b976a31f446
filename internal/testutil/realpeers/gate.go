package realpeers

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/agent-interop/runtime/internal/testutil/wait"
)

// PromptGate is an HTTP proxy in front of an OpenCode server that passes
// everything through (the event stream included) except the prompt whose
// body contains a marker: that request is held until its client goes away
// and never reaches the server. A fault test points the runtime at URL to
// kill it while a prompt is dispatched but certainly not delivered.
type PromptGate struct {
	URL string

	held chan struct{}
	once sync.Once
	t    testing.TB
}

// HoldPrompts starts a PromptGate in front of upstream for the test.
func HoldPrompts(t testing.TB, upstream, marker string) *PromptGate {
	t.Helper()
	target, err := url.Parse(upstream)
	if err != nil {
		t.Fatalf("realpeers: %v", err)
	}
	g := &PromptGate{held: make(chan struct{}), t: t}
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.FlushInterval = -1 // stream Server-Sent Events as they come
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/prompt_async") {
			body, _ := io.ReadAll(r.Body)
			if bytes.Contains(body, []byte(marker)) {
				g.once.Do(func() { close(g.held) })
				<-r.Context().Done() // held until the client is gone
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	g.URL = srv.URL
	return g
}

// WaitHeld waits until the marked prompt arrived and is held.
func (g *PromptGate) WaitHeld() {
	g.t.Helper()
	wait.Recv(g.t, "realpeers: the marked prompt to reach the gate", wait.Process, g.held)
}
