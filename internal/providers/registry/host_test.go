package registry

import (
	"context"
	"errors"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/agent-interop/runtime/internal/providers"
	"github.com/agent-interop/runtime/internal/providers/registry/registrytest"
	"github.com/agent-interop/runtime/internal/store"
	"github.com/agent-interop/runtime/internal/testutil/pgtest"
	"github.com/agent-interop/runtime/internal/testutil/teststore"
)

// TestMain stops the PostgreSQL cluster the dialect tests started.
func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// machine is one host's runtime on a shared store: its own provider
// adapter (its own sessions) and a registry that knows its host name.
type machine struct {
	codex *registrytest.Adapter
	reg   *Registry
}

func newMachine(t *testing.T, location, host string, natives ...string) machine {
	t.Helper()
	st, err := store.Open(context.Background(), location)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	cx := &registrytest.Adapter{Provider: providers.Codex, EndpointName: "stdio:codex@" + host}
	var ss []providers.Session
	for _, n := range natives {
		ss = append(ss, cx.Session(n, "on "+host))
	}
	cx.SetSessions(ss, nil)
	reg, err := New(st, []providers.Adapter{cx}, Options{Host: host})
	if err != nil {
		t.Fatal(err)
	}
	return machine{codex: cx, reg: reg}
}

// TestSessionsBelongToTheirHost: on one store, each machine lists its own
// sessions and the other machine's (with their host), drives its own, and
// is refused, naming the host, on the other's; nothing reaches the other
// machine's adapter through this one.
func TestSessionsBelongToTheirHost(t *testing.T) {
	pgtest.EachDialect(t, func(t *testing.T, location string) {
		ctx := context.Background()
		alpha := newMachine(t, location, "alpha", "a1")
		beta := newMachine(t, location, "beta", "b1")
		if _, err := beta.reg.ListSessions(ctx, ""); err != nil { // beta records b1
			t.Fatal(err)
		}
		list, err := alpha.reg.ListSessions(ctx, "codex")
		if err != nil {
			t.Fatal(err)
		}
		hosts := map[string]string{}
		for _, s := range list.Sessions {
			hosts[s.NativeID] = s.Host
		}
		if len(list.Sessions) != 2 || hosts["a1"] != "alpha" || hosts["b1"] != "beta" {
			t.Fatalf("alpha lists %+v, want a1 on alpha and b1 on beta", list.Sessions)
		}
		if _, err := alpha.reg.Resolve(ctx, "codex", "a1"); err != nil {
			t.Fatalf("alpha resolving its own session: %v", err)
		}
		_, err = alpha.reg.Resolve(ctx, "codex", "b1")
		var other *OtherHostError
		if !errors.As(err, &other) || other.Host != "beta" || other.Local != "alpha" ||
			!strings.Contains(err.Error(), "runs on host beta") || !strings.Contains(err.Error(), "nothing was sent") {
			t.Fatalf("alpha resolving beta's session: %v", err)
		}
		if _, err := alpha.reg.GetSession(ctx, "codex", "b1"); !errors.As(err, &other) {
			t.Fatalf("GetSession of another host's session: %v", err)
		}
		if n := alpha.codex.CallCount("get"); n != 0 {
			t.Fatalf("alpha asked its own codex about beta's session %d times", n)
		}
		if rt, err := beta.reg.Resolve(ctx, "codex", "b1"); err != nil || rt.Endpoint != "stdio:codex@beta" {
			t.Fatalf("beta resolving its own session = %+v, %v", rt, err)
		}
	})
}

// TestLocalStoreSessionsCarryNoHost: without a host (a local store) the
// listing is what it always was.
func TestLocalStoreSessionsCarryNoHost(t *testing.T) {
	st := teststore.Open(t)
	cx := &registrytest.Adapter{Provider: providers.Codex}
	cx.SetSessions([]providers.Session{cx.Session("x", "x")}, nil)
	r, err := New(st, []providers.Adapter{cx}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	list, err := r.ListSessions(context.Background(), "")
	if err != nil || len(list.Sessions) != 1 || list.Sessions[0].Host != "" {
		t.Fatalf("list = %+v, %v", list, err)
	}
}

// TestOtherHostsDirectoriesAreNotWorkspaces: on a team store, a directory
// another machine's session works in is no approved root on this machine.
func TestOtherHostsDirectoriesAreNotWorkspaces(t *testing.T) {
	ctx := context.Background()
	location := pgtest.Database(t)
	alpha := newMachine(t, location, "alpha")
	beta := newMachine(t, location, "beta")
	s := beta.codex.Session("b1", "on beta")
	s.CWD = "/srv/beta-only"
	beta.codex.SetSessions([]providers.Session{s}, nil)
	if _, err := beta.reg.ListSessions(ctx, ""); err != nil {
		t.Fatal(err)
	}
	if ok, err := beta.reg.IsWorkspace(ctx, "/srv/beta-only"); err != nil || !ok {
		t.Fatalf("beta's own session directory: %v, %v", ok, err)
	}
	if ok, err := alpha.reg.IsWorkspace(ctx, "/srv/beta-only"); err != nil || ok {
		t.Fatalf("alpha treats beta's session directory as a workspace: %v, %v", ok, err)
	}
}

// TestSessionPagesIncludeOtherHosts: the paged listing continues from this
// host's sessions into the other hosts' recorded ones, each once, also when
// the local sessions fill a page exactly.
func TestSessionPagesIncludeOtherHosts(t *testing.T) {
	pgtest.EachDialect(t, func(t *testing.T, location string) {
		ctx := context.Background()
		alpha := newMachine(t, location, "alpha", "a1", "a2")
		beta := newMachine(t, location, "beta", "b1", "b2", "b3")
		if _, err := beta.reg.ListSessions(ctx, ""); err != nil { // beta records its sessions
			t.Fatal(err)
		}
		for _, limit := range []int64{1, 2, 3, 10} {
			var got []string
			cursor := ""
			for pages := 0; pages < 20; pages++ {
				p, err := alpha.reg.ListSessionPage(ctx, SessionQuery{Limit: limit, Cursor: cursor})
				if err != nil {
					t.Fatal(err)
				}
				for _, s := range p.Sessions {
					got = append(got, s.NativeID+"@"+s.Host)
				}
				if p.NextCursor == "" {
					break
				}
				cursor = p.NextCursor
			}
			sort.Strings(got)
			if strings.Join(got, ",") != "a1@alpha,a2@alpha,b1@beta,b2@beta,b3@beta" {
				t.Fatalf("limit %d: pages list %v", limit, got)
			}
		}
	})
}
