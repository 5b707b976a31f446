package acp_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
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

// TestSlowStartOutlivesTheCallThatBegunIt: a call that stops waiting for
// the agent's start (its ctx ends) leaves the start running; the next call
// joins it, and the program is started once, not once per call.
func TestSlowStartOutlivesTheCallThatBegunIt(t *testing.T) {
	dir := t.TempDir()
	starts, gate := filepath.Join(dir, "starts"), filepath.Join(dir, "go")
	script := fmt.Sprintf("echo start >> %q; while [ ! -e %q ]; do sleep 0.05; done; exec %q acp", starts, gate, simBinary)
	a := acp.NewAgent(acp.AgentConfig{
		Spec:             providers.AgentSpec{ID: "slow", Name: "Slow", Protocol: "acp", Command: []string{"/bin/sh", "-c", script}, InstallHint: "fix it"},
		HandshakeTimeout: 2 * wait.Process,
		LookupEnv: func(k string) (string, bool) {
			switch k {
			case "HOME":
				return dir, true
			case "PATH":
				return os.Getenv("PATH"), true
			}
			return "", false
		},
	})
	defer a.Close()
	startCount := func() int {
		b, _ := os.ReadFile(starts)
		return strings.Count(string(b), "start")
	}

	first, cancelFirst := context.WithCancel(context.Background())
	failed := make(chan error, 1)
	go func() {
		_, err := a.Client(first)
		failed <- err
	}()
	wait.For(t, "the agent program starts", wait.Process, func() bool { return startCount() == 1 })
	cancelFirst()
	if err := wait.Recv(t, "the abandoned call's answer", wait.Process, failed); !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "still starting") {
		t.Fatalf("the abandoned call returned %v, want it still starting", err)
	}

	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*wait.Process)
	defer cancel()
	c, err := a.Client(ctx)
	if err != nil {
		t.Fatalf("the next call: %v", err)
	}
	if c == nil || startCount() != 1 {
		t.Fatalf("client %v, the program started %d times; want one start joined", c, startCount())
	}
}
