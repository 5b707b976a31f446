package registry

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/agent-interop/runtime/ent/providersession"
	"github.com/agent-interop/runtime/internal/providers"
	"github.com/agent-interop/runtime/internal/providers/registry/registrytest"
	"github.com/agent-interop/runtime/internal/testutil/teststore"
)

// freshOnResume is a provider that lost its sessions: resuming any
// session answers a new one (as a Codex app-server whose thread/resume
// answers another thread id, or an OpenCode server that gives another id).
type freshOnResume struct {
	*registrytest.Adapter
	fresh string
}

func (f freshOnResume) ResumeSession(ctx context.Context, nativeID string) (providers.Session, error) {
	return f.Session(f.fresh, "fresh"), nil
}

// lostOnResume is a provider that answers a resume with
// providers.ErrSessionLost (an ACP agent's resource_not_found, a Codex
// "no rollout found", an OpenCode 404), with its reason.
type lostOnResume struct {
	*registrytest.Adapter
	reason string
}

func (l lostOnResume) ResumeSession(context.Context, string) (providers.Session, error) {
	return providers.Session{}, &providers.RejectedError{Reason: l.reason, Err: providers.SessionLost(l.reason)}
}

// TestResumeRefusesAFreshSession: a resume answered with another native
// session, or with "the agent no longer has it", is refused naming the
// session, the reason and allowFresh, recording nothing, unless the caller
// allows a fresh one; then the answer says it is fresh and why, and a
// lost session's fresh one is created in its recorded workspace. A resume
// of the requested session says so.
func TestResumeRefusesAFreshSession(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name       string
		answer     string // "", "fresh" (another id) or "lost"
		cwd        string // the recorded workspace of s1
		allowFresh bool
		wantID     string
		wantFresh  bool
		wantCWD    string
		wantErr    []string // in the refusal
		wantNote   []string // in the note of a fresh session
	}{
		{name: "same session", wantID: "s1"},
		{name: "same session, fresh allowed", allowFresh: true, wantID: "s1"},
		{name: "fresh refused", answer: "fresh", wantErr: []string{"the provider answered with another session, s2", "allowFresh"}},
		{name: "fresh allowed", answer: "fresh", allowFresh: true, wantID: "s2", wantFresh: true,
			wantNote: []string{"another session than s1", "history is not in it"}},
		{name: "lost refused", answer: "lost", cwd: "/work/a",
			wantErr: []string{"the agent no longer has session s1 (Resource not found: session:s1)", "nothing was recorded",
				"pass allowFresh: true to open a fresh session in /work/a"}},
		{name: "lost, no workspace recorded, refused", answer: "lost",
			wantErr: []string{"no longer has session s1", "the agent's default workspace"}},
		{name: "lost, fresh allowed", answer: "lost", cwd: "/work/a", allowFresh: true, wantID: "new-2", wantFresh: true, wantCWD: "/work/a",
			wantNote: []string{"no longer has session s1 (Resource not found: session:s1)", "fresh session, new-2, opened in /work/a", "history is not in it"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := teststore.Open(t)
			cx := &registrytest.Adapter{Provider: providers.Codex}
			s1 := cx.Session("s1", "one")
			s1.CWD = tt.cwd
			cx.SetSessions([]providers.Session{s1}, nil)
			var a providers.Adapter = cx
			switch tt.answer {
			case "fresh":
				a = freshOnResume{Adapter: cx, fresh: "s2"}
			case "lost":
				a = lostOnResume{Adapter: cx, reason: "Resource not found: session:s1"}
			}
			r, err := New(st, []providers.Adapter{a}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := r.ListSessions(ctx, "codex"); err != nil { // records s1 with its workspace
				t.Fatal(err)
			}
			res, err := r.ResumeSession(ctx, "codex", "s1", tt.allowFresh)
			if len(tt.wantErr) > 0 {
				var fe *FreshSessionError
				if !errors.As(err, &fe) || fe.Lost != (tt.answer == "lost") {
					t.Fatalf("ResumeSession = %+v, %v; want a FreshSessionError (lost %v)", res, err, tt.answer == "lost")
				}
				for _, w := range tt.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Fatalf("refusal %q does not say %q", err, w)
					}
				}
				if n, err := st.Client().ProviderSession.Query().Where(providersession.NativeIDNEQ("s1")).Count(ctx); err != nil || n != 0 {
					t.Fatalf("a refused resume recorded a session (%d, %v)", n, err)
				}
				if n := cx.CallCount("create"); n != 0 {
					t.Fatalf("a refused resume created %d sessions", n)
				}
				return
			}
			if err != nil || res.Session.NativeID != tt.wantID || res.Fresh != tt.wantFresh || res.Lost != (tt.answer == "lost") {
				t.Fatalf("ResumeSession = %+v, %v; want %s fresh %v", res, err, tt.wantID, tt.wantFresh)
			}
			if tt.wantCWD != "" && res.Session.CWD != tt.wantCWD {
				t.Fatalf("fresh session in %q, want %q", res.Session.CWD, tt.wantCWD)
			}
			for _, w := range tt.wantNote {
				if !strings.Contains(res.Note, w) {
					t.Fatalf("note %q does not say %q", res.Note, w)
				}
			}
			if !tt.wantFresh && res.Note != "" {
				t.Fatalf("the requested session came with a note: %q", res.Note)
			}
			if tt.wantFresh {
				n, err := st.Client().ProviderSession.Query().Where(providersession.NativeID(tt.wantID)).Count(ctx)
				if err != nil || n != 1 {
					t.Fatalf("the accepted fresh session was not recorded (%d, %v)", n, err)
				}
			}
		})
	}
}

// hinted is a fake whose provider lists sessions per directory: it takes
// the recorded workspaces (providers.Roles.Workspaces) and lists only the
// sessions of a directory it was told of.
type hinted struct {
	*registrytest.Adapter
	mu    sync.Mutex
	known map[string]string
	all   []providers.Session
}

func (h *hinted) Roles() providers.Roles {
	r := h.Adapter.Roles()
	r.Workspaces = h
	return r
}

func (h *hinted) KnowWorkspace(nativeID, cwd string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.known[nativeID] = cwd
}

func (h *hinted) ListSessions(context.Context) ([]providers.Session, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	dirs := map[string]bool{}
	for _, d := range h.known {
		dirs[d] = true
	}
	var out []providers.Session
	for _, s := range h.all {
		if dirs[s.CWD] {
			out = append(out, s)
		}
	}
	return out, nil
}

func (h *hinted) ResumeSession(_ context.Context, nativeID string) (providers.Session, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, s := range h.all {
		if s.NativeID == nativeID && h.known[nativeID] == s.CWD {
			return s, nil
		}
	}
	return providers.Session{}, fmt.Errorf("the workspace of %s is unknown", nativeID)
}

// TestRecordedWorkspacesReachTheAdapter: a runtime that restarted gives
// an adapter whose provider lists per directory the workspaces it
// recorded, before listing and before an operation on a session, so the
// session of another workspace is listed and reopened.
func TestRecordedWorkspacesReachTheAdapter(t *testing.T) {
	ctx := context.Background()
	st := teststore.Open(t)
	one := &registrytest.Adapter{Provider: providers.Codex}
	s1 := one.Session("s1", "one")
	s1.CWD = "/work/a"
	one.SetSessions([]providers.Session{s1}, nil)
	r, err := New(st, []providers.Adapter{one}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.ListSessions(ctx, "codex"); err != nil {
		t.Fatal(err)
	}

	// The restarted runtime's adapter knows nothing of /work/a.
	fresh := func() (*Registry, *hinted) {
		h := &hinted{Adapter: &registrytest.Adapter{Provider: providers.Codex}, known: map[string]string{}, all: []providers.Session{s1}}
		r, err := New(st, []providers.Adapter{h}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		return r, h
	}
	r, _ = fresh()
	list, err := r.ListSessions(ctx, "codex")
	if err != nil || len(list.Sessions) != 1 || list.Sessions[0].NativeID != "s1" {
		t.Fatalf("list after a restart = %+v, %v; want s1 of /work/a", list, err)
	}
	r, h := fresh()
	res, err := r.ResumeSession(ctx, "codex", "s1", false)
	if err != nil || res.Session.NativeID != "s1" || h.known["s1"] != "/work/a" {
		t.Fatalf("resume after a restart = %+v, %v (known %v)", res, err, h.known)
	}
}
