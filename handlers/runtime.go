package handlers

import (
	"context"
	"fmt"
	"time"

	"github.com/agent-interop/runtime/catalogs"
	"github.com/agent-interop/runtime/internal/providers"
	"github.com/agent-interop/runtime/internal/store"
)

// RuntimeStatus is the answer of get_runtime_status.
type RuntimeStatus struct {
	Name               string          `json:"name"`
	Version            string          `json:"version"`
	Profile            string          `json:"toolsetProfile"`
	ProfileDescription string          `json:"toolsetProfileDescription"`
	ReadOnly           bool            `json:"readOnly"`
	Tools              int             `json:"tools"`
	Store              StoreStatus     `json:"store"`
	Providers          []ProviderBrief `json:"providers"`
	Notes              []string        `json:"notes,omitempty"`
}

// StoreStatus describes the state store and any recovery of a damaged file.
// A team store (PostgreSQL) also says so, names this machine's host, and
// whether the database answers now (with the reason when it does not).
type StoreStatus struct {
	Path                  string          `json:"path"`
	Dialect               string          `json:"dialect,omitempty"`
	Host                  string          `json:"host,omitempty"`
	Reachable             *bool           `json:"reachable,omitempty"`
	Error                 string          `json:"error,omitempty"`
	SchemaVersion         string          `json:"schemaVersion"`
	StateRecoveryRequired *store.Recovery `json:"stateRecoveryRequired"`
}

// storeCheckTimeout bounds how long get_runtime_status waits for a team
// store to answer.
const storeCheckTimeout = 3 * time.Second

// ProviderBrief is one provider's line in the status: what the runtime
// last learned, without contacting the provider (list_providers checks).
type ProviderBrief struct {
	Provider  string     `json:"provider"`
	State     string     `json:"state"`
	Reason    string     `json:"reason,omitempty"`
	Program   string     `json:"program,omitempty"`
	CheckedAt *time.Time `json:"checkedAt,omitempty"`
}

// GetRuntimeStatus answers get_runtime_status.
func (h *Handlers) GetRuntimeStatus(ctx context.Context, _ *catalogs.GetRuntimeStatusInput) (any, error) {
	r := h.deps.Runtime
	st := RuntimeStatus{
		Name:               "agent-interop-runtime",
		Version:            r.Version,
		Profile:            r.Profile,
		ProfileDescription: r.ProfileDescription,
		ReadOnly:           r.ReadOnly,
		Tools:              r.Tools,
		Store:              StoreStatus{Path: r.StorePath, SchemaVersion: store.SchemaVersion()},
		Providers:          []ProviderBrief{},
	}
	for _, id := range providers.Order() {
		b := ProviderBrief{Provider: string(id), State: string(providers.Unknown), Reason: "not checked yet; list_providers checks it"}
		if h.deps.Registry != nil {
			if k, ok := h.deps.Registry.LastKnown(id); ok {
				c := k.Capabilities
				b.State, b.Reason, b.Program = string(c.Sessions.State), c.Sessions.Reason, c.Program
				if !k.CheckedAt.IsZero() {
					t := k.CheckedAt.UTC()
					b.CheckedAt = &t
				}
			}
		}
		st.Providers = append(st.Providers, b)
	}
	if s := h.deps.Store; s != nil && s.Shared() {
		st.Store.SchemaVersion = s.SchemaVersion()
		cctx, cancel := context.WithTimeout(ctx, storeCheckTimeout)
		err := s.Check(cctx)
		cancel()
		ok := err == nil
		st.Store.Dialect, st.Store.Host, st.Store.Reachable = "postgres", r.Host, &ok
		if err != nil {
			st.Store.Error = err.Error()
			st.Notes = append(st.Notes, "The team store does not answer; every store tool fails until it does: "+err.Error())
		}
	}
	if h.deps.Store != nil {
		rec, err := h.deps.Store.Recovery(ctx)
		if err != nil {
			return nil, err
		}
		st.Store.StateRecoveryRequired = rec
		if rec != nil {
			st.Notes = append(st.Notes, fmt.Sprintf("The store file was damaged and moved aside to %s (%s); the runtime started a new store.", rec.PreservedFile, rec.Reason))
		}
	}
	return st, nil
}
