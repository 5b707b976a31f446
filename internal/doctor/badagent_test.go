package doctor

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agent-interop/runtime/internal/providers"
	"github.com/agent-interop/runtime/internal/providers/adapters"
	"github.com/agent-interop/runtime/internal/testutil/wait"
)

// TestAgentNotInACPModeIsReportedWithTheFix: an agents-file entry whose
// program prints a usage text instead of speaking ACP is reported failed
// by doctor with the line it printed and the fix (its ACP mode), within
// the provider bound and well before the 2-minute handshake bound; an
// entry that answers initialize is ready in the same run.
func TestAgentNotInACPModeIsReportedWithTheFix(t *testing.T) {
	file := filepath.Join(t.TempDir(), "agents.yaml")
	body := `agents:
  - id: usage-agent
    name: Usage Agent
    protocol: acp
    command: [/bin/sh, -c, "echo 'Usage: usage-agent [--serve]'; sleep 300"]
  - id: good-agent
    name: Good Agent
    protocol: acp
    command:
      - /bin/sh
      - -c
      - >-
        read -r line; id=$(printf '%s' "$line" | sed -n 's/.*"id":\([0-9]*\).*/\1/p');
        echo '{"jsonrpc":"2.0","id":'$id',"result":{"protocolVersion":1,"agentCapabilities":{}}}'; sleep 300
`
	if err := os.WriteFile(file, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	set := adapters.New(adapters.Config{LookupEnv: func(k string) (string, bool) {
		if k == adapters.EnvAgentsFile {
			return file, true
		}
		return os.LookupEnv(k)
	}, FreebuffProcDir: "-"})
	defer set.Freebuff.Close()
	var mine []providers.Adapter
	for _, a := range set.All {
		if a.ID() == "usage-agent" || a.ID() == "good-agent" {
			mine = append(mine, a)
		}
	}
	if len(mine) != 2 {
		t.Fatalf("adapters %d, problems %v", len(mine), set.Problems)
	}
	rep := Run(context.Background(), Options{
		Adapters: mine, ProgramVersion: noVersion,
		// Bounds only a broken run: a program that is not in its ACP
		// mode fails at its first line.
		Timeout: 3 * wait.Process, ProviderTimeout: wait.Process,
	})

	bad := byProvider(t, rep, "usage-agent")
	if bad.Summary != SummaryUnavailable || bad.Handshake.Status != HandshakeFailed {
		t.Fatalf("usage-agent = %s / %+v", bad.Summary, bad.Handshake)
	}
	if !strings.Contains(bad.Handshake.Detail, `printed "Usage: usage-agent [--serve]" on its stdout before answering initialize`) {
		t.Fatalf("handshake detail %q", bad.Handshake.Detail)
	}
	if !strings.Contains(bad.Handshake.Fix, "the agent's ACP mode?") || !strings.Contains(bad.Handshake.Fix, "`gemini --acp`") {
		t.Fatalf("handshake fix %q", bad.Handshake.Fix)
	}
	if send, _ := bad.Capability("sendMessage"); send.State != providers.Unavailable || !strings.Contains(send.Reason, "Usage: usage-agent") {
		t.Fatalf("send capability %+v", send)
	}

	good := byProvider(t, rep, "good-agent")
	if good.Summary != SummaryReady || good.Handshake.Status != HandshakeOK {
		t.Fatalf("good-agent = %s / %+v", good.Summary, good.Handshake)
	}
}
