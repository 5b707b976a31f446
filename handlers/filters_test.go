package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agent-interop/runtime/internal/argv"
	"github.com/agent-interop/runtime/internal/claims"
	"github.com/agent-interop/runtime/internal/conversations"
	"github.com/agent-interop/runtime/internal/providers"
	"github.com/agent-interop/runtime/internal/providers/registry"
	"github.com/agent-interop/runtime/internal/providers/registry/registrytest"
	"github.com/agent-interop/runtime/internal/testutil/testclock"
	"github.com/agent-interop/runtime/internal/testutil/teststore"
	"github.com/agent-interop/runtime/internal/workflow"
)

// filterFixture is a store with records of two sessions (codex:a and
// codex:b) in every listing, and the handlers over it.
type filterFixture struct {
	h     *Handlers
	ids   map[string]string // seeded record IDs by name
	since string            // between the first and the later conversations
}

func newFilterFixture(t *testing.T) *filterFixture {
	t.Helper()
	ctx := context.Background()
	st := teststore.Open(t)
	clock := testclock.At(t, time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	wf := workflow.New(st, workflow.Options{Clock: clock})
	cl := claims.New(st, claims.WithClock(clock))
	conv := conversations.New(st, nil, conversations.WithClock(clock))
	codex := &registrytest.Adapter{Provider: providers.Codex}
	codex.SetSessions([]providers.Session{codex.Session("a", ""), codex.Session("b", "")}, nil)
	for i, native := range []string{"a", "b", "a"} {
		codex.Pending = append(codex.Pending, providers.PermissionRequest{Provider: providers.Codex, RequestID: "perm-" + native + string(rune('0'+i)),
			NativeID: native, Method: "edit", RequestedAt: clock.Now().Add(time.Duration(i) * time.Second)})
	}
	reg, err := registry.New(st, []providers.Adapter{codex}, registry.Options{})
	if err != nil {
		t.Fatal(err)
	}
	f := &filterFixture{h: New(Deps{Store: st, Workflow: wf, Claims: cl, Conversations: conv, Registry: reg}), ids: map[string]string{}}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	tick := func() { clock.Advance(time.Second) }
	for _, s := range []string{"a", "b"} {
		session := "codex:" + s
		w, err := wf.CreateWork(ctx, workflow.CreateWorkInput{Objective: "o", AcceptanceCriteria: []string{"c"}, SourceSession: &session})
		must(err)
		f.ids["work "+s] = w.ID
		tick()
	}
	evidence := func(name, work, session string) {
		e, err := wf.AddEvidence(ctx, workflow.AddEvidenceInput{WorkID: strPtr(f.ids["work "+work]), SessionID: strPtr("codex:" + session),
			Kind: "diff", Trust: "provider_observed", Source: workflow.EvidenceSource{Adapter: "codex"}, Summary: name, Data: name})
		must(err)
		f.ids[name] = e.ID
		tick()
	}
	evidence("ev a1", "a", "a")
	evidence("ev b1", "b", "b")
	evidence("ev a2", "a", "a")
	evidence("ev b-on-a", "a", "b")
	claim := func(name, work, session string, release bool) {
		c, err := cl.Acquire(ctx, claims.AcquireInput{WorkID: f.ids["work "+work], SessionID: "codex:" + session, Resource: name + ".go"})
		must(err)
		if release {
			_, err = cl.Release(ctx, claims.ReleaseInput{ClaimID: c.ID})
			must(err)
		}
		f.ids[name] = c.ID
		tick()
	}
	claim("claim a1", "a", "a", false)
	claim("claim b1", "b", "b", false)
	claim("claim a2", "a", "a", true)
	claim("claim a3", "b", "a", false)
	conversation := func(name string, natives ...string) {
		c, err := conv.Create(ctx, name)
		must(err)
		for _, n := range natives {
			_, err := conv.Join(ctx, conversations.JoinInput{ConversationID: c.ID, Provider: "codex", NativeID: n})
			must(err)
		}
		f.ids[name] = c.ID
		tick()
	}
	conversation("conv a1", "a")
	f.since = clock.Now().Format(time.RFC3339Nano)
	conversation("conv ab", "a", "b")
	conversation("conv b1", "b")
	conversation("conv a2", "a")
	return f
}

func strPtr(s string) *string { return &s }

// call decodes args for tool, calls it and returns the answer as JSON
// (nil and the error when it fails).
func (f *filterFixture) call(t *testing.T, tool, args string) (map[string]any, error) {
	t.Helper()
	e := entry(t, tool)
	in, err := e.Decode(json.RawMessage(args))
	if err != nil {
		return nil, err
	}
	out, err := e.Call(context.Background(), f.h, in)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(mustJSON(t, out)), &m); err != nil {
		t.Fatal(err)
	}
	return m, nil
}

// names maps the records of answer field list back to their seeded names.
func (f *filterFixture) names(m map[string]any, list, idField string) []string {
	var out []string
	items, _ := m[list].([]any)
	for _, it := range items {
		id, _ := it.(map[string]any)[idField].(string)
		name := id
		for n, v := range f.ids {
			if v == id {
				name = n
			}
		}
		out = append(out, name)
	}
	return out
}

// withArg returns the JSON object args with one more member.
func withArg(args, name, value string) string {
	if args == "{}" {
		return `{"` + name + `":` + value + `}`
	}
	return strings.TrimSuffix(args, "}") + `,"` + name + `":` + value + `}`
}

// TestListFilters calls every listing through its generated decoder with
// each filter alone and combined: the answer holds exactly the seeded
// records the filter selects, newest first (oldest first for permission
// requests); paging it one record at a time returns the same records,
// and a cursor replayed under another filter is refused naming cursor.
func TestListFilters(t *testing.T) {
	f := newFilterFixture(t)
	tests := []struct {
		tool, args   string
		list, id     string
		want         []string
		otherFilters string // a call whose filters differ, for the cursor replay
	}{
		{"list_claims", `{"session":"codex:a"}`, "claims", "id", []string{"claim a3", "claim a2", "claim a1"}, `{"session":"codex:b"}`},
		{"list_claims", `{"session":"codex:a","activeOnly":true}`, "claims", "id", []string{"claim a3", "claim a1"}, `{"session":"codex:a"}`},
		{"list_claims", `{"session":"codex:a","workId":"{{work a}}"}`, "claims", "id", []string{"claim a2", "claim a1"}, `{"workId":"{{work a}}"}`},
		{"list_claims", `{"session":" codex:b "}`, "claims", "id", []string{"claim b1"}, `{}`},
		{"list_evidence", `{"session":"codex:b"}`, "evidence", "id", []string{"ev b-on-a", "ev b1"}, `{"session":"codex:a"}`},
		{"list_evidence", `{"session":"codex:a","workId":"{{work a}}"}`, "evidence", "id", []string{"ev a2", "ev a1"}, `{"session":"codex:b","workId":"{{work a}}"}`},
		{"list_evidence", `{"session":"codex:nobody"}`, "evidence", "id", nil, `{}`},
		{"list_conversations", `{"session":"codex:a"}`, "conversations", "id", []string{"conv a2", "conv ab", "conv a1"}, `{"session":"codex:b"}`},
		{"list_conversations", `{"updatedSince":"{{since}}"}`, "conversations", "id", []string{"conv a2", "conv b1", "conv ab"}, `{}`},
		{"list_conversations", `{"session":"codex:a","updatedSince":"{{since}}"}`, "conversations", "id", []string{"conv a2", "conv ab"}, `{"session":"codex:a"}`},
		{"list_permission_requests", `{"session":"codex:a"}`, "pending", "requestId", []string{"perm-a0", "perm-a2"}, `{"session":"codex:b"}`},
		{"list_permission_requests", `{"session":"codex:b"}`, "pending", "requestId", []string{"perm-b1"}, `{}`},
		{"list_work_items", `{"session":"codex:b"}`, "works", "id", []string{"work b"}, `{"session":"codex:a"}`},
	}
	expand := func(s string) string {
		s = strings.ReplaceAll(s, "{{since}}", f.since)
		for n, id := range f.ids {
			s = strings.ReplaceAll(s, "{{"+n+"}}", id)
		}
		return s
	}
	for _, tt := range tests {
		args, other := expand(tt.args), expand(tt.otherFilters)
		t.Run(tt.tool+" "+args, func(t *testing.T) {
			m, err := f.call(t, tt.tool, args)
			if err != nil {
				t.Fatal(err)
			}
			if got := f.names(m, tt.list, tt.id); !slices.Equal(got, tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
			if len(tt.want) < 2 {
				return
			}
			var paged []string
			cursor := ""
			for range len(tt.want) + 1 {
				a := withArg(args, "limit", "1")
				if cursor != "" {
					a = withArg(a, "cursor", `"`+cursor+`"`)
				}
				page, err := f.call(t, tt.tool, a)
				if err != nil {
					t.Fatalf("page after %q: %v", cursor, err)
				}
				paged = append(paged, f.names(page, tt.list, tt.id)...)
				next, _ := page["nextCursor"].(string)
				if next == "" {
					break
				}
				cursor = next
				if len(paged) == 1 {
					_, err := f.call(t, tt.tool, withArg(withArg(other, "limit", "1"), "cursor", `"`+next+`"`))
					if field := argField(err); field != "cursor" || !strings.Contains(err.Error(), "other filter arguments") {
						t.Errorf("cursor replayed with %s: err = %v, want a cursor error naming other filter arguments", other, err)
					}
				}
			}
			if !slices.Equal(paged, tt.want) {
				t.Errorf("paged one at a time: %v, want %v", paged, tt.want)
			}
		})
	}
}

// argField is the argument a tool error names ("" when err is not one
// argument error).
func argField(err error) string {
	var ae *argv.Errors
	if !errors.As(err, &ae) || len(ae.Fields) != 1 {
		return ""
	}
	return ae.Fields[0].Field
}

// TestListFilterRefusals gives every filter a bad value: the call fails
// with an argument error naming the filter and saying the rule.
func TestListFilterRefusals(t *testing.T) {
	f := newFilterFixture(t)
	tests := []struct {
		tool, args, field, rule string
	}{
		{"list_work_items", `{"status":"done"}`, "status", "open"},
		{"list_work_items", `{"updatedSince":"yesterday"}`, "updatedSince", "RFC 3339"},
		{"list_work_items", `{"session":"   "}`, "session", "blank"},
		{"get_work_graph", `{"session":"codex:a\u0007"}`, "session", "control characters"},
		{"list_claims", `{"session":"\t"}`, "session", "blank"},
		{"list_evidence", `{"session":" "}`, "session", "blank"},
		{"list_conversations", `{"session":"codex"}`, "session", "<provider>:<nativeId>"},
		{"list_conversations", `{"session":"codex:"}`, "session", "<provider>:<nativeId>"},
		{"list_conversations", `{"session":"bogus:a"}`, "session", `unknown provider "bogus"`},
		{"list_conversations", `{"updatedSince":"2026-13-01T00:00:00Z"}`, "updatedSince", "RFC 3339"},
		{"list_permission_requests", `{"session":":a"}`, "session", "<provider>:<nativeId>"},
		{"list_permission_requests", `{"session":"bogus:a"}`, "session", `unknown provider "bogus"`},
		{"list_claims", `{"session":"codex:a","limit":0}`, "limit", ""},
	}
	for _, tt := range tests {
		t.Run(tt.tool+" "+tt.args, func(t *testing.T) {
			_, err := f.call(t, tt.tool, tt.args)
			if argField(err) != tt.field || !strings.Contains(err.Error(), tt.rule) {
				t.Fatalf("err = %v, want an argument error naming %s (%q)", err, tt.field, tt.rule)
			}
		})
	}
}
