package handlers

import (
	"context"
	"fmt"
	"time"

	"github.com/agent-interop/runtime/catalogs"
	"github.com/agent-interop/runtime/internal/clockctx"
	"github.com/agent-interop/runtime/internal/providers"
	"github.com/agent-interop/runtime/internal/store"
)

// storeCheckTimeout bounds how long get_runtime_status waits for a team
// store to answer.
const storeCheckTimeout = 3 * time.Second

// GetRuntimeStatus answers get_runtime_status: the build, the profile, the
// store (a team store also says whether it answers now, with the reason
// when it does not) and what the runtime last learned of each provider,
// without contacting one (list_providers checks).
func (h *Handlers) GetRuntimeStatus(ctx context.Context, _ *catalogs.GetRuntimeStatusInput) (*catalogs.GetRuntimeStatusOutput, error) {
	r := h.deps.Runtime
	st := &catalogs.GetRuntimeStatusOutput{
		Name:                      "agent-interop-runtime",
		Version:                   r.Version,
		ToolsetProfile:            r.Profile,
		ToolsetProfileDescription: r.ProfileDescription,
		ReadOnly:                  r.ReadOnly,
		Tools:                     int64(r.Tools),
		Store:                     catalogs.StoreStatus{Path: r.StorePath, SchemaVersion: store.SchemaVersion()},
		Providers:                 []catalogs.ProviderBrief{},
	}
	var notes []string
	ids := knownIDs(h.deps.Registry)
	for _, id := range ids {
		b := catalogs.ProviderBrief{Provider: string(id), State: string(providers.Unknown), Reason: opt("not checked yet; list_providers checks it")}
		if h.deps.Registry != nil {
			if k, ok := h.deps.Registry.LastKnown(id); ok {
				c := k.Capabilities
				b.State, b.Reason, b.Program = string(c.Sessions.State), opt(c.Sessions.Reason), opt(c.Program)
				if !k.CheckedAt.IsZero() {
					b.CheckedAt = opt(timeText(k.CheckedAt.UTC()))
				}
			}
		}
		st.Providers = append(st.Providers, b)
	}
	if s := h.deps.Store; s != nil && s.Shared() {
		st.Store.SchemaVersion = s.SchemaVersion()
		cctx, cancel := clockctx.WithTimeout(ctx, s.Clock(), storeCheckTimeout, "handlers", "store check")
		err := s.Check(cctx)
		cancel()
		ok := err == nil
		st.Store.Dialect, st.Store.Host, st.Store.Reachable = opt("postgres"), opt(r.Host), &ok
		if err != nil {
			st.Store.Error = opt(err.Error())
			notes = append(notes, "The team store does not answer; every store tool fails until it does: "+err.Error())
		}
	}
	if h.deps.Store != nil {
		rec, err := h.deps.Store.Recovery(ctx)
		if err != nil {
			return nil, err
		}
		st.Store.StateRecoveryRequired = ptrTo(rec, recoveryAnswer)
		if rec != nil {
			notes = append(notes, fmt.Sprintf("The store file was damaged and moved aside to %s (%s); the runtime started a new store.", rec.PreservedFile, rec.Reason))
		}
	}
	st.Notes = nonEmpty(notes)
	return st, nil
}
