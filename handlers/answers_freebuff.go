package handlers

import (
	"github.com/agent-interop/runtime/catalogs"
	"github.com/agent-interop/runtime/internal/providers/freebuff"
)

// The answers of the Freebuff tools.

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

func progressGapAnswer(v freebuff.Gap) catalogs.Gap { return catalogs.Gap{From: v.From, To: v.To} }
