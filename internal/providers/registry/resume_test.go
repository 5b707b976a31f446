package registry

import (
	"context"
	"errors"
	"strings"
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
