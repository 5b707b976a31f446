package workflow

import (
	"context"
	"sort"

	"github.com/agent-interop/runtime/ent"
	"github.com/agent-interop/runtime/ent/evidence"
	"github.com/agent-interop/runtime/ent/handoff"
	"github.com/agent-interop/runtime/ent/review"
	"github.com/agent-interop/runtime/ent/workitem"
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
	objective, err := requiredText("objective", in.Objective, maxObjective)
	if err != nil {
		return Work{}, err
	}
	criteria, err := textList("acceptanceCriteria", in.AcceptanceCriteria, maxListItems, maxItemText)
	if err != nil {
		return Work{}, err
	}
	if len(criteria) == 0 {
		return Work{}, invalid("Work requires at least one acceptance criterion")
	}
	source, err := optionalText("sourceSession", in.SourceSession, maxSessionLen)
	if err != nil {
		return Work{}, err
	}
	risks, err := textList("risks", in.Risks, maxListItems, maxItemText)
	if err != nil {
		return Work{}, err
	}
	questions, err := textList("unresolvedQuestions", in.UnresolvedQuestions, maxListItems, maxItemText)
	if err != nil {
		return Work{}, err
	}
	deps, err := idList("dependsOn", in.DependsOn, maxListItems)
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
		out = toWork(w) // a new work has no evidence yet
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

// ListWorks returns every work item as a preview, most recently updated
// first.
func (s *Service) ListWorks(ctx context.Context) (WorkList, error) {
	out := WorkList{Works: []WorkPreview{}}
	err := s.st.Read(ctx, func(tx *ent.Tx) error {
		rows, err := withWorkEdges(tx.WorkItem.Query()).Order(workNewestFirst()...).All(ctx)
		if err != nil {
			return wrapStore("list works", err)
		}
		for _, w := range rows {
			out.Works = append(out.Works, toWorkPreview(w))
		}
		return nil
	})
	return out, err
}

// GetWork returns one work item with its evidence (full records), handoffs
// and reviews, each newest first.
func (s *Service) GetWork(ctx context.Context, workID string) (WorkDetail, error) {
	var out WorkDetail
	err := s.st.Read(ctx, func(tx *ent.Tx) error {
		w, err := loadWork(ctx, tx, workID)
		if err != nil {
			return err
		}
		out.Work = toWork(w)
		ev, err := tx.Evidence.Query().Where(evidence.WorkID(workID)).Order(evidenceNewestFirst()...).All(ctx)
		if err != nil {
			return wrapStore("read work evidence", err)
		}
		hs, err := tx.Handoff.Query().Where(handoff.WorkID(workID)).Order(handoffNewestFirst()...).All(ctx)
		if err != nil {
			return wrapStore("read work handoffs", err)
		}
		rs, err := tx.Review.Query().Where(review.WorkID(workID)).Order(reviewNewestFirst()...).All(ctx)
		if err != nil {
			return wrapStore("read work reviews", err)
		}
		out.Evidence = make([]Evidence, len(ev))
		for i, e := range ev {
			out.Evidence[i] = toEvidence(e)
		}
		out.Handoffs = make([]Handoff, len(hs))
		for i, h := range hs {
			out.Handoffs[i] = toHandoff(h)
		}
		out.Reviews = make([]Review, len(rs))
		for i, r := range rs {
			out.Reviews[i] = toReview(r)
		}
		return nil
	})
	return out, err
}
