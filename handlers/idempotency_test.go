package handlers

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/agent-interop/runtime/internal/delivery"
)

// TestOneIdempotencyRuleAcrossTools: every write tool that takes an
// idempotencyKey follows delivery.KeyRule, from raw arguments through the
// generated decoder and the real services: the same arguments again
// answer the same operation and dispatch nothing; other arguments under
// the key are refused with an error naming idempotencyKey and the rule,
// and dispatch nothing.
func TestOneIdempotencyRuleAcrossTools(t *testing.T) {
	f := newBoundsFixture(t)
	opID := regexp.MustCompile(`"operationId":"([^"]+)"`)
	for _, tc := range []struct {
		tool string
		// change is the argument that differs in the refused call.
		change map[string]any
	}{
		{"send_session_message", map[string]any{"text": "hi again"}},
		{"cancel_session", map[string]any{"nativeId": "t2"}},
		{"respond_to_permission", map[string]any{"nativeId": "t2"}},
		{"send_conversation_message", map[string]any{"text": "hi again"}},
		{"send_thread_message", map[string]any{"text": "hi again"}},
		{"stop_thread", map[string]any{"threadId": "{{thread2}}"}},
		{"resume_thread", map[string]any{"threadId": "{{thread2}}"}},
		{"set_thread_model", map[string]any{"model": "openai/gpt-5"}},
		{"set_thread_reasoning", map[string]any{"effort": "high"}},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			e := entry(t, tc.tool)
			args := f.expand(f.args[tc.tool], 0)
			args["idempotencyKey"] = "same-key-" + tc.tool
			dispatched := func() int {
				return f.fake.CallCount("send") + f.fake.CallCount("cancel") + f.fake.CallCount("permission") + len(f.sim.Requests())
			}
			call := func(args map[string]any) (string, error) {
				raw, _ := json.Marshal(args)
				in, err := e.Decode(raw)
				if err != nil {
					t.Fatalf("decode %s: %v", raw, err)
				}
				out, err := e.Call(context.Background(), f.h, in)
				if err != nil {
					return "", err
				}
				b, _ := json.Marshal(out)
				m := opID.FindSubmatch(b)
				if m == nil {
					t.Fatalf("answer without an operationId: %s", b)
				}
				return string(m[1]), nil
			}
			first, err := call(args)
			if err != nil {
				t.Fatal(err)
			}
			before := dispatched()
			again, err := call(args)
			if err != nil || again != first {
				t.Fatalf("the same arguments again: operation %q, %v; want %s", again, err, first)
			}
			other := map[string]any{}
			for k, v := range args {
				other[k] = v
			}
			for k, v := range tc.change {
				if v == "{{thread2}}" {
					v = f.vars["thread2"]
				}
				other[k] = v
			}
			_, err = call(other)
			if err == nil || !strings.Contains(err.Error(), "idempotencyKey") || !strings.Contains(err.Error(), delivery.KeyRule) {
				t.Fatalf("other arguments under the key: %v; want a refusal naming idempotencyKey and the rule", err)
			}
			if n := dispatched(); n != before {
				t.Fatalf("the repeated and refused calls dispatched %d more writes", n-before)
			}
		})
	}
}
