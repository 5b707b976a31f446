package acp

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/agent-interop/runtime/internal/providers"
)

// CursorExtension answers Cursor's cursor/* requests:
//
//   - cursor/ask_question is held as a pending request whose options are the
//     question options (kind "answer"), "skipped" (kind "skip") and
//     "cancelled" (kind "cancel"); the decision becomes the nested outcome.
//   - cursor/create_plan is held with options accepted (kind "accept"),
//     rejected (kind "reject") and cancelled (kind "cancel").
//   - cursor/update_todos sent as a request is accepted at once, echoing the
//     todos.
//
// Any other cursor/* request is left to the -32601 answer.
func CursorExtension(ctx context.Context, in Inbound) (any, *RPCError, bool) {
	switch in.Method {
	case "cursor/ask_question":
		return askQuestion(ctx, in)
	case "cursor/create_plan":
		return createPlan(ctx, in)
	case "cursor/update_todos":
		var p struct {
			Todos json.RawMessage `json:"todos"`
		}
		_ = json.Unmarshal(in.Params, &p)
		if p.Todos == nil {
			p.Todos = json.RawMessage("[]")
		}
		return outcome(map[string]any{"outcome": "accepted", "todos": p.Todos}), nil, true
	}
	return nil, nil, false
}

func outcome(o map[string]any) map[string]any { return map[string]any{"outcome": o} }

type question struct {
	ID      string `json:"id"`
	Prompt  string `json:"prompt"`
	Options []struct {
		ID    string `json:"id"`
		Label string `json:"label"`
	} `json:"options"`
}

func askQuestion(ctx context.Context, in Inbound) (any, *RPCError, bool) {
	var p struct {
		Title     string     `json:"title"`
		Questions []question `json:"questions"`
	}
	if err := json.Unmarshal(in.Params, &p); err != nil || len(p.Questions) == 0 {
		return nil, &RPCError{Code: CodeInvalidParams, Message: "Invalid params: cursor/ask_question needs questions"}, true
	}
	var opts []providers.PermissionOption
	owner := map[string]string{} // option id -> question id
	for _, q := range p.Questions {
		for _, o := range q.Options {
			opts = append(opts, providers.PermissionOption{ID: o.ID, Name: q.Prompt + ": " + o.Label, Kind: "answer"})
			owner[o.ID] = q.ID
		}
	}
	opts = append(opts,
		providers.PermissionOption{ID: "skipped", Name: "Skip the question", Kind: "skip"},
		providers.PermissionOption{ID: "cancelled", Name: "Cancel", Kind: "cancel"})
	title := p.Title
	if title == "" {
		title = p.Questions[0].Prompt
	}
	d, err := in.Client.Hold(ctx, in.Client.ActiveSession(), in.Method, title, opts, json.RawMessage(in.Params), Paths{})
	if err != nil {
		return nil, &RPCError{Code: CodeInternalError, Message: "Internal error: " + err.Error()}, true
	}
	switch {
	case d.Cancelled || d.Option.ID == "cancelled":
		return acked(d, outcome(map[string]any{"outcome": "cancelled"})), nil, true
	case d.Option.ID == "skipped":
		return acked(d, outcome(map[string]any{"outcome": "skipped"})), nil, true
	}
	answers := []map[string]any{{"questionId": owner[d.Option.ID], "selectedOptionIds": []string{d.Option.ID}}}
	return acked(d, outcome(map[string]any{"outcome": "answered", "answers": answers})), nil, true
}

func createPlan(ctx context.Context, in Inbound) (any, *RPCError, bool) {
	var p struct {
		Name     string `json:"name"`
		Overview string `json:"overview"`
	}
	_ = json.Unmarshal(in.Params, &p)
	title := strings.TrimSpace("Plan: " + p.Name)
	opts := []providers.PermissionOption{
		{ID: "accepted", Name: "Accept the plan", Kind: "accept"},
		{ID: "rejected", Name: "Reject the plan", Kind: "reject"},
		{ID: "cancelled", Name: "Cancel", Kind: "cancel"},
	}
	d, err := in.Client.Hold(ctx, in.Client.ActiveSession(), in.Method, title, opts, json.RawMessage(in.Params), Paths{})
	if err != nil {
		return nil, &RPCError{Code: CodeInternalError, Message: "Internal error: " + err.Error()}, true
	}
	if d.Cancelled {
		return acked(d, outcome(map[string]any{"outcome": "cancelled"})), nil, true
	}
	return acked(d, outcome(map[string]any{"outcome": d.Option.ID})), nil, true
}

// acked lets Respond learn when the reply was written.
func acked(d Decision, result any) any { return d.Ack(result) }
