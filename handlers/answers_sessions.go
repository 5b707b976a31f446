package handlers

import (
	"github.com/agent-interop/runtime/catalogs"
	"github.com/agent-interop/runtime/internal/claims"
	"github.com/agent-interop/runtime/internal/delivery"
	"github.com/agent-interop/runtime/internal/events"
	"github.com/agent-interop/runtime/internal/providers"
	"github.com/agent-interop/runtime/internal/providers/registry"
	"github.com/agent-interop/runtime/internal/store"
)

// The answers of the runtime, sessions and session-control tools.

func recoveryAnswer(v store.Recovery) catalogs.Recovery {
	return catalogs.Recovery{
		Required:      v.Required,
		File:          v.File,
		PreservedFile: opt(v.PreservedFile),
		Reason:        v.Reason,
		DetectedAt:    opt(v.DetectedAt),
	}
}

func capabilityAnswer(v providers.Capability) catalogs.Capability {
	return catalogs.Capability{
		Supported: v.Supported,
		State:     string(v.State),
		Transport: opt(v.Transport),
		Protocol:  opt(v.Protocol),
		Reason:    opt(v.Reason),
		Fix:       opt(v.Fix),
	}
}

func capabilitiesAnswer(v providers.Capabilities) catalogs.ProviderCapabilities {
	return catalogs.ProviderCapabilities{
		Provider:        string(v.Provider),
		AdapterVersion:  v.AdapterVersion,
		ProviderVersion: opt(v.ProviderVersion),
		Program:         opt(v.Program),
		Authorization:   v.Authorization,
		Discovery:       capabilityAnswer(v.Discovery),
		Sessions:        capabilityAnswer(v.Sessions),
		SendMessage:     capabilityAnswer(v.SendMessage),
		Steer:           capabilityAnswer(v.Steer),
		Cancel:          capabilityAnswer(v.Cancel),
		Events:          capabilityAnswer(v.Events),
		Diff:            capabilityAnswer(v.Diff),
		Permissions:     capabilityAnswer(v.Permissions),
		Model:           capabilityAnswer(v.Model),
		Reasoning:       capabilityAnswer(v.Reasoning),
		Limitations:     list(v.Limitations),
	}
}

func livenessAnswer(v providers.Liveness) catalogs.Liveness {
	return catalogs.Liveness{
		State:      string(v.State),
		ObservedAt: timePtr(v.ObservedAt),
		Reason:     opt(v.Reason),
	}
}

func provenanceAnswer(v providers.Provenance) catalogs.Provenance {
	return catalogs.Provenance{
		DiscoveredAt: timeText(v.DiscoveredAt),
		Source:       v.Source,
		Native:       v.Native,
	}
}

func sessionAnswer(v providers.Session) catalogs.Session {
	return catalogs.Session{
		ID:         v.ID,
		Provider:   string(v.Provider),
		NativeID:   v.NativeID,
		Title:      opt(v.Title),
		State:      opt(v.State),
		Model:      opt(v.Model),
		ProjectID:  opt(v.ProjectID),
		CWD:        opt(v.CWD),
		Transport:  opt(v.Transport),
		Endpoint:   opt(v.Endpoint),
		Host:       opt(v.Host),
		Provenance: provenanceAnswer(v.Provenance),
		Metadata:   mapOpt(v.Metadata),
		Liveness:   ptrTo(v.Liveness, livenessAnswer),
	}
}

func providerErrorAnswer(v registry.ProviderError) catalogs.ProviderError {
	return catalogs.ProviderError{
		Provider: string(v.Provider),
		Error:    v.Error,
	}
}

func eventAnswer(v events.Event) catalogs.Event {
	return catalogs.Event{
		Provider:  string(v.Provider),
		NativeID:  v.NativeID,
		Sequence:  v.Sequence,
		Epoch:     v.Epoch,
		Timestamp: timeText(v.Timestamp),
		Type:      v.Type,
		Data:      v.Data,
		TurnID:    opt(v.TurnID),
	}
}

func eventGapAnswer(v events.Gap) catalogs.Gap {
	return catalogs.Gap{
		From: v.From,
		To:   v.To,
	}
}

func receiptAnswer(v providers.Receipt) catalogs.Receipt {
	return catalogs.Receipt{
		Provider:      string(v.Provider),
		NativeID:      v.NativeID,
		Operation:     v.Operation,
		Accepted:      v.Accepted,
		Status:        opt(string(v.Status)),
		ProviderState: opt(v.ProviderState),
		Detail:        v.Detail,
		NativeTurnID:  opt(v.NativeTurnID),
		Turn:          turnFactsAnswer(v.Turn),
	}
}

// turnFactsAnswer maps what was observed of a turn; nil when nothing was.
func turnFactsAnswer(t *providers.TurnResult) *catalogs.TurnFacts {
	if t == nil {
		return nil
	}
	a := &catalogs.TurnFacts{Verdict: opt(string(t.Verdict)), Error: opt(t.Error), Usage: usageAnswer(t.Usage)}
	if len(t.ChangedFiles) > 0 {
		files := append([]string(nil), t.ChangedFiles...)
		a.ChangedFiles = &files
	}
	return a
}

// withEventsUsage sets a read_session_events answer's usage totals, also
// on every page the answer budget cuts from it.
func withEventsUsage(out *catalogs.ReadSessionEventsOutput, u *catalogs.UsageTotals) *catalogs.ReadSessionEventsOutput {
	out.Usage = u
	if cut := out.Cut; cut != nil {
		out.Cut = func(n int) *catalogs.ReadSessionEventsOutput { return withEventsUsage(cut(n), u) }
	}
	return out
}

// withConversationUsage is withEventsUsage for read_conversation.
func withConversationUsage(out *catalogs.ReadConversationOutput, u *catalogs.UsageTotals) *catalogs.ReadConversationOutput {
	out.Usage = u
	if cut := out.Cut; cut != nil {
		out.Cut = func(n int) *catalogs.ReadConversationOutput { return withConversationUsage(cut(n), u) }
	}
	return out
}

// usageTotalsAnswer maps a total of turns' usage.
func usageTotalsAnswer(t delivery.Totals) *catalogs.UsageTotals {
	a := &catalogs.UsageTotals{Turns: int64(t.Turns), Reported: int64(t.Reported), Usage: usageAnswer(t.Usage)}
	if t.Partial {
		a.Partial = &t.Partial
	}
	if v := t.VerdictText(); v != "" {
		a.Verdicts = &v
	}
	return a
}

// usageAnswer maps reported usage; nil (unknown) when nothing was reported.
func usageAnswer(u *providers.Usage) *catalogs.Usage {
	if !u.Known() {
		return nil
	}
	return &catalogs.Usage{Input: u.InputTokens, Output: u.OutputTokens, Cached: u.CachedTokens, Reasoning: u.ReasoningTokens, CostUsd: u.CostUSD}
}

func permissionOptionAnswer(v providers.PermissionOption) catalogs.PermissionOption {
	return catalogs.PermissionOption{
		ID:   v.ID,
		Name: opt(v.Name),
		Kind: opt(v.Kind),
	}
}

func editConflictAnswer(v claims.EditConflict) catalogs.EditConflict {
	return catalogs.EditConflict{
		ClaimID:   v.ClaimID,
		WorkID:    v.WorkID,
		Holder:    v.Holder,
		Resource:  v.Resource,
		Kind:      string(v.Kind),
		ExpiresAt: timeText(v.ExpiresAt),
		Path:      v.Path,
	}
}

func pendingPermissionAnswer(r providers.PermissionRequest, conflicts []claims.EditConflict) catalogs.PendingPermission {
	return catalogs.PendingPermission{
		Provider:     string(r.Provider),
		RequestID:    r.RequestID,
		NativeID:     r.NativeID,
		Method:       r.Method,
		Title:        opt(r.Title),
		Options:      mapList(r.Options, permissionOptionAnswer),
		RequestedAt:  timeText(r.RequestedAt),
		Detail:       r.Detail,
		Paths:        nonEmpty(r.Paths),
		PathsUnknown: opt(r.PathsUnknown),
		Conflicts:    nonEmpty(mapList(conflicts, editConflictAnswer)),
	}
}

func sessionPageAnswer(p registry.SessionPage) *catalogs.ListAgentSessionsOutput {
	return &catalogs.ListAgentSessionsOutput{
		Sessions:       mapList(p.Sessions, sessionAnswer),
		ProviderErrors: mapList(p.ProviderErrors, providerErrorAnswer),
		NextCursor:     opt(p.NextCursor),
		Cut: func(n int) *catalogs.ListAgentSessionsOutput {
			return sessionPageAnswer(p.CutPage(n).(registry.SessionPage))
		},
	}
}

func eventPageAnswer(p events.Page) *catalogs.ReadSessionEventsOutput {
	return &catalogs.ReadSessionEventsOutput{
		Events:     mapList(p.Events, eventAnswer),
		Next:       p.Next,
		Epoch:      p.Epoch,
		Gap:        ptrTo(p.Gap, eventGapAnswer),
		Warning:    opt(p.Warning),
		NextCursor: opt(p.NextCursor),
		Liveness:   ptrTo(p.Liveness, livenessAnswer),
		WaitEnded:  opt(p.WaitEnded),
		Cut:        func(n int) *catalogs.ReadSessionEventsOutput { return eventPageAnswer(p.CutPage(n).(events.Page)) },
	}
}
