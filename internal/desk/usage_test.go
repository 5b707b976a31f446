package desk

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/agent-interop/runtime/ent/operation"
)

// TestSessionPageTotalsUsage: a session's page totals its turns' reported
// usage; before any turn reported usage it says unknown, never 0, and
// another session's turns are not counted.
func TestSessionPageTotalsUsage(t *testing.T) {
	f := newFixture(t)
	at := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	ctx := context.Background()
	f.addOperation("op_u1", "thread-1", "send", operation.StatusCompleted, at)
	if err := f.ent().Operation.UpdateOneID("op_u1").SetVerdict("empty").Exec(ctx); err != nil {
		t.Fatal(err)
	}
	_, page := f.get("/desk/sessions/codex/thread-1", bearer...)
	if !strings.Contains(page, `<p id="session-usage">Usage: unknown over 1 turns (0 reported usage; 1 empty)</p>`) {
		t.Fatalf("session page before usage:\n%s", page)
	}
	for i, u := range []string{`{"input":100,"output":30,"costUsd":0.5}`, `{"input":20,"cached":5}`} {
		id := []string{"op_u2", "op_u3"}[i]
		f.addOperation(id, "thread-1", "send", operation.StatusCompleted, at.Add(time.Duration(i+1)*time.Second))
		if err := f.ent().Operation.UpdateOneID(id).SetVerdict("answered").SetUsage(json.RawMessage(u)).Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	f.addOperation("op_other", "thread-2", "send", operation.StatusCompleted, at)
	if err := f.ent().Operation.UpdateOneID("op_other").SetVerdict("answered").SetUsage(json.RawMessage(`{"input":9999}`)).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	_, page = f.get("/desk/sessions/codex/thread-1", bearer...)
	if want := `Usage: in 120 · out 30 · cached 5 · $0.5000 over 3 turns (2 reported usage; 2 answered, 1 empty)`; !strings.Contains(page, want) {
		t.Fatalf("session page lacks %q:\n%s", want, page)
	}
}
