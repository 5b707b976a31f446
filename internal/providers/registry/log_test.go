package registry

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/agent-interop/runtime/internal/providers"
	"github.com/agent-interop/runtime/internal/providers/registry/registrytest"
	"github.com/agent-interop/runtime/internal/testutil/syncbuf"
	"github.com/agent-interop/runtime/internal/testutil/testclock"
	"github.com/agent-interop/runtime/internal/testutil/teststore"
	"github.com/agent-interop/runtime/internal/testutil/wait"
)

// TestListingEndIsLogged: each provider listing's end is a debug record
// with its provider and duration (what interop-bench sessions reads for
// each provider's share of the first listing).
func TestListingEndIsLogged(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), wait.InProcess)
	defer cancel()
	clock := testclock.At(t, time.Date(2026, 12, 3, 2, 0, 0, 0, time.UTC))
	var buf syncbuf.Buffer
	logger := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	oc := &registrytest.Adapter{Provider: providers.OpenCode}
	oc.SetSessions([]providers.Session{oc.Session("ses_1", "one")}, nil)
	r, err := New(teststore.Open(t), []providers.Adapter{oc}, Options{Clock: clock, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := r.ListSessionPage(ctx, SessionQuery{}); err != nil {
		t.Fatal(err)
	}
	wait.For(t, "the listing's debug record", wait.InProcess, func() bool {
		return strings.Contains(buf.String(), `msg="provider listing ended" provider=opencode ms=0 late=false sessions=1`)
	})
}
