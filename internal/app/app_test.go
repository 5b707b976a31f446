package app

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/agent-interop/runtime/internal/providers"
)

// TestOpenWiresWithoutContactingProviders: Open builds every service over
// a fresh store, knows all five providers without asking any of them, and
// Close releases it all.
func TestOpenWiresWithoutContactingProviders(t *testing.T) {
	env := map[string]string{"INTEROP_DB": filepath.Join(t.TempDir(), "interop.db")}
	a, err := Open(context.Background(), Config{Env: func(k string) (string, bool) { v, ok := env[k]; return v, ok }})
	if err != nil {
		t.Fatal(err)
	}
	if a.Handlers == nil || a.Workflow == nil || a.Claims == nil || a.Conversations == nil || a.Freebuff == nil || a.Events == nil || a.Delivery == nil {
		t.Fatalf("unwired services: %+v", a)
	}
	for _, id := range []providers.ID{providers.Freebuff, providers.OpenCode, providers.Codex, providers.ClaudeCode, providers.Cursor} {
		if k, ok := a.Registry.LastKnown(id); ok {
			t.Errorf("%s was checked at Open: %+v", id, k)
		}
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
}
