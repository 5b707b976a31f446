package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agent-interop/runtime/catalogs"
	"github.com/agent-interop/runtime/catalogs/limits"
	"github.com/agent-interop/runtime/internal/argv"
	"github.com/agent-interop/runtime/internal/claims"
	"github.com/agent-interop/runtime/internal/conversations"
	"github.com/agent-interop/runtime/internal/delivery"
	"github.com/agent-interop/runtime/internal/events"
	"github.com/agent-interop/runtime/internal/providers"
	"github.com/agent-interop/runtime/internal/providers/freebuff"
	"github.com/agent-interop/runtime/internal/providers/registry"
	"github.com/agent-interop/runtime/internal/providers/registry/registrytest"
	"github.com/agent-interop/runtime/internal/testutil/answercheck"
	"github.com/agent-interop/runtime/internal/testutil/freebuffsim"
	"github.com/agent-interop/runtime/internal/testutil/teststore"
	"github.com/agent-interop/runtime/internal/workflow"
)

// lengthRefusal matches an error that refuses a value for its size: what
// no layer behind the generated decoder may say about a value the tool's
// schema allows (an ent validator, a byte count, a service limit the spec
// does not declare).
var lengthRefusal = regexp.MustCompile(`(?i)exceed|at most|too long|longer than|validator failed|characters|bytes|entries|maximum`)

// TestNoLayerRefusesWhatTheSchemaAllows calls every modern tool through its
// generated decoder and the real services (store, delivery log, registry
// over a fake provider, Freebuff over the simulated Desktop) with each
// bounded argument at its bound, once in ASCII and once in 4-byte
// characters: the call may succeed or fail for another reason (an unknown
// record, a refused transition), but never for the value's size. One more
// character or entry must be refused by the decoder, naming the argument.
// Every bound of catalogs/limits is exercised.
func TestNoLayerRefusesWhatTheSchemaAllows(t *testing.T) {
	f := newBoundsFixture(t)
	covered := map[string]bool{}
	n := 0
	for _, b := range limits.Bounds {
		base, ok := f.args[b.Tool]
		if !ok {
			t.Errorf("%s has bounds but no baseline arguments in this test", b.Tool)
			continue
		}
		e := entry(t, b.Tool)
		for _, fill := range []string{"ascii", "astral"} {
			n++
			args := f.expand(base, n)
			at, err := setPath(args, b.Path, atBound(b, fill, n))
			if err != nil {
				t.Fatalf("%s %s: baseline lacks the argument: %v", b.Tool, b.Path, err)
			}
			raw, _ := json.Marshal(at)
			in, err := e.Decode(raw)
			if err != nil {
				t.Errorf("%s %s at its bound (%d, %s): the decoder refuses: %v", b.Tool, b.Path, b.Max, fill, err)
				continue
			}
			out, err := e.Call(context.Background(), f.h, in)
			if err != nil && lengthRefusal.MatchString(err.Error()) {
				t.Errorf("%s %s at its bound (%d %s, %s): %s", b.Tool, b.Path, b.Max, unit(b), fill, clip(err.Error()))
			}
			if err == nil {
				if cerr := f.answers.CheckJSON(e, out); cerr != nil {
					t.Error(cerr)
				}
			}
			covered[b.Tool+" "+b.Path] = true
		}
		over, _ := setPath(f.expand(base, n), b.Path, overBound(b, n))
		raw, _ := json.Marshal(over)
		_, err := e.Decode(raw)
		var fe *argv.Errors
		if !errors.As(err, &fe) || !strings.Contains(err.Error(), fieldName(b.Path)) {
			t.Errorf("%s %s one over its bound: the decoder says %v", b.Tool, b.Path, err)
		}
	}
	if len(covered) != len(limits.Bounds) {
		t.Errorf("exercised %d of %d bounds", len(covered), len(limits.Bounds))
	}
}

// TestEveryAnswerHasItsDeclaredShape calls every modern tool and every
// legacy alias with the baseline arguments over the real services and
// checks each answer against the output schema the spec declares (the
// legacy aliases against their 0.3.x shape). Each must answer: a tool the
// fixture cannot make answer is listed in mayFail with the reason.
func TestEveryAnswerHasItsDeclaredShape(t *testing.T) {
	f := newBoundsFixture(t)
	mayFail := map[string]string{
		"get_session_diff":      "the fake provider has no diffs",
		"get_agent_diff":        "the fake provider has no diffs",
		"set_session_model":     "the fake provider refuses model changes",
		"session_set_model":     "the fake provider refuses model changes",
		"set_session_reasoning": "the fake provider refuses reasoning changes",
		"session_set_reasoning": "the fake provider refuses reasoning changes",
		"handoff_update_status": "a handoff is accepted once; update_handoff_status accepted it",
	}
	n, answered := 1000, 0
	for _, e := range catalogs.All() {
		base, ok := f.args[e.Target]
		if !ok {
			base = map[string]any{}
		}
		n++
		args := f.expand(base, n)
		if e.Legacy {
			args = legacyArgs(t, e, args)
		}
		delete(args, "cursor") // a baseline cursor is not one the runtime issued
		raw, _ := json.Marshal(args)
		in, err := e.Decode(raw)
		if err != nil {
			t.Errorf("%s: baseline arguments refused: %v", e.Name, err)
			continue
		}
		out, err := e.Call(context.Background(), f.h, in)
		_, excused := mayFail[e.Name]
		switch {
		case err != nil && !excused:
			t.Errorf("%s: %v", e.Name, clip(err.Error()))
		case err == nil && excused:
			t.Errorf("%s answers now; remove it from mayFail", e.Name)
		}
		if err != nil {
			continue
		}
		answered++
		if err := f.answers.CheckJSON(e, out); err != nil {
			t.Error(err)
		}
		if e.Paged && !cutSet(out) {
			t.Errorf("%s: a paged answer without its Cut; the budget guard could not cut it", e.Name)
		}
	}
	t.Logf("answers checked against their schema: %d of %d tools and aliases", answered, len(catalogs.All()))
}

// legacyArgs maps modern baseline arguments to an alias's names, keeping
// those it offers.
func legacyArgs(t *testing.T, e *catalogs.Entry, modern map[string]any) map[string]any {
	t.Helper()
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal([]byte(e.InputSchema), &s); err != nil {
		t.Fatal(err)
	}
	out := map[string]any{}
	for name := range s.Properties {
		if v, ok := modern[name]; ok {
			out[name] = v
		}
	}
	return out
}

func unit(b limits.Bound) string {
	if b.Items {
		return "items"
	}
	return "chars"
}

func clip(s string) string {
	if utf8.RuneCountInString(s) > 300 {
		return string([]rune(s)[:300]) + "…"
	}
	return s
}

// fieldName is how a refusal names the argument at path: the decoder's
// paths index arrays (risks[0]) where the bound's path says risks[].
func fieldName(path string) string {
	return strings.ReplaceAll(path, "[]", "[0]")
}

// atBound is a value at b's bound: b.Max characters (distinct per call, so
// keys and resources never collide) or b.Max entries.
func atBound(b limits.Bound, fill string, n int) any {
	if b.Items {
		return nil // setPath fills the array with copies of its first entry
	}
	if b.Kind == "path" {
		return pathText(b.Max, fill, n)
	}
	return text(b.Max, fill, n)
}

// pathText is a relative path of max characters whose components stay
// within a file system's name limit (255 bytes) and whose bytes, joined to
// a test directory, stay within its path limit (4096): the operating
// system's own limits are not what this test is about. 3-byte characters
// still tell characters from bytes.
func pathText(max int, fill string, n int) string {
	one := "a"
	if fill == "astral" {
		one = "漢"
	}
	var b strings.Builder
	b.WriteString(strconv.Itoa(n))
	count := utf8.RuneCountInString(b.String())
	for count < max {
		if count%50 == 0 {
			b.WriteString("/")
		} else {
			b.WriteString(one)
		}
		count++
	}
	return b.String()
}

func overBound(b limits.Bound, n int) any {
	if b.Items {
		return -1 // setPath: one entry more than the bound
	}
	return text(b.Max+1, "ascii", n)
}

// text is max characters: a prefix unique to call n, then the fill.
func text(max int, fill string, n int) string {
	prefix := strconv.Itoa(n) + "-"
	one := "a"
	if fill == "astral" {
		prefix = strings.Map(func(r rune) rune { return r - '0' + '𝟘' }, strconv.Itoa(n)) + "‐"
		one = "𝄞"
	}
	if utf8.RuneCountInString(prefix) >= max {
		return strings.Repeat(one, max)
	}
	return prefix + strings.Repeat(one, max-utf8.RuneCountInString(prefix))
}

// setPath sets the argument at path ("a", "a.b", "a[]", "a[].b") in a copy
// of args. For an array bound (value nil or -1) it fills the array with
// copies of its first entry up to the bound (or one over).
func setPath(args map[string]any, path string, value any) (map[string]any, error) {
	var b limits.Bound
	for _, x := range limits.Bounds {
		if x.Path == path {
			b = x
		}
	}
	cp := deepCopy(args).(map[string]any)
	var cur any = cp
	segs := strings.Split(path, ".")
	for i, seg := range segs {
		last := i == len(segs)-1
		name, each := strings.CutSuffix(seg, "[]")
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s is not an object", seg)
		}
		v, ok := m[name]
		if !ok {
			return nil, fmt.Errorf("no %s", name)
		}
		if !each {
			if last {
				if arr, ok := v.([]any); ok && (value == nil || value == -1) {
					m[name] = fillArray(arr, b.Max, value == -1)
				} else {
					m[name] = value
				}
				return cp, nil
			}
			cur = v
			continue
		}
		arr, ok := v.([]any)
		if !ok || len(arr) == 0 {
			return nil, fmt.Errorf("%s is not a non-empty array", name)
		}
		if last {
			arr[0] = value
			return cp, nil
		}
		cur = arr[0]
	}
	return cp, nil
}

func fillArray(arr []any, max int, over bool) []any {
	n := max
	if over {
		n++
	}
	out := make([]any, n)
	for i := range out {
		out[i] = deepCopy(arr[0])
		if s, ok := out[i].(string); ok {
			out[i] = fmt.Sprintf("%s%d", s, i) // distinct entries (IDs are deduplicated)
		}
	}
	return out
}

func deepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = deepCopy(e)
		}
		return m
	case []any:
		a := make([]any, len(x))
		for i, e := range x {
			a[i] = deepCopy(e)
		}
		return a
	}
	return v
}

func entry(t *testing.T, name string) *catalogs.Entry {
	t.Helper()
	for _, e := range catalogs.All() {
		if e.Name == name && !e.Legacy {
			return e
		}
	}
	t.Fatalf("no tool %s", name)
	return nil
}

// boundsFixture is every service a tool needs, with one record of each
// kind for the baselines to name.
type boundsFixture struct {
	h       *Handlers
	args    map[string]map[string]any
	vars    map[string]string
	answers *answercheck.Checker
	// fake and sim receive what the writes dispatch.
	fake *registrytest.Adapter
	sim  *freebuffsim.Desktop
}

// expand substitutes the fixture's records into a baseline and {{n}} with
// the call's number (idempotency keys, claim resources and participants
// must differ between calls).
func (f *boundsFixture) expand(base map[string]any, n int) map[string]any {
	raw, _ := json.Marshal(base)
	s := strings.ReplaceAll(string(raw), "{{n}}", strconv.Itoa(n))
	for k, v := range f.vars {
		q, _ := json.Marshal(v)
		s = strings.ReplaceAll(s, "{{"+k+"}}", string(q[1:len(q)-1]))
	}
	var out map[string]any
	if err := json.Unmarshal([]byte(s), &out); err != nil {
		panic(err)
	}
	return out
}

// fakeReviews is request_review's provider layer: the sessions exist, the
// diff is a fixed text and a send is accepted.
type fakeReviews struct{}

func (fakeReviews) Resolve(context.Context, string, string) error { return nil }
func (fakeReviews) Diff(context.Context, string, string) (any, error) {
	return "diff --git a/a.go b/a.go", nil
}
func (fakeReviews) Workspace(context.Context, string, string) (string, error) { return "", nil }
func (fakeReviews) Send(_ context.Context, provider, nativeID, _, _ string) (providers.Receipt, error) {
	return providers.Receipt{Provider: providers.ID(provider), NativeID: nativeID, Operation: "send", Accepted: true, Status: providers.StatusQueued}, nil
}

func newBoundsFixture(t *testing.T) *boundsFixture {
	t.Helper()
	ctx := context.Background()
	st := teststore.Open(t)
	dir := t.TempDir()

	accepted := func(nativeID, op string) (providers.Receipt, error) {
		return providers.Receipt{Provider: providers.Codex, NativeID: nativeID, Operation: op, Accepted: true, Status: providers.StatusQueued}, nil
	}
	fake := &registrytest.Adapter{Provider: providers.Codex, EndpointName: "stdio:fake",
		SendFunc: func(_ context.Context, id, _ string, _ providers.SendOptions) (providers.Receipt, error) {
			return accepted(id, "send")
		},
		CancelFunc: func(_ context.Context, id string) (providers.Receipt, error) { return accepted(id, "cancel") },
		PermissionFunc: func(_ context.Context, id, _, _ string) (providers.Receipt, error) {
			return accepted(id, "permission")
		},
		Pending: []providers.PermissionRequest{{Provider: providers.Codex, RequestID: "r1", NativeID: "t1", Method: "edit",
			Options: []providers.PermissionOption{{ID: "allow_once", Kind: "allow_once"}}}},
		// A stream that stays open without events.
		SubscribeFunc: func(ctx context.Context, _ string) (<-chan providers.NativeEvent, error) {
			ch := make(chan providers.NativeEvent)
			go func() { <-ctx.Done(); close(ch) }()
			return ch, nil
		},
		CapsFunc: func(context.Context) providers.Capabilities {
			ok := providers.Capability{Supported: true, State: providers.Available}
			no := providers.Capability{Supported: false, State: providers.Unavailable, Reason: "the fake does not"}
			return providers.Capabilities{Provider: providers.Codex, AdapterVersion: "fake", Authorization: "unknown",
				Discovery: ok, Sessions: ok, SendMessage: ok, Steer: no, Cancel: ok, Events: ok, Diff: no, Permissions: ok, Model: no, Reasoning: no}
		},
	}
	fake.SetSessions([]providers.Session{fake.Session("t1", "one"), fake.Session("t2", "two")}, nil)
	sim, err := freebuffsim.NewDesktop(freebuffsim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sim.Close)
	project := t.TempDir()
	if err := os.WriteFile(filepath.Join(project, "notes.txt"), []byte("notes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	thread := sim.AddThread(project, "Bounds thread")
	thread2 := sim.AddThread(project, "Second thread")
	fbEnv := map[string]string{freebuff.EnvOrchestratorURL: sim.URL(), freebuff.EnvLaunchID: sim.LaunchID()}
	fb := freebuff.New(freebuff.Config{LookupEnv: func(k string) (string, bool) { v, ok := fbEnv[k]; return v, ok },
		ProcDir: "-", HomeDir: t.TempDir(), WorkDir: t.TempDir()})
	t.Cleanup(func() { fb.Close() })
	// The Freebuff adapter is in the registry: the Freebuff writes go
	// through the delivery ledger like every other send.
	reg, err := registry.New(st, []providers.Adapter{fake, freebuff.NewAdapter(fb, nil)}, registry.Options{})
	if err != nil {
		t.Fatal(err)
	}
	del := delivery.New(st, reg, delivery.Options{})
	t.Cleanup(func() { del.Close() })
	hub := events.NewHub(events.NewLog(st, events.LogOptions{}), events.HubOptions{Open: reg.Subscribe, Liveness: reg.Liveness})
	env := map[string]string{workflow.EnvAllowVerification: "1", workflow.EnvHandoffBudget: "1000000000"}
	wf := workflow.New(st, workflow.Options{LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }, Reviews: fakeReviews{}})
	cl := claims.New(st)
	conv := conversations.New(st, del)

	h := New(Deps{Store: st, Workflow: wf, Claims: cl, Conversations: conv, Freebuff: fb, Registry: reg, Delivery: del, Events: hub,
		Runtime: RuntimeInfo{Version: "test", Profile: "full"}})

	work, err := wf.CreateWork(ctx, workflow.CreateWorkInput{Objective: "o", AcceptanceCriteria: []string{"c"}})
	if err != nil {
		t.Fatal(err)
	}
	review, err := wf.RecordReview(ctx, workflow.RecordReviewInput{WorkID: work.ID, ReviewerSessionID: "codex:t2", Verdict: "approve"})
	if err != nil {
		t.Fatal(err)
	}
	handoff, err := wf.CreateHandoff(ctx, workflow.CreateHandoffInput{WorkID: work.ID, SourceSession: "codex:t1", Objective: "o"})
	if err != nil {
		t.Fatal(err)
	}
	claim, err := cl.Acquire(ctx, claims.AcquireInput{WorkID: work.ID, SessionID: "codex:t1", Resource: "fixture.go"})
	if err != nil {
		t.Fatal(err)
	}
	c, err := conv.Create(ctx, "fixture")
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"t1", "t2"} {
		if _, err := conv.Join(ctx, conversations.JoinInput{ConversationID: c.ID, Provider: "codex", NativeID: id}); err != nil {
			t.Fatal(err)
		}
	}
	sent, err := conv.Send(ctx, conversations.SendInput{ConversationID: c.ID, Sender: "codex:t1", Recipient: "codex:t2", Text: "fixture", IdempotencyKey: "fixture"})
	if err != nil {
		t.Fatal(err)
	}

	f := &boundsFixture{h: h, answers: answercheck.New(), fake: fake, sim: sim, vars: map[string]string{
		"work": work.ID, "evidence": review.EvidenceID, "message": sent.Message.ID, "handoff": handoff.ID, "claim": claim.ID, "conv": c.ID,
		"dir": dir, "project": project, "thread": thread, "thread2": thread2,
	}, args: map[string]map[string]any{}}
	model := `{"providerID":"p","modelID":"m","variant":"v"}`
	for tool, js := range map[string]string{
		"list_agent_sessions":      `{"provider":"codex","cursor":"c"}`,
		"get_session_diff":         `{"provider":"codex","nativeId":"t1","messageId":"m"}`,
		"read_session_events":      `{"provider":"codex","nativeId":"t1","cursor":"c","timeoutMs":0}`,
		"send_session_message":     `{"provider":"codex","nativeId":"t1","text":"hi","model":` + model + `,"agent":"a","reasoning":"low","idempotencyKey":"send-{{n}}"}`,
		"cancel_session":           `{"provider":"codex","nativeId":"t1","idempotencyKey":"cancel-{{n}}"}`,
		"create_session":           `{"provider":"codex","cwd":"{{dir}}","title":"t"}`,
		"resume_session":           `{"provider":"codex","nativeId":"t1"}`,
		"list_permission_requests": `{"session":"codex:t1","cursor":"c"}`,
		"respond_to_permission":    `{"provider":"codex","nativeId":"t1","requestId":"r1","decision":"allow_once","idempotencyKey":"perm-{{n}}"}`,
		"set_session_model":        `{"provider":"codex","nativeId":"t1","model":` + model + `}`,
		"set_session_reasoning":    `{"provider":"codex","nativeId":"t1","effort":"low"}`,
		"get_work_graph":           `{"workId":"{{work}}","session":"codex:t1","cursor":"c"}`,
		"list_work_items":          `{"session":"codex:t1","updatedSince":"2020-01-01T00:00:00Z","cursor":"c"}`,
		"get_work_item":            `{"workId":"{{work}}","cursor":"c"}`,
		"create_work_item":         `{"objective":"o","acceptanceCriteria":["c"],"sourceSession":"codex:t1","risks":["r"],"unresolvedQuestions":["q"],"dependsOn":["{{work}}"]}`,
		"verify_work_item":         `{"workId":"{{work}}","cwd":"{{dir}}","commands":[{"executable":"true","args":["a"],"cwd":".","label":"l"}]}`,
		"list_evidence":            `{"workId":"{{work}}","session":"codex:t1","cursor":"c"}`,
		"get_evidence":             `{"evidenceId":"{{evidence}}"}`,
		"get_handoff_packet":       `{"handoffId":"{{handoff}}"}`,
		"create_handoff": `{"workId":"{{work}}","sourceSession":"codex:t1","destinationSession":"codex:t2","objective":"o","acceptanceCriteria":["c"],
			"evidenceIds":["{{evidence}}"],"changedFiles":["a.go"],"risks":["r"],"unresolvedQuestions":["q"],"authorityBoundaries":["b"],
			"latestValidation":{"label":"l","command":"c","outcome":"passed","observedAt":"2020-01-01T00:00:00Z"},
			"assumptions":["a"],"rollbackNotes":["n"],"nextAction":"x","repositoryRevision":"abc"}`,
		"update_handoff_status": `{"handoffId":"{{handoff}}","status":"accepted"}`,
		"record_review": `{"workId":"{{work}}","subjectEvidenceIds":["{{evidence}}"],"reviewerSessionId":"codex:t2",
			"independence":{"differentSession":true,"differentProvider":false,"freshContext":true,"writeAccess":false},
			"findings":[{"id":"f","severity":"minor","title":"t","detail":"d","file":"a.go","line":1}],"verdict":"approve"}`,
		"request_review":            `{"workId":"{{work}}","subjectProvider":"codex","subjectNativeId":"t1","reviewerProvider":"codex","reviewerNativeId":"t2","objective":"o","acceptanceCriteria":["c"]}`,
		"list_claims":               `{"workId":"{{work}}","session":"codex:t1","activeOnly":true,"cursor":"c"}`,
		"acquire_claim":             `{"workId":"{{work}}","sessionId":"codex:t1","resource":"r{{n}}/a.go"}`,
		"release_claim":             `{"claimId":"{{claim}}","sessionId":"codex:t1"}`,
		"list_conversations":        `{"session":"codex:t1","updatedSince":"2020-01-01T00:00:00Z","cursor":"c"}`,
		"read_conversation":         `{"conversationId":"{{conv}}","cursor":"c"}`,
		"create_conversation":       `{"title":"t","conversationId":"{{conv}}","budget":{"messages":9000}}`,
		"join_conversation":         `{"conversationId":"{{conv}}","provider":"codex","nativeId":"j{{n}}","workspaceId":"{{dir}}"}`,
		"send_conversation_message": `{"conversationId":"{{conv}}","sender":"codex:t1","recipient":"codex:t2","text":"hi","replyTo":"{{message}}","idempotencyKey":"conv-{{n}}","model":` + model + `,"reasoning":"low"}`,
		"reconcile_conversation":    `{"conversationId":"{{conv}}","observedReceipts":[{"idempotencyKey":"k","receipt":{"provider":"codex","nativeId":"t1","operation":"send","accepted":true,"status":"queued"}}]}`,
		"list_projects":             `{"cursor":"c"}`,
		"list_threads":              `{"projectId":"{{project}}","cursor":"c"}`,
		"get_thread":                `{"threadId":"{{thread}}"}`,
		"get_thread_messages":       `{"threadId":"{{thread}}","cursor":"c"}`,
		"get_active_work":           `{"threadId":"{{thread}}"}`,
		"get_thread_progress":       `{"threadId":"{{thread}}","timeoutMs":0}`,
		"list_active_threads":       `{"cursor":"c"}`,
		"list_project_files":        `{"projectId":"{{project}}","relative":".","cursor":"c"}`,
		"read_project_file":         `{"projectId":"{{project}}","path":"notes.txt"}`,
		"send_thread_message":       `{"threadId":"{{thread}}","text":"hi","idempotencyKey":"thread-{{n}}"}`,
		"stop_thread":               `{"threadId":"{{thread}}","idempotencyKey":"stop-{{n}}"}`,
		"resume_thread":             `{"threadId":"{{thread}}","idempotencyKey":"resume-{{n}}"}`,
		"set_thread_model":          `{"threadId":"{{thread}}","model":"openai/gpt-5.1","harnessId":"codebuff","idempotencyKey":"model-{{n}}"}`,
		"set_thread_reasoning":      `{"threadId":"{{thread}}","effort":"low","idempotencyKey":"effort-{{n}}"}`,
	} {
		var m map[string]any
		if err := json.Unmarshal([]byte(js), &m); err != nil {
			t.Fatalf("%s baseline: %v", tool, err)
		}
		f.args[tool] = m
	}
	// The string branch of a string-or-object argument is set in place of
	// the object (setPath replaces the value at the path).
	return f
}
