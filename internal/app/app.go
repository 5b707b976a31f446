// Package app assembles the runtime from its parts: the store, the
// coordination services, the provider layer and the MCP handlers. The
// command line (serve, work, doctor) builds one App and closes it.
package app

import (
	"context"
	"encoding/json"
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
	"github.com/agent-interop/runtime/internal/providers"
	"github.com/agent-interop/runtime/internal/providers/claude"
	"github.com/agent-interop/runtime/internal/providers/codex"
	"github.com/agent-interop/runtime/internal/providers/cursor"
	"github.com/agent-interop/runtime/internal/providers/freebuff"
	"github.com/agent-interop/runtime/internal/providers/opencode"
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
}

// EnvHost names this machine on a team store (default: the hostname).
const EnvHost = "INTEROP_HOST"

// Open opens the store and builds every service over it. It starts no
// provider process and touches no network: a team store (PostgreSQL) is
// opened lazily, so its server is first contacted by the first call that
// needs it, and an unreachable server fails that call with the reason.
func Open(ctx context.Context, cfg Config) (*App, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	location, err := store.ResolvePath(store.LookupEnv(cfg.Env))
	if err != nil {
		return nil, err
	}
	st, err := store.Open(ctx, location, store.WithLazyConnect())
	if err != nil {
		return nil, fmt.Errorf("open the state store: %w", err)
	}
	machine := ""
	if st.Shared() {
		if machine, err = hostName(cfg.Env); err != nil {
			st.Close()
			return nil, err
		}
	}
	clock := st.Clock()
	a := &App{Store: st, logger: cfg.Logger}
	a.Roots = security.NewRoots(security.LookupEnv(cfg.Env))
	getenv := func(k string) string { v, _ := cfg.Env(k); return v }

	// The provider layer: adapters connect lazily, on first use, so
	// opening the App starts no process and touches no network.
	// On a team store the provider programs (and the agents they run) get
	// this process's environment without the store's credentials.
	var childEnv []string
	var childEnviron func() []string
	if st.Shared() {
		childEnv = providerEnv(os.Environ())
		childEnviron = func() []string { return providerEnv(os.Environ()) }
	}
	host := registry.NewHost()
	a.Freebuff = freebuff.New(freebuff.Config{Env: security.LookupEnv(cfg.Env), Roots: a.Roots, Logger: cfg.Logger, Environ: childEnviron})
	oc := opencode.ConfigFromEnv(getenv)
	oc.ServeEnv = childEnv
	adapters := []providers.Adapter{
		freebuff.NewAdapter(a.Freebuff, host),
		opencode.New(oc, host),
		codex.New(codex.Config{Host: host, LookupEnv: cfg.Env, Env: childEnv}),
		claude.New(claude.Options{Host: host, Getenv: getenv, Env: childEnv}),
		cursor.New(cursor.Options{Host: host, Getenv: getenv, Env: childEnv}),
	}
	reg, err := registry.New(st, adapters, registry.Options{Host: machine, Clock: clock})
	if err != nil {
		st.Close()
		return nil, fmt.Errorf("start the provider registry: %w", err)
	}
	a.Registry = reg
	a.Roots.SetWorkspaceLookup(reg.IsWorkspace)
	a.Delivery = delivery.New(st, reg, delivery.Options{Clock: clock, Logf: func(format string, args ...any) {
		cfg.Logger.Info(fmt.Sprintf(format, args...))
	}})
	a.Events = events.NewHub(events.NewLog(st, events.LogOptions{Clock: clock}), events.HubOptions{Open: reg.Subscribe, Liveness: reg.Liveness})
	host.Attach(a.Delivery, a.Events)

	a.Workflow = workflow.New(st, workflow.Options{LookupEnv: workflow.LookupEnv(cfg.Env), Sessions: sessionLookup{reg},
		Reviews: reviewProviders{reg: reg, del: a.Delivery}, Clock: clock})
	a.Claims = claims.New(st, claims.WithClock(clock))
	a.Conversations = conversations.New(st, a.Delivery, conversations.WithClock(clock))
	// A later outcome of any recorded operation (a conversation message's
	// too: it shows its operation's state) goes into the session's event
	// log (type interop.operation), so read_session_events shows a queued
	// send becoming completed or rejected, with the turn it started.
	a.Delivery.OnOutcome(func(op delivery.Operation) {
		data, err := json.Marshal(operationEvent{
			OperationID: op.ID, IdempotencyKey: op.IdempotencyKey, Operation: op.Operation,
			Status: op.Status, ProviderState: op.ProviderState, NativeTurnID: op.NativeTurnID, Detail: op.Detail,
		})
		if err != nil {
			return
		}
		a.Events.ReportEvent(op.Provider, providers.NativeEvent{NativeID: op.NativeID, Timestamp: op.UpdatedAt, Type: EventOperation,
			Data: data, TurnID: op.NativeTurnID})
	})
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
// ever resent. It returns at once.
func (a *App) AfterInitialize(ctx context.Context) {
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

// providerEnv is environ without a team store's credentials: INTEROP_DB
// when its URL carries a password, and PGPASSWORD. The provider programs
// run agents that read their environment; a password file (PGPASSFILE)
// stays usable by a runtime such an agent starts.
func providerEnv(environ []string) []string {
	out := make([]string, 0, len(environ))
	for _, kv := range environ {
		name, value, _ := strings.Cut(kv, "=")
		switch {
		case name == "PGPASSWORD":
			continue
		case name == store.EnvDB && store.IsPostgres(value) && store.HasPassword(value):
			continue
		}
		out = append(out, kv)
	}
	return out
}

// hostName is this machine's name on a team store: INTEROP_HOST, else the
// hostname.
func hostName(env Env) (string, error) {
	if v, ok := env(EnvHost); ok && strings.TrimSpace(v) != "" {
		return strings.TrimSpace(v), nil
	}
	h, err := os.Hostname()
	if err != nil || strings.TrimSpace(h) == "" {
		return "", fmt.Errorf("a team store needs this machine's name and the hostname is unknown (%v); set %s", err, EnvHost)
	}
	return h, nil
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

// EventOperation is the event type under which a recorded operation's later
// outcome appears in its session's event log.
const EventOperation = "interop.operation"

// operationEvent is the data of an interop.operation event.
type operationEvent struct {
	OperationID    string                  `json:"operationId"`
	IdempotencyKey string                  `json:"idempotencyKey"`
	Operation      string                  `json:"operation"`
	Status         providers.ReceiptStatus `json:"status"`
	ProviderState  string                  `json:"providerState,omitempty"`
	NativeTurnID   string                  `json:"nativeTurnId,omitempty"`
	Detail         json.RawMessage         `json:"detail,omitempty"`
}
