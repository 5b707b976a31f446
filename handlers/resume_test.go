package handlers

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/agent-interop/runtime/catalogs"
	"github.com/agent-interop/runtime/internal/providers"
	"github.com/agent-interop/runtime/internal/providers/registry"
	"github.com/agent-interop/runtime/internal/providers/registry/registrytest"
	"github.com/agent-interop/runtime/internal/testutil/answercheck"
	"github.com/agent-interop/runtime/internal/testutil/teststore"
)

// lostSessions is a provider that no longer has the sessions named in
// lost: resuming one answers providers.ErrSessionLost with its reason.
type lostSessions struct {
	*registrytest.Adapter
	lost map[string]bool
}

func (l lostSessions) ResumeSession(ctx context.Context, nativeID string) (providers.Session, error) {
	if l.lost[nativeID] {
		reason := "Resource not found: session:" + nativeID
		return providers.Session{}, &providers.RejectedError{Reason: reason, Err: providers.SessionLost(reason)}
	}
	return l.Adapter.ResumeSession(ctx, nativeID)
}

// TestResumeSessionSaysWhichHappened: resume_session answers resumed
// requested for a session the agent has; for one it lost, a tool error
// naming the session, the agent's reason and allowFresh, or with
// allowFresh a fresh session in the recorded workspace answered as
// resumed fresh with a note saying what happened. Every answer keeps the
// schema.
func TestResumeSessionSaysWhichHappened(t *testing.T) {
	ctx := context.Background()
	entry, err := answercheck.Entry("full", "resume_session")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name        string
		args        string
		wantErr     []string
		wantResumed string
		wantNote    []string
		wantCWD     string
	}{
		{name: "the agent has it", args: `{"provider":"codex","nativeId":"kept"}`, wantResumed: "requested"},
		{name: "the agent has it, fresh allowed", args: `{"provider":"codex","nativeId":"kept","allowFresh":true}`, wantResumed: "requested"},
		{name: "lost", args: `{"provider":"codex","nativeId":"gone"}`,
			wantErr: []string{"no longer has session gone (Resource not found: session:gone)", "allowFresh: true", "/work/gone"}},
		{name: "lost, fresh allowed", args: `{"provider":"codex","nativeId":"gone","allowFresh":true}`, wantResumed: "fresh", wantCWD: "/work/gone",
			wantNote: []string{"no longer has session gone", "opened in /work/gone", "history is not in it"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := teststore.Open(t)
			f := &registrytest.Adapter{Provider: providers.Codex}
			kept, gone := f.Session("kept", ""), f.Session("gone", "")
			kept.CWD, gone.CWD = "/work/kept", "/work/gone"
			f.SetSessions([]providers.Session{kept, gone}, nil)
			reg, err := registry.New(st, []providers.Adapter{lostSessions{Adapter: f, lost: map[string]bool{"gone": true}}}, registry.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := reg.ListSessions(ctx, "codex"); err != nil {
				t.Fatal(err)
			}
			in, err := catalogs.DecodeResumeSession(json.RawMessage(tt.args))
			if err != nil {
				t.Fatal(err)
			}
			out, err := SessionTools{Registry: reg}.ResumeSession(ctx, in)
			if len(tt.wantErr) > 0 {
				for _, w := range tt.wantErr {
					if err == nil || !strings.Contains(err.Error(), w) {
						t.Fatalf("resume_session %s = %+v, %v; want an error saying %q", tt.args, out, err, w)
					}
				}
				if n := f.CallCount("create"); n != 0 {
					t.Fatalf("a refused resume created %d sessions", n)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := answercheck.New().CheckJSON(entry, out); err != nil {
				t.Fatalf("answer breaks its schema: %v\n%s", err, mustJSON(t, out))
			}
			if out.Resumed == nil || *out.Resumed != tt.wantResumed {
				t.Fatalf("resumed = %v, want %s: %s", out.Resumed, tt.wantResumed, mustJSON(t, out))
			}
			note := ""
			if out.ResumeNote != nil {
				note = *out.ResumeNote
			}
			if len(tt.wantNote) == 0 && note != "" {
				t.Fatalf("a requested session came with a note: %q", note)
			}
			for _, w := range tt.wantNote {
				if !strings.Contains(note, w) {
					t.Fatalf("note %q does not say %q", note, w)
				}
			}
			if tt.wantCWD != "" && (out.CWD == nil || *out.CWD != tt.wantCWD || out.NativeID == "gone") {
				t.Fatalf("fresh session %s in %v, want a new session in %s", out.NativeID, out.CWD, tt.wantCWD)
			}
		})
	}
}
