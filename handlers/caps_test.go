package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/agent-interop/runtime/catalogs"
	"github.com/agent-interop/runtime/catalogs/limits"
	"github.com/agent-interop/runtime/internal/providers/freebuff"
	"github.com/agent-interop/runtime/internal/testutil/freebuffsim"
)

func TestCapList(t *testing.T) {
	tests := []struct {
		n, cap  int
		kept    int
		omitted int64 // 0: none
	}{
		{0, 3, 0, 0}, {2, 3, 2, 0}, {3, 3, 3, 0}, {4, 3, 3, 1}, {250, 100, 100, 150},
	}
	for _, tt := range tests {
		list := make([]int, tt.n)
		for i := range list {
			list[i] = i
		}
		kept, omitted := capList(list, tt.cap)
		if len(kept) != tt.kept || !slices.Equal(kept, list[:tt.kept]) {
			t.Errorf("capList(%d, %d) kept %d, want the first %d", tt.n, tt.cap, len(kept), tt.kept)
		}
		if (omitted == nil) != (tt.omitted == 0) || (omitted != nil && *omitted != tt.omitted) {
			t.Errorf("capList(%d, %d) omitted %v, want %d", tt.n, tt.cap, omitted, tt.omitted)
		}
	}
}

// TestGetActiveWorkIsCapped runs more threads than get_active_work's cap
// on the simulated Desktop: the answer carries the cap's threads and counts
// the rest, which list_active_threads pages.
func TestGetActiveWorkIsCapped(t *testing.T) {
	sim, err := freebuffsim.NewDesktop(freebuffsim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer sim.Close()
	defer sim.ReleaseTurns()
	sim.SetTurnMode(freebuffsim.TurnHold)
	project := t.TempDir()
	env := map[string]string{freebuff.EnvOrchestratorURL: sim.URL(), freebuff.EnvLaunchID: sim.LaunchID()}
	svc := freebuff.New(freebuff.Config{
		LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok },
		ProcDir:   "-", HomeDir: t.TempDir(), WorkDir: t.TempDir(),
	})
	defer svc.Close()
	tools := FreebuffTools{Svc: svc}
	ctx := context.Background()
	running := limits.ListActiveThreadsLimitDefault + 3
	for i := range running {
		tid := sim.AddThread(project, fmt.Sprintf("thread %d", i))
		if _, err := svc.SendThreadMessage(ctx, tid, "hold"); err != nil {
			t.Fatal(err)
		}
	}
	sim.AddThread(project, "idle thread")
	in, _ := catalogs.DecodeGetActiveWork(json.RawMessage(`{}`))
	out, err := tools.GetActiveWork(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Threads) != limits.ListActiveThreadsLimitDefault || out.Omitted == nil || *out.Omitted != 3 {
		t.Fatalf("get_active_work answered %d threads, omitted %v; want %d and 3", len(out.Threads), out.Omitted, limits.ListActiveThreadsLimitDefault)
	}
	for _, th := range out.Threads {
		if strings.Contains(mustJSON(t, th), "idle thread") {
			t.Errorf("an idle thread is listed: %s", mustJSON(t, th))
		}
	}
}
