package handlers

import (
	"encoding/json"
	"time"

	"github.com/agent-interop/runtime/catalogs"
	"github.com/agent-interop/runtime/ent/schema"
	"github.com/agent-interop/runtime/internal/claims"
	"github.com/agent-interop/runtime/internal/conversations"
	"github.com/agent-interop/runtime/internal/events"
	"github.com/agent-interop/runtime/internal/providers"
	"github.com/agent-interop/runtime/internal/providers/freebuff"
	"github.com/agent-interop/runtime/internal/providers/registry"
	"github.com/agent-interop/runtime/internal/store"
	"github.com/agent-interop/runtime/internal/workflow"
)

// This file maps the services' records to the answer types generated from
// the spec's output schemas (catalogs, spec/records.yaml): one function
// per record. A field the spec marks optional is a pointer, nil when the
// service leaves it out; a required list is never nil.

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
	}
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

func workAnswer(v workflow.Work) catalogs.Work {
	return catalogs.Work{
		ID:                  v.ID,
		Objective:           v.Objective,
		AcceptanceCriteria:  list(v.AcceptanceCriteria),
		SourceSession:       v.SourceSession,
		DestinationSession:  v.DestinationSession,
		Status:              v.Status,
		ChangedFiles:        list(v.ChangedFiles),
		Risks:               list(v.Risks),
		UnresolvedQuestions: list(v.UnresolvedQuestions),
		EvidenceIds:         list(v.EvidenceIDs),
		EvidenceCount:       opt(int64(v.EvidenceCount)),
		DependsOn:           nonEmpty(list(v.DependsOn)),
		CreatedAt:           v.CreatedAt,
		UpdatedAt:           v.UpdatedAt,
	}
}

func workPreviewAnswer(v workflow.WorkPreview) catalogs.WorkPreview {
	return catalogs.WorkPreview{
		ID:                      v.ID,
		SourceSession:           v.SourceSession,
		DestinationSession:      v.DestinationSession,
		Status:                  v.Status,
		ChangedFiles:            list(v.ChangedFiles),
		EvidenceIds:             list(v.EvidenceIDs),
		EvidenceCount:           opt(int64(v.EvidenceCount)),
		DependsOn:               nonEmpty(list(v.DependsOn)),
		CreatedAt:               v.CreatedAt,
		UpdatedAt:               v.UpdatedAt,
		ObjectivePreview:        v.ObjectivePreview,
		AcceptanceCriteriaCount: int64(v.AcceptanceCriteriaCount),
	}
}

func evidenceSourceAnswer(v schema.EvidenceSource) catalogs.EvidenceSource {
	return catalogs.EvidenceSource{
		Adapter:       v.Adapter,
		Protocol:      opt(v.Protocol),
		NativeEventID: opt(v.NativeEventID),
	}
}

func evidenceAnswer(v workflow.Evidence) catalogs.Evidence {
	return catalogs.Evidence{
		ID:          v.ID,
		WorkID:      v.WorkID,
		SessionID:   v.SessionID,
		Kind:        v.Kind,
		Trust:       v.Trust,
		Source:      evidenceSourceAnswer(v.Source),
		CapturedAt:  v.CapturedAt,
		Summary:     v.Summary,
		Data:        v.Data,
		ContentHash: v.ContentHash,
	}
}

func evidenceMetaAnswer(v workflow.EvidenceMeta) catalogs.EvidenceMeta {
	return catalogs.EvidenceMeta{
		ID:          v.ID,
		WorkID:      v.WorkID,
		SessionID:   v.SessionID,
		Kind:        v.Kind,
		Trust:       v.Trust,
		Source:      evidenceSourceAnswer(v.Source),
		CapturedAt:  v.CapturedAt,
		Summary:     v.Summary,
		ContentHash: v.ContentHash,
		DataBytes:   int64(v.DataBytes),
	}
}

func evidenceRecordAnswer(v workflow.EvidenceRecord) catalogs.EvidenceMeta {
	return catalogs.EvidenceMeta{
		ID:          v.EvidenceMeta.ID,
		WorkID:      v.EvidenceMeta.WorkID,
		SessionID:   v.EvidenceMeta.SessionID,
		Kind:        v.EvidenceMeta.Kind,
		Trust:       v.EvidenceMeta.Trust,
		Source:      evidenceSourceAnswer(v.EvidenceMeta.Source),
		CapturedAt:  v.EvidenceMeta.CapturedAt,
		Summary:     v.EvidenceMeta.Summary,
		ContentHash: v.EvidenceMeta.ContentHash,
		DataBytes:   int64(v.EvidenceMeta.DataBytes),
		Data:        rawOpt(v.Data),
	}
}

func validationAnswer(v schema.HandoffValidation) catalogs.HandoffValidation {
	return catalogs.HandoffValidation{
		Label:      opt(v.Label),
		Command:    opt(v.Command),
		Outcome:    v.Outcome,
		ObservedAt: opt(v.ObservedAt),
	}
}

func handoffAnswer(v workflow.Handoff) catalogs.Handoff {
	return catalogs.Handoff{
		ID:                  v.ID,
		WorkID:              v.WorkID,
		SourceSession:       v.SourceSession,
		DestinationSession:  v.DestinationSession,
		Objective:           v.Objective,
		AcceptanceCriteria:  list(v.AcceptanceCriteria),
		EvidenceIds:         list(v.EvidenceIDs),
		ChangedFiles:        list(v.ChangedFiles),
		Risks:               list(v.Risks),
		UnresolvedQuestions: list(v.UnresolvedQuestions),
		AuthorityBoundaries: list(v.AuthorityBoundaries),
		ContinuationState:   v.ContinuationState,
		LatestValidation:    ptrTo(v.LatestValidation, validationAnswer),
		Assumptions:         nonEmpty(list(v.Assumptions)),
		RollbackNotes:       nonEmpty(list(v.RollbackNotes)),
		NextAction:          v.NextAction,
		RepositoryRevision:  v.RepositoryRevision,
		Status:              v.Status,
		ContextTokens:       int64(v.ContextTokens),
		TokenBudget:         int64(v.TokenBudget),
		OmittedFields:       list(v.OmittedFields),
		CreatedAt:           v.CreatedAt,
		UpdatedAt:           v.UpdatedAt,
	}
}

func omissionAnswer(v workflow.Omission) catalogs.Omission {
	return catalogs.Omission{
		Field:  v.Field,
		Reason: v.Reason,
	}
}

func packetAnswer(v workflow.Packet) catalogs.Packet {
	return catalogs.Packet{
		HandoffID:           v.HandoffID,
		WorkID:              v.WorkID,
		SourceSession:       v.SourceSession,
		DestinationSession:  v.DestinationSession,
		Objective:           v.Objective,
		AcceptanceCriteria:  list(v.AcceptanceCriteria),
		AuthorityBoundaries: list(v.AuthorityBoundaries),
		EvidenceIds:         v.EvidenceIDs,
		ChangedFiles:        v.ChangedFiles,
		UnresolvedQuestions: v.UnresolvedQuestions,
		Risks:               v.Risks,
		ContinuationState:   v.ContinuationState,
		LatestValidation:    ptrTo(v.LatestValidation, validationAnswer),
		Assumptions:         v.Assumptions,
		RollbackNotes:       v.RollbackNotes,
		NextAction:          v.NextAction,
		RepositoryRevision:  v.RepositoryRevision,
		Omissions:           mapList(v.Omissions, omissionAnswer),
		ContextTokens:       int64(v.ContextTokens),
		TokenBudget:         int64(v.TokenBudget),
		Tokenizer:           v.Tokenizer,
	}
}

func independenceAnswer(v schema.ReviewIndependence) catalogs.ReviewIndependence {
	return catalogs.ReviewIndependence{
		DifferentSession:  v.DifferentSession,
		DifferentProvider: v.DifferentProvider,
		FreshContext:      v.FreshContext,
		WriteAccess:       v.WriteAccess,
	}
}

func findingAnswer(v schema.ReviewFinding) catalogs.ReviewFinding {
	return catalogs.ReviewFinding{
		ID:       v.ID,
		Severity: v.Severity,
		Title:    v.Title,
		Detail:   v.Detail,
		File:     opt(v.File),
		Line:     ptrTo(v.Line, toInt64),
	}
}

func reviewAnswer(v workflow.Review) catalogs.Review {
	return catalogs.Review{
		ID:                 v.ID,
		WorkID:             v.WorkID,
		SubjectEvidenceIds: list(v.SubjectEvidenceIDs),
		ReviewerSessionID:  v.ReviewerSessionID,
		Independence:       independenceAnswer(v.Independence),
		Findings:           mapList(v.Findings, findingAnswer),
		Verdict:            v.Verdict,
		Provenance:         v.Provenance,
		EvidenceID:         opt(v.EvidenceID),
		CreatedAt:          v.CreatedAt,
	}
}

func commandAnswer(v workflow.CommandEvidence) catalogs.CommandEvidence {
	return catalogs.CommandEvidence{
		ID:              v.ID,
		Name:            v.Name,
		Command:         v.Command,
		CWD:             v.Cwd,
		StartedAt:       v.StartedAt,
		FinishedAt:      v.FinishedAt,
		DurationMs:      v.DurationMs,
		ExitCode:        ptrTo(v.ExitCode, toInt64),
		Signal:          v.Signal,
		TimedOut:        v.TimedOut,
		Stdout:          v.Stdout,
		Stderr:          v.Stderr,
		StdoutTruncated: v.StdoutTruncated,
		StderrTruncated: v.StderrTruncated,
		Error:           opt(v.Error),
	}
}

func gitAnswer(v workflow.GitFacts) catalogs.GitFacts {
	return catalogs.GitFacts{
		RepoRoot:        v.RepoRoot,
		Commit:          v.Commit,
		Branch:          v.Branch,
		Worktree:        v.Worktree,
		ChangedFiles:    list(v.ChangedFiles),
		Staged:          list(v.Staged),
		Unstaged:        list(v.Unstaged),
		Untracked:       list(v.Untracked),
		StatusTruncated: opt(v.StatusTruncated),
	}
}

func graphClaimAnswer(v workflow.GraphClaim) catalogs.GraphClaim {
	return catalogs.GraphClaim{
		ID:         v.ID,
		WorkID:     v.WorkID,
		SessionID:  v.SessionID,
		Resource:   v.Resource,
		Kind:       v.Kind,
		Mode:       v.Mode,
		Status:     v.Status,
		AcquiredAt: v.AcquiredAt,
		ExpiresAt:  v.ExpiresAt,
		ReleasedAt: v.ReleasedAt,
	}
}

func graphSessionAnswer(v workflow.GraphSession) catalogs.GraphSession {
	return catalogs.GraphSession{
		ID:            v.ID,
		Provider:      opt(v.Provider),
		NativeID:      opt(v.NativeID),
		CWD:           opt(v.Cwd),
		ParentSession: opt(v.ParentSession),
	}
}

func edgeAnswer(v workflow.Edge) catalogs.Edge {
	return catalogs.Edge{
		From: v.From,
		To:   v.To,
		Kind: v.Kind,
		Ref:  opt(v.Ref),
	}
}

func graphOmittedAnswer(v workflow.GraphOmitted) catalogs.GraphOmitted {
	return catalogs.GraphOmitted{
		Works:    int64(v.Works),
		Evidence: int64(v.Evidence),
		Handoffs: int64(v.Handoffs),
		Reviews:  int64(v.Reviews),
		Claims:   int64(v.Claims),
		Edges:    int64(v.Edges),
		AtLeast:  opt(v.AtLeast),
		Narrow:   opt(v.Narrow),
	}
}

func claimAnswer(v claims.Claim) catalogs.Claim {
	return catalogs.Claim{
		ID:         v.ID,
		WorkID:     v.WorkID,
		SessionID:  v.SessionID,
		Resource:   v.Resource,
		Kind:       string(v.Kind),
		Mode:       string(v.Mode),
		Status:     string(v.Status),
		AcquiredAt: timeText(v.AcquiredAt),
		ExpiresAt:  timeText(v.ExpiresAt),
		ReleasedAt: timePtr(v.ReleasedAt),
	}
}

func participantAnswer(v conversations.Participant) catalogs.Participant {
	return catalogs.Participant{
		ID:          v.ID,
		Provider:    v.Provider,
		NativeID:    v.NativeID,
		WorkspaceID: opt(v.WorkspaceID),
		Role:        opt(v.Role),
		JoinedAt:    timeText(v.JoinedAt),
	}
}

func messageAnswer(v conversations.Message) catalogs.Message {
	return catalogs.Message{
		ID:                v.ID,
		ConversationID:    v.ConversationID,
		Sequence:          v.Sequence,
		Sender:            v.Sender,
		Recipient:         v.Recipient,
		Text:              v.Text,
		ReplyTo:           opt(v.ReplyTo),
		CreatedAt:         timeText(v.CreatedAt),
		Delivery:          string(v.Delivery),
		DeliveryUnknownAt: timePtr(v.DeliveryUnknownAt),
		IdempotencyKey:    v.IdempotencyKey,
		OperationID:       v.OperationID,
		Receipt:           ptrTo(v.Receipt, receiptAnswer),
		TurnID:            opt(v.TurnID),
		ReplyToTurnID:     opt(v.ReplyToTurnID),
		TrimmedAt:         timePtr(v.TrimmedAt),
	}
}

func conversationAnswer(v conversations.Conversation) catalogs.Conversation {
	return catalogs.Conversation{
		ID:           v.ID,
		Title:        v.Title,
		Participants: mapList(v.Participants, participantAnswer),
		CreatedAt:    timeText(v.CreatedAt),
		UpdatedAt:    timeText(v.UpdatedAt),
		LastSequence: v.LastSequence,
		MessageCount: int64(v.MessageCount),
		Messages:     given(v.Messages != nil, func() []catalogs.Message { return mapList(v.Messages, messageAnswer) }),
	}
}

func reconcileResultAnswer(v conversations.ReconcileResult) catalogs.ReconcileResult {
	return catalogs.ReconcileResult{
		Message:          messageAnswer(v.Message),
		Resolved:         v.Resolved,
		PreviousDelivery: string(v.PreviousDelivery),
	}
}

func projectAnswer(v freebuff.Project) catalogs.Project {
	return catalogs.Project{
		ID:       v.ID,
		Path:     v.Path,
		Name:     opt(v.Name),
		Metadata: mapOpt(v.Metadata),
	}
}

func threadSummaryAnswer(v freebuff.ThreadSummary) catalogs.ThreadSummary {
	return catalogs.ThreadSummary{
		ID:        v.ID,
		ProjectID: opt(v.ProjectID),
		Title:     opt(v.Title),
		State:     opt(v.State),
		Model:     opt(v.Model),
		Metadata:  mapOpt(v.Metadata),
	}
}

func progressEventAnswer(v freebuff.ProgressEvent) catalogs.ProgressEvent {
	return catalogs.ProgressEvent{
		Sequence:  v.Sequence,
		ThreadID:  v.ThreadID,
		Timestamp: v.Timestamp,
		Kind:      v.Kind,
		Phase:     opt(v.Phase),
		State:     opt(v.State),
		Tool:      opt(v.Tool),
		Command:   opt(v.Command),
		Text:      opt(v.Text),
		Files:     nonEmpty(list(v.Files)),
		Error:     opt(v.Error),
		Raw:       v.Raw,
	}
}

func progressAnswer(v freebuff.ProgressSnapshot) catalogs.ProgressSnapshot {
	return catalogs.ProgressSnapshot{
		ThreadID:              v.ThreadID,
		CurrentState:          opt(v.CurrentState),
		Events:                mapList(v.Events, progressEventAnswer),
		NextSequence:          v.NextSequence,
		Next:                  v.Next,
		Connected:             v.Connected,
		Stale:                 v.Stale,
		LatestEventAt:         opt(v.LatestEventAt),
		ActiveTool:            opt(v.ActiveTool),
		FilesChanged:          nonEmpty(list(v.FilesChanged)),
		Phase:                 opt(v.Phase),
		LastMeaningfulUpdate:  opt(v.LastMeaningfulUpdate),
		LastError:             opt(v.LastError),
		SecondsSinceLastEvent: v.SecondsSinceLastEvent,
		Gap:                   ptrTo(v.Gap, progressGapAnswer),
	}
}

func activeThreadAnswer(v freebuff.ActiveThread) catalogs.ActiveThread {
	return catalogs.ActiveThread{
		ID:        v.ThreadSummary.ID,
		ProjectID: opt(v.ThreadSummary.ProjectID),
		Title:     opt(v.ThreadSummary.Title),
		State:     opt(v.ThreadSummary.State),
		Model:     opt(v.ThreadSummary.Model),
		Metadata:  mapOpt(v.ThreadSummary.Metadata),
		Live:      ptrTo(v.Live, progressAnswer),
	}
}

func verificationAnswer(v workflow.VerificationResult) catalogs.VerifyWorkItemOutput {
	return catalogs.VerifyWorkItemOutput{
		Commands:    mapList(v.Commands, commandAnswer),
		Git:         ptrTo(v.Git, gitAnswer),
		EvidenceIds: list(v.EvidenceIDs),
		WorkStatus:  v.WorkStatus,
	}
}

func reviewRequestAnswer(v workflow.ReviewRequest) catalogs.RequestReviewOutput {
	return catalogs.RequestReviewOutput{
		Handoff:  handoffAnswer(v.Handoff),
		Packet:   packetAnswer(v.Packet),
		Evidence: evidenceAnswer(v.Evidence),
		Receipt:  receiptAnswer(v.Receipt),
	}
}

func sendResultAnswer(v conversations.SendResult) catalogs.SendConversationMessageOutput {
	return catalogs.SendConversationMessageOutput{
		Message:  messageAnswer(v.Message),
		Receipt:  receiptAnswer(v.Receipt),
		Liveness: ptrTo(v.Liveness, livenessAnswer),
	}
}

func threadDetailAnswer(v freebuff.ThreadDetail) catalogs.GetThreadOutput {
	return catalogs.GetThreadOutput{
		ID:              v.ThreadSummary.ID,
		ProjectID:       opt(v.ThreadSummary.ProjectID),
		Title:           opt(v.ThreadSummary.Title),
		State:           opt(v.ThreadSummary.State),
		Model:           opt(v.ThreadSummary.Model),
		Metadata:        mapOpt(v.ThreadSummary.Metadata),
		Messages:        nonEmpty(list(v.Messages)),
		MessagesOmitted: opt(int64(v.MessagesOmitted)),
		ActiveWork:      v.ActiveWork,
		Live:            ptrTo(v.Live, progressAnswer),
	}
}

func conversationGapAnswer(v conversations.Gap) catalogs.Gap {
	return catalogs.Gap{From: v.From, To: v.To}
}

func progressGapAnswer(v freebuff.Gap) catalogs.Gap { return catalogs.Gap{From: v.From, To: v.To} }

func pendingPermissionAnswer(r providers.PermissionRequest, conflicts []claims.EditConflict) catalogs.PendingPermission {
	return catalogs.PendingPermission{
		Provider:    string(r.Provider),
		RequestID:   r.RequestID,
		NativeID:    r.NativeID,
		Method:      r.Method,
		Title:       opt(r.Title),
		Options:     mapList(r.Options, permissionOptionAnswer),
		RequestedAt: timeText(r.RequestedAt),
		Detail:      r.Detail,
		Paths:       nonEmpty(r.Paths),
		Conflicts:   nonEmpty(mapList(conflicts, editConflictAnswer)),
	}
}

// Paged answers: each carries the service page's own cut (paging.Cuttable),
// so the server's answer guard cuts the service's page, with its cursor,
// and maps the cut page again.

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

func graphAnswer(g workflow.Graph) *catalogs.GetWorkGraphOutput {
	return &catalogs.GetWorkGraphOutput{
		Works:                 mapList(g.Works, workAnswer),
		Evidence:              mapList(g.Evidence, evidenceMetaAnswer),
		Handoffs:              mapList(g.Handoffs, handoffAnswer),
		Reviews:               mapList(g.Reviews, reviewAnswer),
		Claims:                mapList(g.Claims, graphClaimAnswer),
		Sessions:              mapList(g.Sessions, graphSessionAnswer),
		Edges:                 mapList(g.Edges, edgeAnswer),
		Omitted:               graphOmittedAnswer(g.Omitted),
		StateRecoveryRequired: ptrTo(g.StateRecoveryRequired, recoveryAnswer),
		NextCursor:            opt(g.NextCursor),
		Cut:                   func(n int) *catalogs.GetWorkGraphOutput { return graphAnswer(g.CutPage(n).(workflow.Graph)) },
	}
}

func workListAnswer(l workflow.WorkList) *catalogs.ListWorkItemsOutput {
	return &catalogs.ListWorkItemsOutput{
		Works:      mapList(l.Works, workPreviewAnswer),
		NextCursor: opt(l.NextCursor),
		Cut:        func(n int) *catalogs.ListWorkItemsOutput { return workListAnswer(l.CutPage(n).(workflow.WorkList)) },
	}
}

func workDetailAnswer(d workflow.WorkDetail) *catalogs.GetWorkItemOutput {
	return &catalogs.GetWorkItemOutput{
		Work:       workAnswer(d.Work),
		Evidence:   mapList(d.Evidence, evidenceRecordAnswer),
		Handoffs:   mapList(d.Handoffs, handoffAnswer),
		Reviews:    mapList(d.Reviews, reviewAnswer),
		NextCursor: opt(d.NextCursor),
		Cut:        func(n int) *catalogs.GetWorkItemOutput { return workDetailAnswer(d.CutPage(n).(workflow.WorkDetail)) },
	}
}

func evidenceListAnswer(l workflow.EvidenceList) *catalogs.ListEvidenceOutput {
	return &catalogs.ListEvidenceOutput{
		Evidence:   mapList(l.Evidence, evidenceMetaAnswer),
		NextCursor: opt(l.NextCursor),
		Cut: func(n int) *catalogs.ListEvidenceOutput {
			return evidenceListAnswer(l.CutPage(n).(workflow.EvidenceList))
		},
	}
}

func claimPageAnswer(p claims.Page) *catalogs.ListClaimsOutput {
	return &catalogs.ListClaimsOutput{
		Claims:     mapList(p.Claims, claimAnswer),
		NextCursor: opt(p.NextCursor),
		Cut:        func(n int) *catalogs.ListClaimsOutput { return claimPageAnswer(p.CutPage(n).(claims.Page)) },
	}
}

func conversationListAnswer(l conversations.List) *catalogs.ListConversationsOutput {
	return &catalogs.ListConversationsOutput{
		Conversations: mapList(l.Conversations, conversationAnswer),
		NextCursor:    opt(l.NextCursor),
		Cut: func(n int) *catalogs.ListConversationsOutput {
			return conversationListAnswer(l.CutPage(n).(conversations.List))
		},
	}
}

func conversationPageAnswer(p conversations.Page) *catalogs.ReadConversationOutput {
	return &catalogs.ReadConversationOutput{
		Conversation:   conversationAnswer(p.Conversation),
		Messages:       mapList(p.Messages, messageAnswer),
		Next:           p.Next,
		LatestSequence: p.LatestSequence,
		Gap:            ptrTo(p.Gap, conversationGapAnswer),
		NextCursor:     opt(p.NextCursor),
		Cut: func(n int) *catalogs.ReadConversationOutput {
			return conversationPageAnswer(p.CutPage(n).(conversations.Page))
		},
	}
}

// Helpers.

// opt is a pointer to v, or nil for its zero value: a field the service
// leaves out when it is empty.
func opt[T comparable](v T) *T {
	var zero T
	if v == zero {
		return nil
	}
	return &v
}

// list is s, or an empty list for nil: a required list is never null.
func list[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// mapList converts every record of s; the result is never nil.
func mapList[S, D any](s []S, f func(S) D) []D {
	out := make([]D, len(s))
	for i, v := range s {
		out[i] = f(v)
	}
	return out
}

// nonEmpty is a pointer to s, or nil for an empty list: an optional list
// the service leaves out when it is empty.
func nonEmpty[T any](s []T) *[]T {
	if len(s) == 0 {
		return nil
	}
	return &s
}

// given is a pointer to build(), or nil when the value is not present.
func given[T any](present bool, build func() T) *T {
	if !present {
		return nil
	}
	v := build()
	return &v
}

// ptrTo converts *p, or is nil.
func ptrTo[S, D any](p *S, f func(S) D) *D {
	if p == nil {
		return nil
	}
	v := f(*p)
	return &v
}

func toInt64(v int) int64 { return int64(v) }

// timeText is t as encoding/json writes a time.Time (RFC 3339 with
// nanoseconds as needed).
func timeText(t time.Time) string { return t.Format(time.RFC3339Nano) }

func timePtr(t *time.Time) *string { return ptrTo(t, timeText) }

// rawOpt is raw, or nil when it is empty (left out).
func rawOpt(raw json.RawMessage) any {
	if len(raw) == 0 {
		return nil
	}
	return raw
}

// mapOpt is m, or nil when it is empty (left out).
func mapOpt(m map[string]any) any {
	if len(m) == 0 {
		return nil
	}
	return m
}
