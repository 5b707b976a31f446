// Package app assembles the runtime from its parts: the store, the
// coordination services, the provider layer and the MCP handlers. The
// command line (serve, work, doctor) builds one App and closes it.
package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/agent-interop/runtime/handlers"
	"github.com/agent-interop/runtime/internal/claims"
	"github.com/agent-interop/runtime/internal/conversations"
	"github.com/agent-interop/runtime/internal/providers"
	"github.com/agent-interop/runtime/internal/providers/freebuff"
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
	Handlers      *handlers.Handlers
	logger        *slog.Logger
}

// Open opens the store and builds every service over it. It starts no
// provider process and touches no network.
func Open(ctx context.Context, cfg Config) (*App, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	path, err := store.ResolvePath(store.LookupEnv(cfg.Env))
	if err != nil {
		return nil, err
	}
	st, err := store.Open(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("open the state store: %w", err)
	}
	a := &App{Store: st, logger: cfg.Logger}
	a.Workflow = workflow.New(st, workflow.Options{LookupEnv: workflow.LookupEnv(cfg.Env)})
	a.Claims = claims.New(st.Client(), claims.WithTx(st.Tx))
	a.Conversations = conversations.New(st.Client(), noProviders{}, conversations.WithTx(st.Tx), conversations.WithRead(st.Read))
	a.Roots = security.NewRoots(security.LookupEnv(cfg.Env))
	a.Freebuff = freebuff.New(freebuff.Config{Env: security.LookupEnv(cfg.Env), Roots: a.Roots, Logger: cfg.Logger})
	cfg.Runtime.StorePath = path
	a.Handlers = handlers.New(handlers.Deps{
		Runtime:       cfg.Runtime,
		Store:         st,
		Workflow:      a.Workflow,
		Claims:        a.Claims,
		Conversations: a.Conversations,
		Freebuff:      a.Freebuff,
	})
	return a, nil
}

// AfterInitialize is the start-up work that runs once the client's
// initialize has been answered: sends left in flight by a crashed process
// whose leases expired become delivery_unknown.
func (a *App) AfterInitialize(ctx context.Context) {
	results, err := a.Conversations.ReconcileExpiredAtStartup(ctx)
	if err != nil {
		a.logger.Warn("start-up reconciliation of interrupted sends failed", "err", err)
		return
	}
	if len(results) > 0 {
		a.logger.Info("start-up reconciliation", "messages", len(results))
	}
}

// Close stops the provider layer and releases the store.
func (a *App) Close() error {
	return errors.Join(a.Freebuff.Close(), a.Store.Close())
}

// noProviders refuses every dispatch: no provider adapter is wired into
// this build, so nothing is sent and the message is recorded as rejected.
type noProviders struct{}

func (noProviders) Dispatch(_ context.Context, provider, nativeID, _ string, _ conversations.DispatchOptions) (providers.Receipt, error) {
	return providers.Receipt{}, &providers.NotSentError{Err: fmt.Errorf("no provider adapter for %s is available to reach %s", provider, nativeID)}
}
