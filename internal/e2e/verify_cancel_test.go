//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-interop/runtime/internal/testutil/wait"
)

// TestCancelledVerificationLeavesNothing: the built binary over stdio; a
// client cancels a verify_work_item call while its command runs (the
// go-sdk client sends notifications/cancelled when the call's context
// ends). The work item keeps its status and gets no evidence.
func TestCancelledVerificationLeavesNothing(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("watches the command's process in /proc")
	}
	env := isolatedEnv(t, "INTEROP_ALLOW_VERIFICATION=1")
	cs := connect(t, []string{"serve"}, env)
	var work struct {
		ID     string `json:"id"`
		Status string `json:"status"`
	}
	call(t, cs, "create_work_item", map[string]any{"objective": "Verify and cancel", "acceptanceCriteria": []string{"nothing recorded"}}, &work)

	dir := t.TempDir()
	started := filepath.Join(dir, "started")
	ctx, cancel := context.WithTimeout(context.Background(), wait.Process)
	defer cancel()
	callCtx, cancelCall := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(callCtx, &mcp.CallToolParams{Name: "verify_work_item", Arguments: map[string]any{
			"workId": work.ID, "cwd": dir,
			"commands": []any{map[string]any{"executable": "sh", "args": []string{"-c", "echo $$ > started.tmp && mv started.tmp started && exec sleep 30"}}},
		}})
		done <- err
	}()
	wait.For(t, "the verification command to start", wait.Process, func() bool {
		_, err := os.Stat(started)
		return err == nil
	})
	cancelCall()
	if err := <-done; err == nil {
		t.Fatal("the cancelled call returned no error")
	}
	// The server stops the command's process group: wait for the process
	// to be gone (the old behaviour recorded the run right after that).
	pid, err := os.ReadFile(started)
	if err != nil {
		t.Fatal(err)
	}
	proc := "/proc/" + strings.TrimSpace(string(pid))
	wait.For(t, "the cancelled command "+proc+" to be gone", wait.Process, func() bool {
		_, err := os.Stat(proc)
		return os.IsNotExist(err)
	})
	// An absence cannot be watched over a span; what proves the cancelled
	// call can change nothing any more is that the server which ran it has
	// exited: closing the session closes its stdin and waits for the
	// process to end. A fresh server over the same store then reads the
	// work as it was: its status, and no evidence.
	if err := cs.Close(); err != nil {
		t.Logf("closing the session: %v", err) // the server's exit status; its end is what counts
	}
	var got struct {
		Work struct {
			Status      string   `json:"status"`
			EvidenceIDs []string `json:"evidenceIds"`
		} `json:"work"`
		Evidence []json.RawMessage `json:"evidence"`
	}
	call(t, connect(t, []string{"serve"}, env), "get_work_item", map[string]any{"workId": work.ID}, &got)
	if got.Work.Status != work.Status || len(got.Evidence) != 0 || len(got.Work.EvidenceIDs) != 0 {
		t.Fatalf("after a cancelled verification: status %q (was %q), evidence %d, evidenceIds %v", got.Work.Status, work.Status, len(got.Evidence), got.Work.EvidenceIDs)
	}
}
