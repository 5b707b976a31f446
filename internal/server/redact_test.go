package server

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/agent-interop/runtime/catalogs"
)

// leakyHandlers answer with secrets in every place an answer can carry
// text: a plain field, a nested event's data, a diff, and an error text.
type leakyHandlers struct {
	catalogs.Unimplemented
	secret string
}

func (h *leakyHandlers) ReadSessionEvents(context.Context, *catalogs.ReadSessionEventsInput) (*catalogs.ReadSessionEventsOutput, error) {
	return &catalogs.ReadSessionEventsOutput{Events: []catalogs.Event{
		{Provider: "codex", NativeID: "t1", Sequence: 1, Type: "message", Data: map[string]any{"text": "export DB=redis://:" + h.secret + "@cache:6379"}},
	}}, nil
}

func (h *leakyHandlers) GetSessionDiff(context.Context, *catalogs.GetSessionDiffInput) (*catalogs.GetSessionDiffOutput, error) {
	return &catalogs.GetSessionDiffOutput{Provider: "codex", NativeID: "t1", Diff: "+++ b/config.yml\n+password: " + h.secret + "\n"}, nil
}

func (h *leakyHandlers) SendSessionMessage(context.Context, *catalogs.SendSessionMessageInput) (*catalogs.Delivery, error) {
	return nil, errors.New("provider said: 401 for Authorization: Bearer " + h.secret + " on /v1/chat")
}

func TestEveryAnswerGoesThroughTheRedactor(t *testing.T) {
	h := &leakyHandlers{secret: "S3cr3t-" + strings.Repeat("x9", 10)}
	cs := session(t, "full", h)
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"read_session_events", map[string]any{"provider": "codex", "nativeId": "t1"}},
		{"get_session_diff", map[string]any{"provider": "codex", "nativeId": "t1"}},
		{"send_session_message", map[string]any{"provider": "codex", "nativeId": "t1", "text": "hi"}},
	} {
		res, text := call(t, cs, c.tool, c.args)
		if strings.Contains(text, h.secret) || strings.Contains(mustJSON(t, res.StructuredContent), h.secret) {
			t.Errorf("%s leaked the secret: %s", c.tool, text)
		}
		if !strings.Contains(text, "[REDACTED]") {
			t.Errorf("%s: no redaction marker in %s", c.tool, text)
		}
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	if v == nil {
		return ""
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
