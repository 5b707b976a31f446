package acp_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/coder/quartz"

	"github.com/agent-interop/runtime/internal/providers"
	"github.com/agent-interop/runtime/internal/providers/acp"
	"github.com/agent-interop/runtime/internal/testutil/testclock"
	"github.com/agent-interop/runtime/internal/testutil/wait"
)

// TestBadAgentPrograms: an agent that exits at once, prints something
// other than ACP, or never answers initialize is reported unavailable with
// the reason; nothing hangs. The cases the program decides (it exits, it
// prints garbage) run with a handshake bound a loaded machine cannot reach,
// so the bound never races the program; the silent agent's bound runs on a
// fake clock the test moves once the bound is armed.
func TestBadAgentPrograms(t *testing.T) {
	for _, c := range []struct {
		name, script, want string
		fakeClock          bool
	}{
		{"exits at once", "echo broken >&2; exit 3", "broken", false},
		{"prints non-ACP output", "echo 'Welcome to my agent!'; sleep 300", "does not speak ACP", true},
		{"never answers initialize", "sleep 300", "no answer to initialize within 2s", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*wait.Process)
			defer cancel()
			cfg := acp.AgentConfig{
				Spec:             providers.AgentSpec{ID: "bad", Name: "Bad", Protocol: "acp", Command: []string{"/bin/sh", "-c", c.script}, InstallHint: "fix it"},
				HandshakeTimeout: wait.Process,
			}
			var clock *quartz.Mock
			var trap *quartz.Trap
			if c.fakeClock {
				clock = testclock.At(t, time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
				trap = clock.Trap().AfterFunc("acp", "handshake")
				defer trap.Close()
				cfg.Clock, cfg.HandshakeTimeout = clock, 2*time.Second
			}
			a := acp.NewAgent(cfg)
			defer a.Close()
			got := make(chan providers.Capabilities, 1)
			go func() { got <- a.Capabilities(ctx) }()
			if c.fakeClock {
				trap.MustWait(ctx).MustRelease(ctx) // the handshake bound is armed
			}
			var caps providers.Capabilities
			wait.For(t, "the capability record of a bad agent", wait.Process, func() bool {
				select {
				case caps = <-got:
					return true
				default:
				}
				if c.fakeClock {
					testclock.Pass(ctx, clock, 500*time.Millisecond)
				}
				return false
			})
			if caps.SendMessage.State != providers.Unavailable || !strings.Contains(caps.SendMessage.Reason, c.want) {
				t.Fatalf("send capability %+v", caps.SendMessage)
			}
		})
	}
}
