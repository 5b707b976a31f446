package freebuff

import (
	"context"
	"fmt"
	"strings"

	"github.com/agent-interop/runtime/internal/providers"
	"github.com/agent-interop/runtime/internal/providers/freebuff/cli"
	"github.com/agent-interop/runtime/internal/providers/freebuff/core"
	"github.com/agent-interop/runtime/internal/security"
)

// The Freebuff thread writes are operations of the delivery ledger
// (internal/delivery, docs/delivery.md): the handlers check their
// arguments here before anything is recorded, the ledger records them and
// calls the Service's write, and a later runtime process settles an
// operation a gone one left open through the Adapter's LookupTurn.

// CheckThreadID checks a thread id (before a write is recorded).
func CheckThreadID(id string) error { return validateThreadID(id) }

// CheckText checks a prompt (before a send is recorded).
func CheckText(text string) error { return validateText(text) }

// CheckModel checks a model and a harness id and returns the harness
// ("codebuff" when empty).
func CheckModel(model, harnessID string) (string, error) {
	if err := validateModel(model); err != nil {
		return "", err
	}
	if harnessID == "" {
		harnessID = "codebuff"
	}
	if security.ValidateID(harnessID) != nil {
		return "", &InputError{Field: "harnessId", Msg: "Invalid harnessId"}
	}
	return harnessID, nil
}

// NormalizeEffort checks a reasoning effort and returns its canonical form
// (nil clears it).
func NormalizeEffort(effort *string) (*string, error) { return normalizeEffort(effort) }

var _ providers.TurnLookup = (*Adapter)(nil)

// LookupTurn finds a send in the thread's messages as Freebuff reports them
// now (the Desktop's GET /api/thread/:id, or the CLI's chat history): the
// newest user message whose text is the prompt. It is completed when the
// thread is idle and a reply follows it, rejected when it is the thread's
// last prompt and its turn ended in error, and otherwise found without a
// result (the turn still runs, or no reply followed). A prompt whose
// stored text differs (Freebuff redacts secrets in what it answers) is
// not found. Other writes leave no record to look up.
func (a *Adapter) LookupTurn(ctx context.Context, q providers.TurnQuery) (providers.TurnRecord, error) {
	rec := providers.TurnRecord{Source: "Freebuff thread messages"}
	if q.Operation != "send" {
		return rec, &providers.UnsupportedError{Provider: providers.Freebuff, Operation: q.Operation,
			Reason: "Freebuff keeps no record of a " + q.Operation}
	}
	b, err := a.svc.pick(ctx)
	if err != nil {
		return rec, err
	}
	if _, ok := b.(*cli.Backend); ok {
		rec.Source = "Freebuff CLI chat history"
	} else {
		rec.Source = "Freebuff Desktop GET /api/thread/:id"
	}
	t, err := a.svc.GetThread(ctx, q.NativeID)
	if err != nil {
		return rec, err
	}
	prompt, lastUser, replied := -1, -1, false
	for i, m := range t.Messages {
		role, text := messageText(m)
		switch role {
		case "user":
			lastUser = i
			if q.Matches(text) {
				prompt, replied = i, false
			}
		case "assistant":
			if prompt >= 0 && i > prompt {
				replied = true
			}
		}
	}
	if prompt < 0 {
		return rec, nil
	}
	rec.Found = true
	state := strings.ToLower(t.State)
	outcome, _ := t.Metadata["lastTurnOutcome"].(string)
	switch {
	case state != "" && state != "idle":
		rec.Reason = fmt.Sprintf("the thread is %s", t.State)
	case prompt == lastUser && outcome == "error":
		rec.Status = providers.StatusRejected
		rec.Reason = core.FirstStr(t.Metadata, "lastError", "error")
		if rec.Reason == "" {
			rec.Reason = "the Freebuff turn ended with an error"
		}
	case replied:
		rec.Status = providers.StatusCompleted
		rec.Reason = "the thread is idle and a reply follows the prompt"
	default:
		rec.Reason = "no reply follows the prompt"
	}
	return rec, nil
}

// messageText reads a sanitized Freebuff message's role and text: the
// Desktop's {role, parts: [{type: text, text}]}, or a {role, content}
// whose content is a string or such parts.
func messageText(m any) (role, text string) {
	mm, _ := m.(map[string]any)
	if mm == nil {
		return "", ""
	}
	role, _ = mm["role"].(string)
	if s, ok := mm["text"].(string); ok {
		return role, s
	}
	for _, k := range []string{"parts", "content"} {
		switch v := mm[k].(type) {
		case string:
			return role, v
		case []any:
			var sb strings.Builder
			for _, p := range v {
				pm, _ := p.(map[string]any)
				if typ, _ := pm["type"].(string); typ != "" && typ != "text" {
					continue
				}
				if s, ok := pm["text"].(string); ok {
					sb.WriteString(s)
				}
			}
			return role, sb.String()
		}
	}
	return role, ""
}

var _ providers.StateLookup = (*Adapter)(nil)

// LookupState settles a stop, resume, model or effort change a gone
// process left open from the thread's state as Freebuff shows it now
// (GET /api/thread/:id; the CLI shows only whether a session runs):
//   - a stop is completed when the thread shows no running turn;
//   - a resume is completed when the thread's queue is not paused, and
//     rejected when it still is (it did not take effect);
//   - a model or effort change is completed when the thread shows the
//     value asked for; another value may be a later change by someone
//     else, so it stays unknown.
//
// Whatever the thread does not show is not found (delivery_unknown).
func (a *Adapter) LookupState(ctx context.Context, q providers.TurnQuery) (providers.TurnRecord, error) {
	rec := providers.TurnRecord{Source: "Freebuff thread state"}
	t, err := a.svc.GetThread(ctx, q.NativeID)
	if err != nil {
		return rec, err
	}
	shown := func(status providers.ReceiptStatus, format string, args ...any) (providers.TurnRecord, error) {
		rec.Found, rec.Status, rec.Reason = true, status, fmt.Sprintf(format, args...)
		return rec, nil
	}
	switch q.Operation {
	case "cancel":
		switch state := strings.ToLower(t.State); state {
		case "":
		case "idle", "stopped", "closed":
			return shown(providers.StatusCompleted, "the thread shows no running turn (%s)", t.State)
		default:
			return shown("", "the thread is %s", t.State)
		}
	case "resume":
		if paused, ok := t.Metadata["queuePaused"].(bool); ok {
			if paused {
				return shown(providers.StatusRejected, "the thread's queue is still paused")
			}
			return shown(providers.StatusCompleted, "the thread's queue is not paused")
		}
	case "set_model":
		want, _ := q.Request["model"].(string)
		switch {
		case t.Model == "" || want == "":
		case t.Model == want:
			return shown(providers.StatusCompleted, "the thread shows model %s", t.Model)
		default:
			return shown("", "the thread shows model %s, which may be a later change", t.Model)
		}
	case "set_reasoning":
		if got, ok := t.Metadata["reasoningEffort"]; ok {
			want := q.Request["effort"]
			if fmt.Sprint(got) == fmt.Sprint(want) {
				return shown(providers.StatusCompleted, "the thread shows effort %v", got)
			}
			return shown("", "the thread shows effort %v, which may be a later change", got)
		}
	}
	return rec, nil
}
