package adapters

import (
	"slices"
	"testing"

	"github.com/agent-interop/runtime/internal/providers"
	"github.com/agent-interop/runtime/internal/providers/freebuff"
)

func TestNewBuildsTheFiveInRegistryOrder(t *testing.T) {
	set := New(Config{LookupEnv: func(string) (string, bool) { return "", false }, FreebuffProcDir: "-"})
	var ids []providers.ID
	for _, a := range set.All {
		ids = append(ids, a.ID())
	}
	want := []providers.ID{providers.Freebuff, providers.OpenCode, providers.Codex, providers.ClaudeCode, providers.Cursor}
	if !slices.Equal(ids, want) {
		t.Fatalf("adapters = %v, want %v", ids, want)
	}
	fb, ok := set.All[0].(*freebuff.Adapter)
	if !ok || fb.Service() != set.Freebuff {
		t.Fatalf("the Freebuff adapter does not serve the Set's Freebuff service")
	}
	if err := set.Freebuff.Close(); err != nil {
		t.Fatal(err)
	}
}
