package workflow

import (
	"context"
	"encoding/json"
	"slices"
	"sort"
	"strings"

	"entgo.io/ent/dialect"
	"entgo.io/ent/dialect/sql"

	"github.com/agent-interop/runtime/ent"
	"github.com/agent-interop/runtime/ent/evidence"
	"github.com/agent-interop/runtime/ent/handoff"
	"github.com/agent-interop/runtime/ent/review"
	"github.com/agent-interop/runtime/ent/workitem"
	"github.com/agent-interop/runtime/internal/paging"
)

// This file maps ent rows to the upstream-shaped result structs.

// MaxEmbeddedEvidenceIDs bounds the evidence IDs a work record embeds:
// a work with more lists its newest ones and says how many there are.
const MaxEmbeddedEvidenceIDs = 50

// loadDependsOn sets w.Edges.DependsOn of every work to the works it
// depends on (IDs only, ascending; at most 100 per work, fixed at
// creation), read from the dependency table's primary key alone: one
// statement per paging.ChunkSize works, the works table not joined.
// Evidence IDs are loaded by embedEvidenceIDs, bounded per work.
//
// With direct (SQLite, see direct.go), the statement runs on the
// transaction itself and its rows are scanned into two strings: ent's
// Scan into a struct slice costs about twelve allocations a row through
// reflection, this about two (the column texts). The node of each
// dependency is allocated once per call, in one slice.
func loadDependsOn(ctx context.Context, tx *ent.Tx, direct bool, works []*ent.WorkItem) error {
	if len(works) == 0 {
		return nil
	}
	byID := make(map[string]*ent.WorkItem, len(works))
	ids := make([]string, 0, len(works))
	for _, w := range works {
		w.Edges.DependsOn = nil
		if _, dup := byID[w.ID]; !dup {
			byID[w.ID] = w
			ids = append(ids, w.ID)
		}
	}
	edges := make([]dependsOnEdge, 0, len(ids)) // about one dependency a work
	for _, chunk := range paging.Chunks(ids, paging.ChunkSize) {
		var err error
		if edges, err = readDependsOn(ctx, tx, direct, chunk, edges); err != nil {
			return wrapStore("read dependencies", err)
		}
	}
	nodes := make([]ent.WorkItem, len(edges))
	for i, e := range edges {
		if w := byID[e.From]; w != nil {
			nodes[i].ID = e.To
			w.Edges.DependsOn = append(w.Edges.DependsOn, &nodes[i])
		}
	}
	return nil
}

// dependsOnEdge is one row of the dependency table.
type dependsOnEdge struct {
	From string `sql:"dep_from"`
	To   string `sql:"dep_to"`
}

// readDependsOn appends the dependency rows of the works ids to edges,
// ordered by (from, to).
func readDependsOn(ctx context.Context, tx *ent.Tx, direct bool, ids []string, edges []dependsOnEdge) ([]dependsOnEdge, error) {
	from, to := workitem.DependsOnPrimaryKey[0], workitem.DependsOnPrimaryKey[1]
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	sel := func(s *sql.Selector) {
		t := sql.Table(workitem.DependsOnTable)
		s.From(t) // the dependency table alone: its key holds both columns
		s.Select(sql.As(t.C(from), "dep_from"), sql.As(t.C(to), "dep_to"))
		s.Where(sql.In(t.C(from), args...))
		s.OrderBy(t.C(from), t.C(to))
	}
	if !direct {
		var rows []dependsOnEdge
		if err := tx.WorkItem.Query().Modify(sel).Scan(ctx, &rows); err != nil {
			return edges, err
		}
		return append(edges, rows...), nil
	}
	s := sql.Dialect(dialect.SQLite).Select()
	sel(s)
	rows, err := directQuery(ctx, tx, s)
	if err != nil {
		return edges, err
	}
	defer rows.Close()
	var e dependsOnEdge // scanned into in place: one of it, not one a row
	for rows.Next() {
		if err := rows.Scan(&e.From, &e.To); err != nil {
			return edges, err
		}
		edges = append(edges, e)
	}
	return edges, rows.Err()
}

// evidenceCounts carries, per work, the evidence count of a work whose
// embedded IDs were capped.
type evidenceCounts map[string]int

// embedEvidenceIDs loads each work's newest MaxEmbeddedEvidenceIDs
// evidence IDs into w.Edges.Evidence (oldest first, as 0.3.x lists them)
// and returns the totals of the works that have more. One query serves the
// whole page when its works hold few records together (the common case);
// otherwise each work is read with its own bounded range scan, so a work
// with a huge history never costs more than a page of it. direct (SQLite,
// see direct.go) runs the page's query on the transaction itself.
func embedEvidenceIDs(ctx context.Context, tx *ent.Tx, direct bool, works []*ent.WorkItem) (evidenceCounts, error) {
	counts := evidenceCounts{}
	if len(works) == 0 {
		return counts, nil
	}
	ids := make([]string, len(works))
	for i, w := range works {
		ids[i] = w.ID
	}
	bound := MaxEmbeddedEvidenceIDs * len(works)
	var rows []*ent.Evidence
	var err error
	if direct {
		rows, err = evidenceIDsDirect(ctx, tx, ids, bound)
	} else {
		rows, err = tx.Evidence.Query().Where(evidence.WorkIDIn(ids...)).
			Select(evidence.FieldID, evidence.FieldWorkID, evidence.FieldCapturedAt).Limit(bound + 1).All(ctx)
	}
	if err != nil {
		return nil, wrapStore("read evidence ids", err)
	}
	if len(rows) <= bound {
		byWork := map[string][]*ent.Evidence{}
		for _, e := range rows {
			byWork[*e.WorkID] = append(byWork[*e.WorkID], e)
		}
		for _, w := range works {
			list := byWork[w.ID]
			sort.Slice(list, func(i, j int) bool {
				if !list[i].CapturedAt.Equal(list[j].CapturedAt) {
					return list[i].CapturedAt.Before(list[j].CapturedAt)
				}
				return list[i].ID < list[j].ID
			})
			if n := len(list); n > MaxEmbeddedEvidenceIDs {
				counts[w.ID] = n
				list = list[n-MaxEmbeddedEvidenceIDs:]
			}
			w.Edges.Evidence = list
		}
		return counts, nil
	}
	for _, w := range works {
		rows, err := tx.Evidence.Query().Where(evidence.WorkID(w.ID)).
			Select(evidence.FieldID, evidence.FieldWorkID, evidence.FieldCapturedAt).
			Order(evidenceNewestFirst()...).Limit(MaxEmbeddedEvidenceIDs + 1).All(ctx)
		if err != nil {
			return nil, wrapStore("read evidence ids of "+w.ID, err)
		}
		if len(rows) > MaxEmbeddedEvidenceIDs {
			rows = rows[:MaxEmbeddedEvidenceIDs]
			n, err := tx.Evidence.Query().Where(evidence.WorkID(w.ID)).Count(ctx)
			if err != nil {
				return nil, wrapStore("count evidence of "+w.ID, err)
			}
			counts[w.ID] = n
		}
		slices.Reverse(rows)
		w.Edges.Evidence = rows
	}
	return counts, nil
}

func toWork(w *ent.WorkItem, counts evidenceCounts) Work {
	return Work{
		EvidenceCount:       counts[w.ID],
		ID:                  w.ID,
		Objective:           w.Objective,
		AcceptanceCriteria:  nonNil(w.AcceptanceCriteria),
		SourceSession:       w.SourceSession,
		DestinationSession:  w.DestinationSession,
		Status:              string(w.Status),
		ChangedFiles:        nonNil(w.ChangedFiles),
		Risks:               nonNil(w.Risks),
		UnresolvedQuestions: nonNil(w.UnresolvedQuestions),
		EvidenceIDs:         evidenceIDs(w.Edges.Evidence),
		DependsOn:           workIDs(w.Edges.DependsOn),
		CreatedAt:           Timestamp(w.CreatedAt),
		UpdatedAt:           Timestamp(w.UpdatedAt),
	}
}

func toWorkPreview(w *ent.WorkItem, counts evidenceCounts) WorkPreview {
	return WorkPreview{
		EvidenceCount:           counts[w.ID],
		ID:                      w.ID,
		SourceSession:           w.SourceSession,
		DestinationSession:      w.DestinationSession,
		Status:                  string(w.Status),
		ChangedFiles:            nonNil(w.ChangedFiles),
		EvidenceIDs:             evidenceIDs(w.Edges.Evidence),
		DependsOn:               workIDs(w.Edges.DependsOn),
		CreatedAt:               Timestamp(w.CreatedAt),
		UpdatedAt:               Timestamp(w.UpdatedAt),
		ObjectivePreview:        preview(w.Objective, previewChars),
		AcceptanceCriteriaCount: len(w.AcceptanceCriteria),
	}
}

func evidenceIDs(rows []*ent.Evidence) []string {
	ids := make([]string, len(rows))
	for i, e := range rows {
		ids[i] = e.ID
	}
	return ids
}

func workIDs(rows []*ent.WorkItem) []string {
	if len(rows) == 0 {
		return nil
	}
	ids := make([]string, len(rows))
	for i, w := range rows {
		ids[i] = w.ID
	}
	return ids
}

func toEvidence(e *ent.Evidence) Evidence {
	return Evidence{
		ID:          e.ID,
		WorkID:      e.WorkID,
		SessionID:   e.SessionID,
		Kind:        string(e.Kind),
		Trust:       string(e.Trust),
		Source:      e.Source,
		CapturedAt:  Timestamp(e.CapturedAt),
		Summary:     e.Summary,
		Data:        json.RawMessage(e.Data),
		ContentHash: e.ContentHash,
	}
}

// toEvidenceRecord is metadata, plus the data when full is set.
func toEvidenceRecord(e *ent.Evidence, full bool) EvidenceRecord {
	r := EvidenceRecord{EvidenceMeta: toEvidenceMeta(e)}
	if full {
		r.Data = json.RawMessage(e.Data)
		r.DataBytes = len(e.Data)
	}
	return r
}

func toEvidenceMeta(e *ent.Evidence) EvidenceMeta {
	return EvidenceMeta{
		ID:          e.ID,
		WorkID:      e.WorkID,
		SessionID:   e.SessionID,
		Kind:        string(e.Kind),
		Trust:       string(e.Trust),
		Source:      e.Source,
		CapturedAt:  Timestamp(e.CapturedAt),
		Summary:     e.Summary,
		ContentHash: e.ContentHash,
		DataBytes:   e.DataBytes,
	}
}

func toHandoff(h *ent.Handoff) Handoff {
	var cs *string
	if h.ContinuationState != nil {
		v := string(*h.ContinuationState)
		cs = &v
	}
	return Handoff{
		ID:                  h.ID,
		WorkID:              h.WorkID,
		SourceSession:       h.SourceSession,
		DestinationSession:  h.DestinationSession,
		Objective:           h.Objective,
		AcceptanceCriteria:  nonNil(h.AcceptanceCriteria),
		EvidenceIDs:         nonNil(h.EvidenceIds),
		ChangedFiles:        nonNil(h.ChangedFiles),
		Risks:               nonNil(h.Risks),
		UnresolvedQuestions: nonNil(h.UnresolvedQuestions),
		AuthorityBoundaries: nonNil(h.AuthorityBoundaries),
		ContinuationState:   cs,
		LatestValidation:    h.LatestValidation,
		Assumptions:         h.Assumptions,
		RollbackNotes:       h.RollbackNotes,
		NextAction:          h.NextAction,
		RepositoryRevision:  h.RepositoryRevision,
		Status:              string(h.Status),
		ContextTokens:       h.ContextTokens,
		TokenBudget:         h.TokenBudget,
		OmittedFields:       nonNil(h.OmittedFields),
		CreatedAt:           Timestamp(h.CreatedAt),
		UpdatedAt:           Timestamp(h.UpdatedAt),
	}
}

func toReview(r *ent.Review) Review {
	ev := ""
	if r.EvidenceID != nil {
		ev = *r.EvidenceID
	}
	findings := r.Findings
	if findings == nil {
		findings = []Finding{}
	}
	return Review{
		ID:                 r.ID,
		WorkID:             r.WorkID,
		SubjectEvidenceIDs: nonNil(r.SubjectEvidenceIds),
		ReviewerSessionID:  r.ReviewerSessionID,
		Independence:       r.Independence,
		Findings:           findings,
		Verdict:            string(r.Verdict),
		Provenance:         string(r.Provenance),
		EvidenceID:         ev,
		CreatedAt:          Timestamp(r.CreatedAt),
	}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// loadWork reads one work item with its edges, or Unknown work.
func loadWork(ctx context.Context, tx *ent.Tx, id string) (*ent.WorkItem, error) {
	if strings.TrimSpace(id) == "" {
		return nil, invalid("workId must not be blank")
	}
	w, err := tx.WorkItem.Query().Where(workitem.ID(id)).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, unknownWork(id)
	}
	if err != nil {
		return nil, wrapStore("read work "+id, err)
	}
	if err := loadDependsOn(ctx, tx, false, []*ent.WorkItem{w}); err != nil {
		return nil, err
	}
	return w, nil
}

// Orderings used by every list: newest first, ID as the tie-breaker (IDs
// of one process are time-ordered).
func evidenceNewestFirst() []evidence.OrderOption {
	return []evidence.OrderOption{evidence.ByCapturedAt(sql.OrderDesc()), evidence.ByID(sql.OrderDesc())}
}

func handoffNewestFirst() []handoff.OrderOption {
	return []handoff.OrderOption{handoff.ByCreatedAt(sql.OrderDesc()), handoff.ByID(sql.OrderDesc())}
}

func reviewNewestFirst() []review.OrderOption {
	return []review.OrderOption{review.ByCreatedAt(sql.OrderDesc()), review.ByID(sql.OrderDesc())}
}

func workNewestFirst() []workitem.OrderOption {
	return []workitem.OrderOption{workitem.ByUpdatedAt(sql.OrderDesc()), workitem.ByID(sql.OrderDesc())}
}

// evidenceMetaFields are every evidence column except data.
func evidenceMetaFields() []string {
	return []string{
		evidence.FieldID, evidence.FieldWorkID, evidence.FieldSessionID, evidence.FieldKind,
		evidence.FieldTrust, evidence.FieldSource, evidence.FieldCapturedAt, evidence.FieldSummary,
		evidence.FieldDataBytes, evidence.FieldContentHash,
	}
}
