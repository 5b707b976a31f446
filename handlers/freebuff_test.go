package handlers

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agent-interop/runtime/catalogs"
)

// TestFreebuffTools drives the Freebuff tools from raw arguments through the
// generated decoders against the simulated Desktop.
func TestFreebuffTools(t *testing.T) {
	s := newFreebuffStack(t)
	sim, project, tools := s.sim, s.project, s.tools
	if err := os.WriteFile(filepath.Join(project, "notes.txt"), []byte("api_key=hunter2-hunter2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tid := sim.AddThread(project, "Tools thread")
	ctx := context.Background()

	call := func(out any, err error) string {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return mustJSON(t, out)
	}
	in1, _ := catalogs.DecodeListProjects(json.RawMessage(`{}`))
	if got := call(tools.ListProjects(ctx, in1)); !strings.HasPrefix(got, `{"projects":[{"id":"`+project) {
		t.Fatalf("list_projects = %s", got)
	}
	in2, _ := catalogs.DecodeListThreads(json.RawMessage(`{"projectId":"` + project + `"}`))
	if got := call(tools.ListThreads(ctx, in2)); !strings.Contains(got, `"id":"`+tid+`"`) {
		t.Fatalf("list_threads = %s", got)
	}
	in3, err := catalogs.DecodeSendThreadMessage(json.RawMessage(`{"threadId":"` + tid + `","text":"hi"}`))
	if err != nil {
		t.Fatal(err)
	}
	// The simulated Desktop may end the turn before the answer is built, so
	// an accepted send is queued or already completed, never anything else.
	if got := call(tools.SendThreadMessage(ctx, in3)); !(strings.Contains(got, `"accepted":true,"status":"queued"`) || strings.Contains(got, `"accepted":true,"status":"completed"`)) || !strings.Contains(got, `"idempotencyKey":"auto_`) {
		t.Fatalf("send_thread_message = %s", got)
	}
	// get_thread_progress with the spec defaults, waiting for the turn.
	in4, err := catalogs.DecodeGetThreadProgress(json.RawMessage(`{"threadId":"` + tid + `","timeoutMs":30000}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := call(tools.GetThreadProgress(ctx, in4)); !strings.Contains(got, `"events":[{"sequence":1`) || !strings.Contains(got, `"next":`) {
		t.Fatalf("get_thread_progress = %s", got)
	}
	in5, _ := catalogs.DecodeListProjectFiles(json.RawMessage(`{"projectId":"` + project + `"}`))
	if got := call(tools.ListProjectFiles(ctx, in5)); got != `{"files":["notes.txt"]}` {
		t.Fatalf("list_project_files = %s", got)
	}
	in6, _ := catalogs.DecodeReadProjectFile(json.RawMessage(`{"projectId":"` + project + `","path":"notes.txt"}`))
	if got := call(tools.ReadProjectFile(ctx, in6)); strings.Contains(got, "hunter2") {
		t.Fatalf("read_project_file leaked: %s", got)
	}
	in7, _ := catalogs.DecodeReadProjectFile(json.RawMessage(`{"projectId":"` + project + `","path":"../x"}`))
	if _, err := tools.ReadProjectFile(ctx, in7); err == nil || err.Error() != "Path escapes the Freebuff project" {
		t.Fatalf("traversal: %v", err)
	}
	in8, err := catalogs.DecodeSetThreadReasoning(json.RawMessage(`{"threadId":"` + tid + `","effort":null}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := call(tools.SetThreadReasoning(ctx, in8)); !strings.Contains(got, `"operation":"set_reasoning"`) {
		t.Fatalf("set_thread_reasoning = %s", got)
	}
	in9, _ := catalogs.DecodeStopThread(json.RawMessage(`{"threadId":"bad id"}`))
	if in9 != nil {
		if _, err := tools.StopThread(ctx, in9); err == nil || err.Error() != "Invalid identifier" {
			t.Fatalf("stop with a bad id: %v", err)
		}
	}
}
