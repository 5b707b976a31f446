package workflow

import (
	"context"
	"slices"
	"sort"
	"strings"
	"time"

	"entgo.io/ent/dialect/sql"

	"github.com/agent-interop/runtime/catalogs/limits"
	"github.com/agent-interop/runtime/ent"
	"github.com/agent-interop/runtime/ent/evidence"
	"github.com/agent-interop/runtime/ent/handoff"
	"github.com/agent-interop/runtime/ent/predicate"
	"github.com/agent-interop/runtime/ent/review"
	"github.com/agent-interop/runtime/ent/workitem"
	"github.com/agent-interop/runtime/internal/paging"
)

// CreateWorkInput is create_work_item's argument.
type CreateWorkInput struct {
	Objective           string
	AcceptanceCriteria  []string
	SourceSession       *string
	Risks               []string
	UnresolvedQuestions []string
	// DependsOn lists existing work IDs this work waits for.
	DependsOn []string
}

// CreateWork validates and stores a new work item with status open.
//
// Dependencies must name existing works. Because a new work can only point
// at works that already exist and dependency edges are never added later,
// the depends_on graph cannot contain a cycle.
func (s *Service) CreateWork(ctx context.Context, in CreateWorkInput) (Work, error) {
	objective, err := requiredText("objective", in.Objective, limits.CreateWorkItemObjectiveMaxLen)
	if err != nil {
		return Work{}, err
	}
	criteria, err := textList("acceptanceCriteria", in.AcceptanceCriteria, limits.CreateWorkItemAcceptanceCriteriaMaxItems, limits.CreateWorkItemAcceptanceCriteriaItemMaxLen)
	if err != nil {
		return Work{}, err
	}
	if len(criteria) == 0 {
		return Work{}, invalid("Work requires at least one acceptance criterion")
	}
	source, err := optionalText("sourceSession", in.SourceSession, limits.CreateWorkItemSourceSessionMaxLen)
	if err != nil {
		return Work{}, err
	}
	risks, err := textList("risks", in.Risks, limits.CreateWorkItemRisksMaxItems, limits.CreateWorkItemRisksItemMaxLen)
	if err != nil {
		return Work{}, err
	}
	questions, err := textList("unresolvedQuestions", in.UnresolvedQuestions, limits.CreateWorkItemUnresolvedQuestionsMaxItems, limits.CreateWorkItemUnresolvedQuestionsItemMaxLen)
	if err != nil {
		return Work{}, err
	}
	deps, err := idList("dependsOn", in.DependsOn, limits.CreateWorkItemDependsOnMaxItems, limits.CreateWorkItemDependsOnItemMaxLen)
	if err != nil {
		return Work{}, err
	}

	now := s.now()
	id := s.ids.next("work", now)
	var out Work
	err = s.st.Tx(ctx, func(tx *ent.Tx) error {
		if err := requireWorks(ctx, tx, deps, " in dependsOn"); err != nil {
			return err
		}
		create := tx.WorkItem.Create().
			SetID(id).
			SetObjective(objective).
			SetAcceptanceCriteria(criteria).
			SetNillableSourceSession(source).
			SetStatus(workitem.StatusOpen).
			SetRisks(risks).
			SetUnresolvedQuestions(questions).
			SetChangedFiles([]string{}).
			SetCreatedAt(now).
			SetUpdatedAt(now).
			AddDependsOnIDs(deps...)
		w, err := create.Save(ctx)
		if err != nil {
			return wrapStore("create work", err)
		}
		out = toWork(w, nil) // a new work has no evidence yet
		if len(deps) > 0 {
			out.DependsOn = append([]string(nil), deps...)
			sort.Strings(out.DependsOn)
		}
		return nil
	})
	return out, err
}

// requireWorks fails with "Unknown work <id><where>" for the first ID that
// does not exist.
func requireWorks(ctx context.Context, tx *ent.Tx, ids []string, where string) error {
	if len(ids) == 0 {
		return nil
	}
	found, err := tx.WorkItem.Query().Where(workitem.IDIn(ids...)).IDs(ctx)
	if err != nil {
		return wrapStore("check work ids", err)
	}
	have := make(map[string]bool, len(found))
	for _, id := range found {
		have[id] = true
	}
	for _, id := range ids {
		if !have[id] {
			return notFound("Unknown work %s%s", id, where)
		}
	}
	return nil
}

// WorkFilter narrows a listing of works. Zero fields do not filter.
type WorkFilter struct {
	// Status keeps works in one status.
	Status string
	// Session keeps works whose source or destination session it is.
	Session string
	// UpdatedSince keeps works updated at or after it.
	UpdatedSince *time.Time
}

func (f WorkFilter) paging() paging.Filter {
	return paging.F("status", f.Status, "session", f.Session, "updatedSince", sinceKey(f.UpdatedSince))
}

// ListWorksInput is list_work_items' argument.
type ListWorksInput struct {
	WorkFilter
	// Limit is the page size (0 means DefaultListLimit).
	Limit int64
	// Cursor is a nextCursor of an earlier page of the same filter.
	Cursor string
}

func workCursor(f paging.Filter, updatedAt, id string) string {
	return paging.Encode(toolListWorks, f, updatedAt, id)
}

// ListWorks returns one page of work previews, most recently updated first
// (ID descending among equal times), and the cursor of the next page while
// more exist. Pages are keyset pages on (updated_at, id): works created
// while a caller pages appear before its cursor, never twice; a work
// updated meanwhile moves to the front.
func (s *Service) ListWorks(ctx context.Context, in ListWorksInput) (WorkList, error) {
	limit, err := paging.Limit(toolListWorks, in.Limit, DefaultWorksLimit, MaxPageLimit)
	if err != nil {
		return WorkList{}, err
	}
	if err := checkStatus(toolListWorks, in.Status); err != nil {
		return WorkList{}, err
	}
	f := in.WorkFilter.paging()
	after, err := decodeTimeKey(toolListWorks, f, in.Cursor)
	if err != nil {
		return WorkList{}, err
	}
	out := WorkList{Works: []WorkPreview{}, filter: f}
	err = s.st.Read(ctx, func(tx *ent.Tx) error {
		rows, more, err := pageWorks(ctx, tx, in.WorkFilter, after, limit, s.directSQL, previewFields...)
		if err != nil {
			return err
		}
		counts, err := embedEvidenceIDs(ctx, tx, s.directSQL, rows)
		if err != nil {
			return err
		}
		out.Works = make([]WorkPreview, 0, len(rows))
		for _, w := range rows {
			out.Works = append(out.Works, toWorkPreview(w, counts))
		}
		if more {
			last := out.Works[len(out.Works)-1]
			out.NextCursor = workCursor(f, last.UpdatedAt, last.ID)
		}
		return nil
	})
	return out, err
}

// checkStatus refuses a status filter that is not a work status.
func checkStatus(tool, status string) error {
	if status == "" || workitem.StatusValidator(workitem.Status(status)) == nil {
		return nil
	}
	return paging.Invalid(tool, "status", "must be one of open, in_progress, blocked, accepted, rejected")
}

// previewFields are the columns toWorkPreview reads: a listing does not
// read (nor decode) a work's risks and questions.
var previewFields = []string{
	workitem.FieldID, workitem.FieldObjective, workitem.FieldAcceptanceCriteria, workitem.FieldSourceSession,
	workitem.FieldDestinationSession, workitem.FieldStatus, workitem.FieldChangedFiles, workitem.FieldCreatedAt, workitem.FieldUpdatedAt,
}

// pageWorks reads up to limit works after the keyset position, newest
// first, and reports whether more follow; fields, when given, are the only
// columns read (the others are left zero). Every branch is one range scan
// of an index on (filter column, updated_at, id); a session filter is two
// such scans (source and destination session) merged here, so no query
// reads more than limit+1 rows. Dependency IDs are loaded for the page's
// works only. direct (SQLite only, see direct.go) runs the same
// statements on the transaction itself and reads previewFields.
func pageWorks(ctx context.Context, tx *ent.Tx, f WorkFilter, after timeKey, limit int, direct bool, fields ...string) ([]*ent.WorkItem, bool, error) {
	read := func(preds []predicate.WorkItem) ([]*ent.WorkItem, error) {
		if direct {
			return pageWorksDirect(ctx, tx, preds, limit)
		}
		q := tx.WorkItem.Query().Where(preds...).Order(workNewestFirst()...).Limit(limit + 1)
		if len(fields) > 0 {
			q.Select(fields...) // sets the query's columns
		}
		return q.All(ctx)
	}
	var preds []predicate.WorkItem
	if f.Status != "" {
		preds = append(preds, workitem.StatusEQ(workitem.Status(f.Status)))
	}
	if f.UpdatedSince != nil {
		preds = append(preds, workitem.UpdatedAtGTE(*f.UpdatedSince))
	}
	if after.set() {
		preds = append(preds, func(s *sql.Selector) {
			s.Where(sql.CompositeLT([]string{s.C(workitem.FieldUpdatedAt), s.C(workitem.FieldID)}, after.at, after.id))
		})
	}
	var rows []*ent.WorkItem
	if f.Session == "" {
		r, err := read(preds)
		if err != nil {
			return nil, false, wrapStore("list works", err)
		}
		rows = r
	} else {
		src, err := read(append(slices.Clip(preds), workitem.SourceSession(f.Session)))
		if err != nil {
			return nil, false, wrapStore("list works", err)
		}
		dst, err := read(append(slices.Clip(preds), workitem.DestinationSession(f.Session)))
		if err != nil {
			return nil, false, wrapStore("list works", err)
		}
		rows = mergeNewest(src, dst)
	}
	more := len(rows) > limit
	if more {
		rows = rows[:limit]
	}
	if err := loadDependsOn(ctx, tx, direct, rows); err != nil {
		return nil, false, err
	}
	return rows, more, nil
}

// mergeNewest merges two newest-first lists of works, dropping duplicates.
func mergeNewest(a, b []*ent.WorkItem) []*ent.WorkItem {
	out := make([]*ent.WorkItem, 0, len(a)+len(b))
	seen := map[string]bool{}
	for len(a) > 0 || len(b) > 0 {
		var w *ent.WorkItem
		switch {
		case len(b) == 0 || (len(a) > 0 && newerWork(a[0], b[0])):
			w, a = a[0], a[1:]
		default:
			w, b = b[0], b[1:]
		}
		if !seen[w.ID] {
			seen[w.ID] = true
			out = append(out, w)
		}
	}
	return out
}

func newerWork(a, b *ent.WorkItem) bool {
	if !a.UpdatedAt.Equal(b.UpdatedAt) {
		return a.UpdatedAt.After(b.UpdatedAt)
	}
	return a.ID > b.ID
}

// GetWorkInput is get_work_item's argument.
type GetWorkInput struct {
	WorkID string
	// Limit is the page size of each kind of related record (0 means
	// DefaultWorkLimit).
	Limit int64
	// Cursor is a nextCursor of an earlier page of the same work.
	Cursor string
	// FullEvidence answers evidence with its data (the 0.3.x work_get
	// shape) instead of metadata.
	FullEvidence bool
}

// Related-record kinds of a work, in the order a page lists them.
const (
	relEvidence = iota
	relHandoffs
	relReviews
)

// doneKey marks a kind whose records were all delivered.
const doneKey = "done"

// GetWork returns one work item in full with a page of each kind of
// related record (evidence metadata, handoffs, reviews), each newest first.
// NextCursor, while any kind has more, returns the next page of every kind
// that has more.
func (s *Service) GetWork(ctx context.Context, in GetWorkInput) (WorkDetail, error) {
	limit, err := paging.Limit(toolGetWork, in.Limit, DefaultWorkLimit, MaxPageLimit)
	if err != nil {
		return WorkDetail{}, err
	}
	f := paging.F("workId", in.WorkID)
	keys, err := paging.Decode(toolGetWork, f, in.Cursor, 3)
	if err != nil {
		return WorkDetail{}, err
	}
	var after [3]timeKey
	var start [3]string
	for i := range keys {
		start[i] = keys[i]
		if keys[i] == "" || keys[i] == doneKey {
			continue
		}
		t, id, ok := strings.Cut(keys[i], "|")
		at, err := parseKeyTime(toolGetWork, t)
		if !ok || err != nil || id == "" {
			return WorkDetail{}, paging.Invalid(toolGetWork, "cursor", "is malformed; pass nextCursor back unchanged or omit cursor")
		}
		after[i] = timeKey{at: at, id: id}
	}
	out := WorkDetail{Evidence: []EvidenceRecord{}, Handoffs: []Handoff{}, Reviews: []Review{}, workID: in.WorkID, after: start}
	err = s.st.Read(ctx, func(tx *ent.Tx) error {
		w, err := loadWork(ctx, tx, in.WorkID)
		if err != nil {
			return err
		}
		counts, err := embedEvidenceIDs(ctx, tx, false, []*ent.WorkItem{w})
		if err != nil {
			return err
		}
		out.Work = toWork(w, counts)
		if start[relEvidence] != doneKey {
			q := tx.Evidence.Query().Where(evidence.WorkID(in.WorkID))
			if k := after[relEvidence]; k.set() {
				q = q.Where(keysetBefore(evidence.FieldCapturedAt, evidence.FieldID, k))
			}
			q = q.Order(evidenceNewestFirst()...).Limit(limit + 1)
			var rows []*ent.Evidence
			if in.FullEvidence {
				rows, err = q.All(ctx)
			} else {
				rows, err = q.Select(evidenceMetaFields()...).All(ctx)
			}
			if err != nil {
				return wrapStore("read work evidence", err)
			}
			out.more[relEvidence] = len(rows) > limit
			for _, e := range rows[:min(len(rows), limit)] {
				out.Evidence = append(out.Evidence, toEvidenceRecord(e, in.FullEvidence))
			}
		}
		if start[relHandoffs] != doneKey {
			q := tx.Handoff.Query().Where(handoff.WorkID(in.WorkID))
			if k := after[relHandoffs]; k.set() {
				q = q.Where(keysetBefore(handoff.FieldCreatedAt, handoff.FieldID, k))
			}
			rows, err := q.Order(handoffNewestFirst()...).Limit(limit + 1).All(ctx)
			if err != nil {
				return wrapStore("read work handoffs", err)
			}
			out.more[relHandoffs] = len(rows) > limit
			for _, h := range rows[:min(len(rows), limit)] {
				out.Handoffs = append(out.Handoffs, toHandoff(h))
			}
		}
		if start[relReviews] != doneKey {
			q := tx.Review.Query().Where(review.WorkID(in.WorkID))
			if k := after[relReviews]; k.set() {
				q = q.Where(keysetBefore(review.FieldCreatedAt, review.FieldID, k))
			}
			rows, err := q.Order(reviewNewestFirst()...).Limit(limit + 1).All(ctx)
			if err != nil {
				return wrapStore("read work reviews", err)
			}
			out.more[relReviews] = len(rows) > limit
			for _, r := range rows[:min(len(rows), limit)] {
				out.Reviews = append(out.Reviews, toReview(r))
			}
		}
		out.NextCursor = out.cursor(len(out.Evidence), len(out.Handoffs), len(out.Reviews))
		return nil
	})
	return out, err
}

// keysetBefore is the newest-first keyset condition (t, id) < (k.at, k.id)
// as one row-value comparison, which SQLite and PostgreSQL answer with a
// range scan of an index on (…, t, id).
func keysetBefore(timeCol, idCol string, k timeKey) func(*sql.Selector) {
	return func(s *sql.Selector) {
		s.Where(sql.CompositeLT([]string{s.C(timeCol), s.C(idCol)}, k.at, k.id))
	}
}

// cursor is the nextCursor of a detail page that keeps the first kept[i]
// records of each kind, or "" when nothing is left.
func (d WorkDetail) cursor(kept ...int) string {
	var keys [3]string
	left := false
	for i, n := range kept {
		got := [3]int{len(d.Evidence), len(d.Handoffs), len(d.Reviews)}[i]
		switch {
		case d.after[i] == doneKey:
			keys[i] = doneKey
		case n == 0 && got > 0:
			keys[i] = d.after[i] // nothing of this kind kept: start where this page did
			left = true
		case n < got || d.more[i]:
			keys[i] = d.lastKey(i, n)
			left = true
		default:
			keys[i] = doneKey
		}
	}
	if !left {
		return ""
	}
	return paging.Encode(toolGetWork, paging.F("workId", d.workID), keys[:]...)
}

func (d WorkDetail) lastKey(kind, n int) string {
	switch kind {
	case relEvidence:
		e := d.Evidence[n-1]
		return e.CapturedAt + "|" + e.ID
	case relHandoffs:
		h := d.Handoffs[n-1]
		return h.CreatedAt + "|" + h.ID
	default:
		r := d.Reviews[n-1]
		return r.CreatedAt + "|" + r.ID
	}
}

// PageLen implements paging.Cuttable: the related records of all kinds.
func (d WorkDetail) PageLen() int { return len(d.Evidence) + len(d.Handoffs) + len(d.Reviews) }

// CutPage implements paging.Cuttable: it keeps the first n related records
// in page order (evidence, then handoffs, then reviews).
func (d WorkDetail) CutPage(n int) any {
	ne := min(n, len(d.Evidence))
	nh := min(n-ne, len(d.Handoffs))
	nr := min(n-ne-nh, len(d.Reviews))
	d.NextCursor = d.cursor(ne, nh, nr)
	d.Evidence, d.Handoffs, d.Reviews = d.Evidence[:ne], d.Handoffs[:nh], d.Reviews[:nr]
	return d
}
