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

// TestResumeRefusesAFreshSession: a resume answered with another native
// session is refused, naming both and recording nothing, unless the
// caller allows a fresh one; then the answer says it is fresh. A resume of
// the requested session says so.
func TestResumeRefusesAFreshSession(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name       string
		lost       bool
		allowFresh bool
		wantID     string
		wantFresh  bool
		wantErr    string
	}{
		{name: "same session", wantID: "s1"},
		{name: "same session, fresh allowed", allowFresh: true, wantID: "s1"},
		{name: "fresh refused", lost: true, wantErr: "the provider answered with another session, s2"},
		{name: "fresh allowed", lost: true, allowFresh: true, wantID: "s2", wantFresh: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := teststore.Open(t)
			cx := &registrytest.Adapter{Provider: providers.Codex}
			cx.SetSessions([]providers.Session{cx.Session("s1", "one")}, nil)
			var a providers.Adapter = cx
			if tt.lost {
				a = freshOnResume{Adapter: cx, fresh: "s2"}
			}
			r, err := New(st, []providers.Adapter{a}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			s, fresh, err := r.ResumeSession(ctx, "codex", "s1", tt.allowFresh)
			if tt.wantErr != "" {
				var fe *FreshSessionError
				if !errors.As(err, &fe) || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), "allowFresh") {
					t.Fatalf("ResumeSession = %+v, %v; want a FreshSessionError with %q", s, err, tt.wantErr)
				}
				if n, err := st.Client().ProviderSession.Query().Where(providersession.NativeID("s2")).Count(ctx); err != nil || n != 0 {
					t.Fatalf("a refused resume recorded the fresh session (%d, %v)", n, err)
				}
				return
			}
			if err != nil || s.NativeID != tt.wantID || fresh != tt.wantFresh {
				t.Fatalf("ResumeSession = %s fresh %v, %v; want %s fresh %v", s.NativeID, fresh, err, tt.wantID, tt.wantFresh)
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
	s, _, err := r.ResumeSession(ctx, "codex", "s1", false)
	if err != nil || s.NativeID != "s1" || h.known["s1"] != "/work/a" {
		t.Fatalf("resume after a restart = %+v, %v (known %v)", s, err, h.known)
	}
}
