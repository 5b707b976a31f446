package importstate

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// writeLarge writes a 0.3.x state with works works (each with one
// evidence record and one handoff) and convs conversations of msgs
// messages, and returns the two paths and the number of records.
func writeLarge(tb testing.TB, works, convs, msgs int) (string, string, int) {
	dir := tb.TempDir()
	var ws, es, hs []map[string]any
	for i := range works {
		id := fmt.Sprintf("work_%d_%06d", 1767225600000+i, i)
		ev := fmt.Sprintf("evidence_%d_%06d", 1767225600000+i, i)
		ws = append(ws, map[string]any{"id": id, "objective": "objective " + id, "acceptanceCriteria": []string{"a", "b"}, "status": "open",
			"changedFiles": []string{}, "risks": []string{}, "unresolvedQuestions": []string{}, "evidenceIds": []string{ev},
			"createdAt": "2026-01-01T00:00:00.000Z", "updatedAt": "2026-01-01T00:00:00.000Z"})
		es = append(es, map[string]any{"id": ev, "workId": id, "kind": "test", "trust": "runtime_observed", "source": map[string]any{"adapter": "x"},
			"capturedAt": "2026-01-01T00:00:00.000Z", "summary": "s", "data": map[string]any{"exitCode": 0, "stdout": "ok", "n": i}})
		hs = append(hs, map[string]any{"id": "handoff_" + id, "workId": id, "sourceSession": "codex:t", "objective": "o", "status": "created",
			"acceptanceCriteria": []string{"a"}, "contextTokens": 100, "tokenBudget": 2000, "createdAt": "2026-01-01T00:00:00.000Z"})
	}
	var cs []map[string]any
	for c := range convs {
		cid := fmt.Sprintf("conversation_%d", c)
		var ms []map[string]any
		for m := range msgs {
			ms = append(ms, map[string]any{"id": fmt.Sprintf("message_%d_%d", c, m), "sender": "a", "recipient": "b", "text": "hello",
				"createdAt": "2026-01-01T00:00:00.000Z", "sequence": m + 1, "delivery": "completed", "idempotencyKey": fmt.Sprintf("k_%d_%d", c, m),
				"receipt": map[string]any{"provider": "opencode", "nativeId": "s", "operation": "send", "accepted": true, "status": "completed"}})
		}
		cs = append(cs, map[string]any{"id": cid, "title": "t", "createdAt": "2026-01-01T00:00:00.000Z", "lastSequence": msgs,
			"participants": []map[string]any{{"id": "a", "provider": "codex", "nativeId": "t"}, {"id": "b", "provider": "opencode", "nativeId": "s"}},
			"messages":     ms})
	}
	state, conversations := filepath.Join(dir, "state.json"), filepath.Join(dir, "conversations.json")
	for path, v := range map[string]any{state: map[string]any{"works": ws, "evidence": es, "handoffs": hs},
		conversations: map[string]any{"version": 2, "conversations": cs}} {
		b, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(path, b, 0o600); err != nil {
			tb.Fatal(err)
		}
	}
	return state, conversations, 3*works + convs*(3+msgs)
}

// BenchmarkImport imports 1,000 work items (with evidence and handoffs)
// and 20 conversations of 100 messages into a fresh store per iteration;
// BenchmarkImportAgain runs the idempotent second import and
// BenchmarkParse the checks alone.
func BenchmarkImport(b *testing.B) {
	state, convs, records := writeLarge(b, 1000, 20, 100)
	lookup := func(string) (string, bool) { return "", false }
	for b.Loop() {
		b.StopTimer()
		db := filepath.Join(b.TempDir(), "interop.db")
		b.StartTimer()
		rep, err := Run(context.Background(), Config{StateFile: state, ConversationsFile: convs, Store: db, Clock: fixedClock(b), Lookup: lookup})
		if err != nil || rep.New() != records {
			b.Fatalf("%v %+v", err, rep)
		}
	}
	b.ReportMetric(float64(records)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
}

func BenchmarkImportAgain(b *testing.B) {
	state, convs, records := writeLarge(b, 1000, 20, 100)
	lookup := func(string) (string, bool) { return "", false }
	db := filepath.Join(b.TempDir(), "interop.db")
	cfg := Config{StateFile: state, ConversationsFile: convs, Store: db, Clock: fixedClock(b), Lookup: lookup}
	if _, err := Run(context.Background(), cfg); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		rep, err := Run(context.Background(), cfg)
		if err != nil || !rep.Unchanged || rep.Total() != records {
			b.Fatalf("%v %+v", err, rep)
		}
	}
	b.ReportMetric(float64(records)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
}

// BenchmarkParse is the part of BenchmarkImport before the store: reading
// and checking the same files.
func BenchmarkParse(b *testing.B) {
	state, convs, records := writeLarge(b, 1000, 20, 100)
	sb, _ := os.ReadFile(state)
	cb, _ := os.ReadFile(convs)
	for b.Loop() {
		if _, err := Parse(&File{Path: state, Data: sb}, &File{Path: convs, Data: cb}, importNow); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(records)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
}
