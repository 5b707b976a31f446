package codex_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/quartz"

	"github.com/agent-interop/runtime/internal/delivery"
	"github.com/agent-interop/runtime/internal/events"
	"github.com/agent-interop/runtime/internal/providers"
	"github.com/agent-interop/runtime/internal/providers/codex"
	"github.com/agent-interop/runtime/internal/providers/registry"
	"github.com/agent-interop/runtime/internal/store"
	"github.com/agent-interop/runtime/internal/testutil/fakemodel"
	"github.com/agent-interop/runtime/internal/testutil/realpeers"
	"github.com/agent-interop/runtime/internal/testutil/wait"
)

// stack is the runtime's provider side wired as the server wires it: store,
// host relay, codex adapter, registry, delivery log and events hub.
type stack struct {
	st      *store.Store
	host    *registry.Host
	codex   *codex.Adapter
	reg     *registry.Registry
	del     *delivery.Service
	hub     *events.Hub
	project string
}

type stackConfig struct {
	dbPath  string
	program string
	env     []string
	dir     string
	mutate  func(*codex.Config)
	clock   quartz.Clock // nil: the wall clock
}

func buildStack(cfg stackConfig) (*stack, error) {
	st, err := store.Open(context.Background(), cfg.dbPath)
	if err != nil {
		return nil, err
	}
	host := registry.NewHost()
	ccfg := codex.Config{
		Program:   cfg.program,
		ExtraArgs: []string{"--disable", "plugins"},
		Env:       cfg.env,
		Dir:       cfg.dir,
		Host:      host,
		Clock:     cfg.clock,
	}
	if cfg.mutate != nil {
		cfg.mutate(&ccfg)
	}
	cx := codex.New(ccfg)
	reg, err := registry.New(st, []providers.Adapter{cx}, registry.Options{Clock: cfg.clock})
	if err != nil {
		return nil, err
	}
	hub := events.NewHub(events.NewLog(st, events.LogOptions{Clock: cfg.clock}), events.HubOptions{Open: reg.Subscribe, Reports: host})
	del := delivery.New(st, reg, delivery.Options{Clock: cfg.clock, Reports: host})
	return &stack{st: st, host: host, codex: cx, reg: reg, del: del, hub: hub, project: cfg.dir}, nil
}

func (s *stack) Close() {
	s.hub.Close()
	s.reg.Close()
	s.del.Close()
	s.st.Close()
}

// realStack starts the real codex app-server against fm. configEdit may
// rewrite the generated config.toml.
func realStack(t *testing.T, fm *fakemodel.Server, configEdit func(string) string, mutate func(*codex.Config)) (*stack, *realpeers.Env) {
	t.Helper()
	program := realpeers.Require(t, realpeers.Codex)
	env := realpeers.CodexEnv(t, fm.BaseURL())
	if configEdit != nil {
		path := filepath.Join(env.Get("CODEX_HOME"), "config.toml")
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(configEdit(string(b))), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	project := filepath.Join(env.Root(), "project")
	if err := os.MkdirAll(project, 0o755); err != nil {
		t.Fatal(err)
	}
	s, err := buildStack(stackConfig{
		dbPath:  filepath.Join(env.Root(), "interop.db"),
		program: program,
		env:     env.Environ(),
		dir:     project,
		mutate:  mutate,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s, env
}

func ctxFor(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// waitEvent reads the session's events (through the shared subscription)
// until one matches, returning it and the cursor after it.
func waitEvent(t *testing.T, s *stack, nativeID string, after int64, match func(events.Event) bool) (events.Event, int64) {
	t.Helper()
	ctx := ctxFor(t, wait.Process)
	for {
		p, err := s.hub.Read(ctx, events.ReadRequest{Provider: providers.Codex, NativeID: nativeID, AfterSequence: after, Limit: 100, Timeout: 5 * time.Second})
		if err != nil {
			t.Fatalf("read events: %v", err)
		}
		for _, e := range p.Events {
			if match(e) {
				return e, e.Sequence
			}
		}
		after = p.Next
	}
}

func ofType(typ string) func(events.Event) bool {
	return func(e events.Event) bool { return e.Type == typ }
}

// waitOp waits until the operation leaves queued.
func waitOp(t *testing.T, s *stack, id string) delivery.Operation {
	t.Helper()
	var op delivery.Operation
	// Past the deadline the queued operation is returned for the caller's
	// own check to name.
	wait.Until(wait.Process, func() bool {
		if err := s.del.Sync(context.Background()); err != nil {
			t.Fatal(err)
		}
		var err error
		if op, err = s.del.Get(context.Background(), id); err != nil {
			t.Fatal(err)
		}
		return op.Status != providers.StatusQueued
	})
	return op
}

func turnStatus(e events.Event) string {
	var p struct {
		Turn struct {
			Status string `json:"status"`
		} `json:"turn"`
	}
	_ = json.Unmarshal(e.Data, &p)
	return p.Turn.Status
}

func isDeliveryUnknown(err error) bool {
	var du *delivery.DeliveryUnknownError
	return errors.As(err, &du)
}

func contains(s string, subs ...string) bool {
	for _, x := range subs {
		if !strings.Contains(s, x) {
			return false
		}
	}
	return true
}
