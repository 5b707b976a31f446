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
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestCancelledVerificationLeavesNothing: the built binary over stdio; a
// client cancels a verify_work_item call while its command runs (the
// go-sdk client sends notifications/cancelled when the call's context
// ends). The work item keeps its status and gets no evidence.
func TestCancelledVerificationLeavesNothing(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("watches the command's process in /proc")
	}
	cs := connect(t, []string{"serve"}, isolatedEnv(t, "INTEROP_ALLOW_VERIFICATION=1"))
	var work struct {
		ID     string `json:"id"`
		Status string `json:"status"`
	}
	call(t, cs, "create_work_item", map[string]any{"objective": "Verify and cancel", "acceptanceCriteria": []string{"nothing recorded"}}, &work)

	dir := t.TempDir()
	started := filepath.Join(dir, "started")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
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
	for { // wait for the command to run (polling a condition, bounded by ctx)
		if _, err := os.Stat(started); err == nil {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatal("the verification command never started")
		case <-time.After(20 * time.Millisecond):
		}
	}
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
	for { // polling a condition, bounded by ctx
		if _, err := os.Stat(proc); os.IsNotExist(err) {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the cancelled command %s still runs", proc)
		case <-time.After(20 * time.Millisecond):
		}
	}
	// An absence can only be watched over a span: for the next second the
	// work keeps its status and has no evidence on every read.
	var got struct {
		Work struct {
			Status      string   `json:"status"`
			EvidenceIDs []string `json:"evidenceIds"`
		} `json:"work"`
		Evidence []json.RawMessage `json:"evidence"`
	}
	for end := time.Now().Add(time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		call(t, cs, "get_work_item", map[string]any{"workId": work.ID}, &got)
		if got.Work.Status != work.Status || len(got.Evidence) != 0 || len(got.Work.EvidenceIDs) != 0 {
			t.Fatalf("after a cancelled verification: status %q (was %q), evidence %d, evidenceIds %v", got.Work.Status, work.Status, len(got.Evidence), got.Work.EvidenceIDs)
		}
	}
}
