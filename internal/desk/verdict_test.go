package desk

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/agent-interop/runtime/ent/operation"
)

// TestReceiptsShowVerdictAndUsage: a send's verdict and reported usage
// appear on the receipts list and its receipt page; a send whose provider
// reported no usage says unknown, never 0.
func TestReceiptsShowVerdictAndUsage(t *testing.T) {
	f := newFixture(t)
	at := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	f.addOperation("op_v1", "thread-1", "send", operation.StatusCompleted, at)
	f.addOperation("op_v2", "thread-1", "send", operation.StatusRejected, at.Add(time.Second))
	ctx := context.Background()
	if err := f.ent().Operation.UpdateOneID("op_v1").SetVerdict("answered").SetUsage(json.RawMessage(`{"input":100,"output":30,"costUsd":0.00126}`)).
		SetChangedFiles([]string{"/w/a.go"}).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if err := f.ent().Operation.UpdateOneID("op_v2").SetVerdict("failed").SetTurnError("400 bad request").Exec(ctx); err != nil {
		t.Fatal(err)
	}
	_, list := f.get("/desk/receipts", bearer...)
	if !strings.Contains(list, ">answered</span>") || !strings.Contains(list, "in 100 · out 30 · $0.0013") || !strings.Contains(list, ">failed</span>") {
		t.Fatalf("receipts list lacks the verdicts or usage:\n%s", list)
	}
	_, page := f.get("/desk/receipts/op_v1", bearer...)
	if !strings.Contains(page, "<dt>Verdict</dt>") || !strings.Contains(page, "<code>/w/a.go</code>") {
		t.Fatalf("receipt page:\n%s", page)
	}
	_, page = f.get("/desk/receipts/op_v2", bearer...)
	if !strings.Contains(page, "failed: 400 bad request") || !strings.Contains(page, "unknown (not reported)") {
		t.Fatalf("receipt page:\n%s", page)
	}
}
