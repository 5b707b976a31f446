package handlers

import (
	"github.com/agent-interop/runtime/catalogs"
	"github.com/agent-interop/runtime/ent/schema"
	"github.com/agent-interop/runtime/internal/claims"
	"github.com/agent-interop/runtime/internal/workflow"
)

// The answers of the work, evidence, handoff, review and claim tools.

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
