package acp_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/agent-interop/runtime/internal/providers"
	"github.com/agent-interop/runtime/internal/providers/acp"
)

// TestBadAgentPrograms: an agent that exits at once, prints something
// other than ACP, or never answers initialize is reported unavailable with
// the reason, within the handshake bound; nothing hangs.
func TestBadAgentPrograms(t *testing.T) {
	for _, c := range []struct{ name, script, want string }{
		{"exits at once", "echo broken >&2; exit 3", "broken"},
		{"prints non-ACP output", "echo 'Welcome to my agent!'; sleep 300", "does not speak ACP"},
		{"never answers initialize", "sleep 300", "no answer to initialize within 2s"},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := acp.NewAgent(acp.AgentConfig{
				Spec:             providers.AgentSpec{ID: "bad", Name: "Bad", Protocol: "acp", Command: []string{"/bin/sh", "-c", c.script}, InstallHint: "fix it"},
				HandshakeTimeout: 2 * time.Second,
			})
			defer a.Close()
			start := time.Now()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			caps := a.Capabilities(ctx)
			if caps.SendMessage.State != providers.Unavailable || !strings.Contains(caps.SendMessage.Reason, c.want) {
				t.Fatalf("send capability %+v", caps.SendMessage)
			}
			if el := time.Since(start); el > 30*time.Second {
				t.Fatalf("took %s", el)
			}
		})
	}
}
