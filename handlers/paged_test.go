package handlers

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/agent-interop/runtime/catalogs"
	"github.com/agent-interop/runtime/internal/claims"
	"github.com/agent-interop/runtime/internal/conversations"
	"github.com/agent-interop/runtime/internal/paging"
	"github.com/agent-interop/runtime/internal/providers/registry"
	"github.com/agent-interop/runtime/internal/testutil/teststore"
	"github.com/agent-interop/runtime/internal/workflow"
)

// TestPagedToolsAnswerCuttablePages calls every paged tool the store
// alone can answer, through the generated decoder with default arguments:
// its answer must be a page the server's guard can cut (the generated
// answer type with the service page's Cut set), or the budget would not be
// enforced for it. (Tools that need a provider program are
// covered by the static assertions next to their page types.)
func TestPagedToolsAnswerCuttablePages(t *testing.T) {
	ctx := context.Background()
	st := teststore.Open(t)
	wf := workflow.New(st, workflow.Options{})
	w, err := wf.CreateWork(ctx, workflow.CreateWorkInput{Objective: "o", AcceptanceCriteria: []string{"x"}})
	if err != nil {
		t.Fatal(err)
	}
	conv := conversations.New(st, nil)
	c, err := conv.Create(ctx, "t")
	if err != nil {
		t.Fatal(err)
	}
	reg, err := registry.New(st, nil, registry.Options{})
	if err != nil {
		t.Fatal(err)
	}
	h := New(Deps{Store: st, Workflow: wf, Claims: claims.New(st), Conversations: conv, Registry: reg})
	args := map[string]string{
		"get_work_item":     `{"workId":"` + w.ID + `"}`,
		"read_conversation": `{"conversationId":"` + c.ID + `"}`,
	}
	checked := 0
	for _, e := range catalogs.All() {
		if !e.Paged || e.Legacy {
			continue
		}
		switch e.Group {
		case "freebuff":
			continue
		}
		if e.Name == "read_session_events" {
			continue
		}
		raw := args[e.Name]
		if raw == "" {
			raw = "{}"
		}
		in, err := e.Decode(json.RawMessage(raw))
		if err != nil {
			t.Fatalf("%s: %v", e.Name, err)
		}
		out, err := e.Call(ctx, h, in)
		if err != nil {
			t.Fatalf("%s: %v", e.Name, err)
		}
		if _, ok := out.(paging.Cuttable); !ok || !cutSet(out) {
			t.Errorf("%s answers %T without its Cut, which the budget guard cannot cut", e.Name, out)
		}
		checked++
	}
	if checked < 9 {
		t.Fatalf("checked only %d paged tools", checked)
	}
}

// cutSet reports whether a generated paged answer carries its Cut.
func cutSet(out any) bool {
	v := reflect.ValueOf(out)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return false
	}
	f := v.Elem().FieldByName("Cut")
	return f.IsValid() && f.Kind() == reflect.Func && !f.IsNil()
}
