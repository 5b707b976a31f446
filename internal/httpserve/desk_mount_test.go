package httpserve

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/agent-interop/runtime/internal/httpguard"
)

// TestDeskPathsGoToTheDesk: /desk and the paths below it are handed to the
// Desk handler before this handler's guard (the desk screens them with its
// own); everything else keeps HTTP mode's rules.
func TestDeskPathsGoToTheDesk(t *testing.T) {
	desk := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusTeapot) })
	h := NewHandler(Options{MCP: http.NotFoundHandler(), Guard: httpguard.New(httpguard.Options{}), Token: httpguard.NewSecret("t"), Desk: desk})
	tests := []struct {
		path, origin string
		want         int
	}{
		{"/desk", "", http.StatusTeapot},
		{"/desk/", "", http.StatusTeapot},
		{"/desk/receipts", "http://127.0.0.1:8788", http.StatusTeapot}, // the desk's own origin is not HTTP mode's
		{"/desks", "", http.StatusNotFound},
		{"/mcp", "http://127.0.0.1:8788", http.StatusForbidden},
		{"/healthz", "", http.StatusOK},
	}
	for _, tt := range tests {
		r := httptest.NewRequest(http.MethodGet, tt.path, nil)
		if tt.origin != "" {
			r.Header.Set("Origin", tt.origin)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		if rec.Code != tt.want {
			t.Errorf("GET %s (origin %q): %d, want %d", tt.path, tt.origin, rec.Code, tt.want)
		}
	}
	without := NewHandler(Options{MCP: http.NotFoundHandler(), Token: httpguard.NewSecret("t")})
	rec := httptest.NewRecorder()
	without.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/desk/", nil))
	if rec.Code != http.StatusNotFound {
		t.Errorf("without a desk, /desk/: %d, want 404", rec.Code)
	}
}
