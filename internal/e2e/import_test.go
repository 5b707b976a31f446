package e2e

import (
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func importFixture(dir, name string) string {
	p, _ := filepath.Abs(filepath.Join("..", "importstate", "testdata", dir, name))
	return p
}

// TestImportStateThenReadThroughMCP imports 0.3.x files with the built
// binary and reads them back through the MCP tools: ids, sequences and
// receipts are the files'; a second import changes nothing; the imported
// deliveries are left alone by reconcile.
func TestImportStateThenReadThroughMCP(t *testing.T) {
	env := isolatedEnv(t)
	args := []string{"migrate", "import-state", "--state", importFixture("full", "state.json"), "--conversations", importFixture("full", "conversations.json")}
	var out []byte
	var err error
	if cmdEnv(t, env, args, &out, &err); err != nil || !strings.Contains(string(out), "imported 34 new records in one transaction") {
		t.Fatalf("import: %v\n%s", err, out)
	}
	cmdEnv(t, env, args, &out, &err)
	if err != nil || !strings.Contains(string(out), "nothing to import: every one of the 34 records is already in the store; the store is unchanged") {
		t.Fatalf("second import: %v\n%s", err, out)
	}

	cs := connect(t, []string{"serve", "--profile", "core"}, env)
	var works struct {
		Works []struct {
			ID, Status, CreatedAt string
			DependsOn             []string
		}
	}
	call(t, cs, "list_work_items", map[string]any{}, &works)
	got := map[string]string{}
	for _, w := range works.Works {
		got[w.ID] = w.Status + " " + w.CreatedAt + " " + strings.Join(w.DependsOn, ",")
	}
	want := map[string]string{
		"work_1767312000000_aaaaaa": "blocked 2026-01-02T00:00:00.000Z ",
		"work_1767312060000_bbbbbb": "accepted 2026-01-02T00:01:00.000Z work_1767312120000_cccccc",
		"work_1767312120000_cccccc": "rejected 2026-01-02T00:02:00.000Z ",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("list_work_items = %v\nwant %v", got, want)
	}
	var item struct {
		Work struct {
			Objective   string
			EvidenceIDs []string `json:"evidenceIds"`
		}
		Handoffs []struct{ ID, Status string }
		Reviews  []struct {
			ID         string
			EvidenceID string `json:"evidenceId"`
		}
	}
	call(t, cs, "get_work_item", map[string]any{"workId": "work_1767312000000_aaaaaa"}, &item)
	if item.Work.Objective != "Every field" || strings.Join(item.Work.EvidenceIDs, ",") != "evidence_full_1,evidence_full_2,evidence_full_5" ||
		len(item.Handoffs) != 1 || item.Handoffs[0].ID != "handoff_full_1" || item.Handoffs[0].Status != "blocked" ||
		len(item.Reviews) != 1 || item.Reviews[0].ID != "review_full_1" || item.Reviews[0].EvidenceID != "evidence_full_5" {
		t.Errorf("get_work_item = %+v", item)
	}
	var ev struct {
		ID, ContentHash string
		Data            any
	}
	call(t, cs, "get_evidence", map[string]any{"evidenceId": "evidence_full_3"}, &ev)
	if ev.Data != "a plain string" || len(ev.ContentHash) != 64 {
		t.Errorf("get_evidence = %+v", ev)
	}

	type message struct {
		ID, Delivery, IdempotencyKey, OperationID string
		Sequence                                  int64
		Receipt                                   *struct {
			Status, ProviderState string
			Accepted              bool
			Detail                map[string]any
		}
	}
	type page struct {
		Conversation   struct{ ID, Title string }
		Messages       []message
		Next           int64
		LatestSequence int64
		Gap            *struct{ From, To int64 }
	}
	var p page
	call(t, cs, "read_conversation", map[string]any{"conversationId": "conversation_full_trimmed"}, &p)
	var seqs []int64
	deliveries := map[string]string{}
	for _, m := range p.Messages {
		seqs = append(seqs, m.Sequence)
		deliveries[m.ID] = m.Delivery
	}
	if p.LatestSequence != 9 || p.Next != 9 || p.Gap == nil || p.Gap.From != 1 || p.Gap.To != 2 ||
		!reflect.DeepEqual(seqs, []int64{3, 4, 5, 6, 7, 8, 9}) {
		t.Errorf("read_conversation = latest %d next %d gap %+v seqs %v", p.LatestSequence, p.Next, p.Gap, seqs)
	}
	wantDelivery := map[string]string{
		"message_f3": "completed", "message_f4": "rejected", "message_f5": "queued", "message_f6": "delivery_unknown",
		"message_f7": "delivery_unknown", "message_f8": "delivery_unknown", "message_f9": "delivery_unknown",
	}
	if !reflect.DeepEqual(deliveries, wantDelivery) {
		t.Errorf("deliveries = %v", deliveries)
	}
	for _, m := range p.Messages {
		if m.OperationID != "op_import_"+m.ID || m.Receipt == nil {
			t.Errorf("message %s: operation %q receipt %+v", m.ID, m.OperationID, m.Receipt)
			continue
		}
		if m.ID == "message_f7" && m.Receipt.Detail["reason"] != "imported from 0.3.x while in flight" {
			t.Errorf("in-flight message receipt = %+v", m.Receipt)
		}
		if m.ID == "message_f3" && (m.IdempotencyKey != "k3" || m.Receipt.ProviderState != "end_turn" || !m.Receipt.Accepted) {
			t.Errorf("completed message = %+v %+v", m, m.Receipt)
		}
	}
	// reconcile_conversation settles nothing of it and resends nothing.
	var rec []struct {
		Message          message
		Resolved         bool
		PreviousDelivery string
	}
	call(t, cs, "reconcile_conversation", map[string]any{"conversationId": "conversation_full_trimmed"}, &struct {
		Results *[]struct {
			Message          message
			Resolved         bool
			PreviousDelivery string
		} `json:"results"`
	}{&rec})
	var after page
	call(t, cs, "read_conversation", map[string]any{"conversationId": "conversation_full_trimmed"}, &after)
	if !reflect.DeepEqual(after.Messages, p.Messages) {
		t.Errorf("reconcile changed imported messages:\nbefore %+v\nafter  %+v", p.Messages, after.Messages)
	}
	var looked []string
	for _, r := range rec {
		looked = append(looked, r.Message.ID)
		if r.Resolved || r.Message.ID == "message_f5" || r.PreviousDelivery != "delivery_unknown" {
			t.Errorf("reconcile result %+v", r)
		}
	}
	if strings.Join(looked, ",") != "message_f6,message_f7,message_f8,message_f9" {
		t.Errorf("reconcile looked at %v", looked)
	}
	// The legacy name reads the same records.
	cs.Close()
	legacy := connect(t, []string{"serve", "--profile", "legacy"}, env)
	var old page
	call(t, legacy, "conversation_read", map[string]any{"conversationId": "conversation_full_old"}, &old)
	if len(old.Messages) != 2 || old.Messages[0].Sequence != 1 || old.Messages[1].Sequence != 2 || old.Messages[0].IdempotencyKey != "import_message_old_1" {
		t.Errorf("conversation_read = %+v", old)
	}
}

// cmdEnv runs the binary with args in env, setting out and err.
func cmdEnv(t *testing.T, env, args []string, out *[]byte, err *error) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = env
	*out, *err = cmd.CombinedOutput()
}
