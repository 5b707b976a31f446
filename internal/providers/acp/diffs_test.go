package acp

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestDiffFromCompletedToolCalls(t *testing.T) {
	b := newDiffBook()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	up := func(kind, turn string, v map[string]any) {
		raw, _ := json.Marshal(v)
		b.observe("s1", kind, raw, turn, now)
	}
	diff := func(path string, old any, new string) map[string]any {
		return map[string]any{"type": "diff", "path": path, "oldText": old, "newText": new}
	}
	// Turn 1: a Write that completes (new file), an Edit that completes
	// with a located hunk, an Edit that fails (rejected), one still pending.
	up("tool_call", "t1", map[string]any{"toolCallId": "w", "title": "Write new.txt", "status": "pending",
		"content": []any{diff("/ws/new.txt", nil, "hello\nworld\n")}})
	up("tool_call_update", "t1", map[string]any{"toolCallId": "w", "status": "completed"})
	up("tool_call", "t1", map[string]any{"toolCallId": "e", "title": "Edit a.go", "status": "pending",
		"content": []any{diff("/ws/a.go", "x := 1", "x := 2")}})
	up("tool_call_update", "t1", map[string]any{"toolCallId": "e", "status": "completed",
		"content":   []any{diff("/ws/a.go", "package a\n\nx := 1\n", "package a\n\nx := 2\n")},
		"locations": []any{map[string]any{"path": "/ws/a.go", "line": 10}}})
	up("tool_call", "t1", map[string]any{"toolCallId": "r", "title": "Edit b.go", "status": "pending",
		"content": []any{diff("/ws/b.go", "old", "rejected change")}})
	up("tool_call_update", "t1", map[string]any{"toolCallId": "r", "status": "failed"})
	up("tool_call", "t1", map[string]any{"toolCallId": "p", "title": "Edit c.go", "status": "pending",
		"content": []any{diff("/ws/c.go", "a", "b")}})
	up("tool_call", "t1", map[string]any{"toolCallId": "read", "title": "Read", "status": "completed", "content": []any{}})
	// Another session's calls never leak in.
	raw, _ := json.Marshal(map[string]any{"toolCallId": "o", "status": "completed", "content": []any{diff("/ws/other.txt", nil, "x")}})
	b.observe("s2", "tool_call", raw, "t9", now)

	res, known := b.diff("s1", "", "/ws")
	if !known || !res.Observed || res.TurnID != "t1" || len(res.Files) != 2 {
		t.Fatalf("diff = %+v", res)
	}
	nf, ed := res.Files[0], res.Files[1]
	if nf.Path != "new.txt" || !nf.NewFile || nf.Additions != 2 || nf.Deletions != 0 || !strings.HasPrefix(nf.Patch, "--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1,2 @@\n+hello\n+world\n") {
		t.Errorf("new file = %+v\n%s", nf, nf.Patch)
	}
	if ed.Path != "a.go" || ed.Additions != 1 || ed.Deletions != 1 || !strings.Contains(ed.Patch, "--- a/a.go\n+++ b/a.go\n@@ -10,3 +10,3 @@\n package a\n \n-x := 1\n+x := 2\n") {
		t.Errorf("edit = %+v\n%s", ed, ed.Patch)
	}
	if len(res.Skipped) != 2 || res.Skipped[0].ToolCallID != "r" || res.Skipped[0].Status != "failed" || res.Skipped[1].Status != "pending" {
		t.Errorf("skipped = %+v", res.Skipped)
	}
	if strings.Contains(res.Diff, "rejected change") || strings.Contains(res.Diff, "c.go") || res.Diff != nf.Patch+ed.Patch {
		t.Errorf("combined diff:\n%s", res.Diff)
	}
	// A later turn without edits: the latest turn with diff content is
	// still t1; naming t2 gives an empty, unobserved diff.
	up("tool_call", "t2", map[string]any{"toolCallId": "q", "title": "Read", "status": "completed"})
	if res, _ := b.diff("s1", "", "/ws"); res.TurnID != "t1" {
		t.Errorf("latest = %s", res.TurnID)
	}
	if res, known := b.diff("s1", "t2", "/ws"); !known || res.Observed || len(res.Files) != 0 {
		t.Errorf("turn t2 = %+v, %v", res, known)
	}
	if _, known := b.diff("s1", "nope", "/ws"); known {
		t.Error("an unknown turn is known")
	}
	if res, known := b.diff("s3", "", ""); !known || res.Observed {
		t.Errorf("unseen session = %+v", res)
	}
}

// TestDiffFromPermissionToolCall: an agent that carries an edit's diff
// only in its permission request's tool call (opencode acp) and completes
// the call without content still gets that diff.
func TestDiffFromPermissionToolCall(t *testing.T) {
	b := newDiffBook()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	c := &Client{sessions: map[string]*session{}, cfg: Config{Observe: func(sid, kind string, u json.RawMessage, turn string) {
		b.observe(sid, kind, u, turn, now)
	}}}
	up := func(kind, v string) { c.cfg.Observe("s1", kind, json.RawMessage(v), "t1") }
	up("tool_call", `{"toolCallId":"w","title":"write","kind":"edit","status":"pending","rawInput":{}}`)
	c.observeToolCall("s1", json.RawMessage(`{"toolCallId":"w","title":"allowed.txt","kind":"edit",`+
		`"content":[{"type":"diff","path":"/ws/allowed.txt","oldText":"","newText":"yes\n"}]}`))
	// A rejected call's request carries a diff too; the call fails.
	up("tool_call", `{"toolCallId":"r","title":"write","kind":"edit","status":"pending"}`)
	c.observeToolCall("s1", json.RawMessage(`{"toolCallId":"r","content":[{"type":"diff","path":"/ws/rejected.txt","oldText":"","newText":"no\n"}]}`))
	up("tool_call_update", `{"toolCallId":"r","status":"failed","content":[{"type":"content","content":{"type":"text","text":"rejected"}}]}`)
	up("tool_call_update", `{"toolCallId":"w","status":"completed","content":[{"type":"content","content":{"type":"text","text":"Wrote file"}}]}`)
	c.observeToolCall("s1", nil) // no tool call: nothing observed

	res, known := b.diff("s1", "t1", "/ws")
	if !known || !res.Observed || len(res.Files) != 1 || res.Files[0].Path != "allowed.txt" || !strings.Contains(res.Diff, "+yes") {
		t.Fatalf("diff = %+v", res)
	}
	if strings.Contains(res.Diff, "+no") || len(res.Skipped) != 1 || res.Skipped[0].ToolCallID != "r" {
		t.Fatalf("the rejected call's diff leaked: %+v", res)
	}
}
