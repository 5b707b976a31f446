package handlers

import (
	"context"

	"github.com/agent-interop/runtime/catalogs"
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

// StoreStatus describes the state store.
type StoreStatus struct {
	Path      string `json:"path"`
	Available bool   `json:"available"`
}

// ProviderBrief is one provider's line in the status.
type ProviderBrief struct {
	Provider string `json:"provider"`
	State    string `json:"state"`
	Reason   string `json:"reason,omitempty"`
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
		Store:              StoreStatus{Path: r.StorePath},
		Providers:          []ProviderBrief{},
	}
	return st, nil
}
