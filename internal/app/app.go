// Package app assembles the runtime from its parts: the store, the
// coordination services, the provider layer and the MCP handlers. The
// command line (serve, serve-http, work, providers, sessions) builds one
// App and closes it. It only wires, in dependency order; what the parts do
// is in their packages.
package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/agent-interop/runtime/handlers"
	"github.com/agent-interop/runtime/internal/claims"
	"github.com/agent-interop/runtime/internal/conversations"
	"github.com/agent-interop/runtime/internal/delivery"
	"github.com/agent-interop/runtime/internal/events"
	"github.com/agent-interop/runtime/internal/providers/adapters"
	"github.com/agent-interop/runtime/internal/providers/freebuff"
	"github.com/agent-interop/runtime/internal/providers/registry"
	"github.com/agent-interop/runtime/internal/security"
	"github.com/agent-interop/runtime/internal/store"
	"github.com/agent-interop/runtime/internal/workflow"
)

// Env looks up an environment variable.
type Env func(string) (string, bool)

// Config chooses what an App opens.
type Config struct {
	Env    Env
	Logger *slog.Logger
	// Runtime describes the server for get_runtime_status.
	Runtime handlers.RuntimeInfo
	// ExistingStore refuses a missing SQLite store (an error naming the
	// path) instead of creating it: set by the commands that only read.
	ExistingStore bool
}

// App is an assembled runtime.
type App struct {
	Store         *store.Store
	Workflow      *workflow.Service
	Claims        *claims.Service
	Conversations *conversations.Service
	Freebuff      *freebuff.Service
	Roots         *security.Roots
	Registry      *registry.Registry
	Delivery      *delivery.Service
	Events        *events.Hub
	Handlers      *handlers.Handlers
	logger        *slog.Logger
	listAhead     bool // INTEROP_LIST_AHEAD=1: list every provider's sessions after initialize
}

// Open opens the store and builds every service over it. It starts no
// provider process and touches no network: a team store (PostgreSQL) is
// opened lazily, so its server is first contacted by the first call that
// needs it, and an unreachable server fails that call with the reason.
func Open(ctx context.Context, cfg Config) (*App, error) {
	cfg = cfg.withDefaults()
	st, machine, err := openStore(ctx, cfg)
	if err != nil {
		return nil, err
	}
	a, err := assemble(st, machine, cfg)
	if err != nil {
		st.Close()
		return nil, err
	}
	return a, nil
}

// listAhead says whether INTEROP_LIST_AHEAD=1 asks for every provider's
// session listing to start after initialize.
func (cfg Config) listAhead() bool {
	if cfg.Env == nil {
		return false
	}
	v, _ := cfg.Env("INTEROP_LIST_AHEAD")
	return strings.TrimSpace(v) == "1"
}

func (cfg Config) withDefaults() Config {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return cfg
}

// openStore opens the configured store and, on a team store, names this
// machine: what can refuse to start before anything is assembled.
func openStore(ctx context.Context, cfg Config) (st *store.Store, machine string, err error) {
	location, err := store.ResolvePath(store.LookupEnv(cfg.Env))
	if err != nil {
		return nil, "", err
	}
	opts := []store.Option{store.WithLazyConnect()}
	if cfg.ExistingStore {
		opts = append(opts, store.WithoutCreate())
	}
	st, err = store.Open(ctx, location, opts...)
	if err != nil {
		return nil, "", fmt.Errorf("open the state store: %w", err)
	}
	if st.Shared() {
		if machine, err = store.MachineName(store.LookupEnv(cfg.Env)); err != nil {
			st.Close()
			return nil, "", err
		}
	}
	return st, machine, nil
}

// assemble builds every service over an open store; it does not close st
// when it fails.
func assemble(st *store.Store, machine string, cfg Config) (*App, error) {
	clock := st.Clock()
	a := &App{Store: st, logger: cfg.Logger, listAhead: cfg.listAhead()}
	a.Roots = security.NewRoots(security.LookupEnv(cfg.Env))

	// The provider layer, in dependency order: the relay the adapters
	// report through, the adapters (they connect lazily, on first use, so
	// opening the App starts no process and touches no network), the
	// registry over them, then the event hub and the delivery ledger, each
	// taking over its kind of report from the relay. On a team store the
	// provider programs (and the agents they run) get this process's
	// environment without the store's credentials.
	var childEnv func() []string
	if st.Shared() {
		childEnv = func() []string { return store.WithoutCredentials(os.Environ()) }
	}
	reports := registry.NewHost()
	set := adapters.New(adapters.Config{LookupEnv: cfg.Env, Host: reports, Roots: a.Roots, Logger: cfg.Logger, ChildEnv: childEnv})
	a.Freebuff = set.Freebuff
	reg, err := registry.New(st, set.All, registry.Options{Host: machine, Clock: clock, Logger: cfg.Logger})
	if err != nil {
		return nil, fmt.Errorf("start the provider registry: %w", err)
	}
	a.Registry = reg
	a.Roots.SetWorkspaceLookup(reg.IsWorkspace)
	a.Events = events.NewHub(events.NewLog(st, events.LogOptions{Clock: clock}),
		events.HubOptions{Open: reg.Subscribe, Liveness: reg.Liveness, Reports: reports})
	a.Delivery = delivery.New(st, reg, delivery.Options{Clock: clock, Reports: reports, Events: a.Events,
		Logf: func(format string, args ...any) { cfg.Logger.Info(fmt.Sprintf(format, args...)) }})

	a.Workflow = workflow.New(st, workflow.Options{LookupEnv: workflow.LookupEnv(cfg.Env), Sessions: sessionLookup{reg},
		Reviews: reviewProviders{reg: reg, del: a.Delivery}, Clock: clock})
	a.Claims = claims.New(st, claims.WithClock(clock))
	a.Conversations = conversations.New(st, a.Delivery, conversations.WithClock(clock))
	cfg.Runtime.StorePath = st.Location()
	cfg.Runtime.Host = machine
	a.Handlers = handlers.New(handlers.Deps{
		Runtime:       cfg.Runtime,
		Store:         st,
		Workflow:      a.Workflow,
		Claims:        a.Claims,
		Conversations: a.Conversations,
		Freebuff:      a.Freebuff,
		Registry:      a.Registry,
		Delivery:      a.Delivery,
		Events:        a.Events,
	})
	return a, nil
}

// AfterInitialize is the start-up work that runs once the client's
// initialize has been answered: the open operations (direct sends and
// conversation messages, one ledger) that runtime processes which are gone
// left behind are settled from the providers' native histories, now and
// then periodically while this process runs, until ctx ends. Nothing is
// ever resent. With INTEROP_LIST_AHEAD=1 every provider's session listing
// starts too, so the first list_agent_sessions finds it under way or done.
// It returns at once.
func (a *App) AfterInitialize(ctx context.Context) {
	if a.listAhead {
		a.Registry.ListAhead(ctx)
	}
	a.Delivery.StartSettling(ctx, func(ops []delivery.Operation, err error) {
		switch {
		case err != nil:
			a.logger.Warn("start-up settlement of open operations failed", "err", err)
		case len(ops) > 0:
			a.logger.Info("start-up settlement", "operations", len(ops))
		}
	})
}

// Close stops the provider layer and releases the store.
func (a *App) Close() error {
	return errors.Join(a.Events.Close(), a.Delivery.Close(), a.Registry.Close(), a.Store.Close())
}

// sessionLookup gives the workflow service the workspace of a provider
// session, as its provider reports it.
type sessionLookup struct{ reg *registry.Registry }

func (l sessionLookup) LookupSession(ctx context.Context, provider, nativeID string) (workflow.SessionInfo, bool, error) {
	s, err := l.reg.GetSession(ctx, provider, nativeID)
	if err != nil {
		var unknown *registry.UnknownSessionError
		if errors.As(err, &unknown) {
			return workflow.SessionInfo{}, false, nil
		}
		return workflow.SessionInfo{}, false, err
	}
	return workflow.SessionInfo{Cwd: s.CWD}, true, nil
}
