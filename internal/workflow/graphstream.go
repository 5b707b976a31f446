package workflow

import (
	"context"
	"sort"
	"time"

	"entgo.io/ent/dialect/sql"

	"github.com/agent-interop/runtime/ent"
	"github.com/agent-interop/runtime/ent/claim"
	"github.com/agent-interop/runtime/ent/evidence"
	"github.com/agent-interop/runtime/ent/handoff"
	"github.com/agent-interop/runtime/ent/review"
	"github.com/agent-interop/runtime/ent/workitem"
	"github.com/agent-interop/runtime/internal/paging"
	"github.com/agent-interop/runtime/internal/store"
)

// GraphSink receives the whole-store graph one record at a time (see
// StreamGraph). A non-nil error stops the stream.
type GraphSink interface {
	// Recovery comes first: the store's recovery record, or nil.
	Recovery(*store.Recovery) error
	Work(Work) error
	Evidence(EvidenceMeta) error
	Handoff(Handoff) error
	Review(Review) error
	Claim(GraphClaim) error
	Session(GraphSession) error
	Edge(Edge) error
}

// streamPage is the number of records StreamGraph reads per query.
const streamPage = 500

// StreamGraph sends every work-bound record of the store, the sessions they
// name and the edges between them to sink, reading each table in keyset
// pages of streamPage rows (each page its own read), so memory and every
// query stay bounded however large the store is. It is the whole graph for
// a person (`interop-runtime work graph`); get_work_graph answers a bounded
// part of it. The provider layer is not asked (no parent or
// shares_workspace_with edges). Records written while it runs may or may
// not appear; none appears twice.
func (s *Service) StreamGraph(ctx context.Context, sink GraphSink) error {
	sessions := map[string]bool{}
	seen := func(p *string) {
		if p != nil && *p != "" {
			sessions[*p] = true
		}
	}
	now := s.now()
	rec, err := s.st.Recovery(ctx)
	if err != nil {
		return err
	}
	if err := sink.Recovery(rec); err != nil {
		return err
	}
	if err := s.streamWorks(ctx, sink, seen); err != nil {
		return err
	}
	if err := s.streamEvidence(ctx, sink, seen); err != nil {
		return err
	}
	if err := s.streamHandoffs(ctx, sink, seen); err != nil {
		return err
	}
	if err := s.streamReviews(ctx, sink, seen); err != nil {
		return err
	}
	if err := s.streamClaims(ctx, sink, seen, now); err != nil {
		return err
	}
	ids := make([]string, 0, len(sessions))
	for id := range sessions {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	src := &graphSource{sessions: map[string]SessionInfo{}}
	for _, gs := range src.graphSessions(&graphRecords{claims: sessionClaims(ids)}) {
		if err := sink.Session(gs); err != nil {
			return err
		}
	}
	return nil
}

// sessionClaims wraps session IDs so graphSessions can split them.
func sessionClaims(ids []string) []*ent.Claim {
	out := make([]*ent.Claim, len(ids))
	for i, id := range ids {
		out[i] = &ent.Claim{SessionID: id}
	}
	return out
}

func (s *Service) streamWorks(ctx context.Context, sink GraphSink, seen func(*string)) error {
	var after timeKey
	for {
		var rows []*ent.WorkItem
		var counts evidenceCounts
		status := map[string]workitem.Status{}
		err := s.st.Read(ctx, func(tx *ent.Tx) error {
			var err error
			if rows, _, err = pageWorks(ctx, tx, WorkFilter{}, after, streamPage, false); err != nil {
				return err
			}
			if counts, err = embedEvidenceIDs(ctx, tx, false, rows); err != nil {
				return err
			}
			var deps []string
			for _, w := range rows {
				for _, d := range w.Edges.DependsOn {
					deps = append(deps, d.ID)
				}
			}
			for _, chunk := range paging.Chunks(deps, paging.ChunkSize) {
				ws, err := tx.WorkItem.Query().Where(workitem.IDIn(chunk...)).Select(workitem.FieldID, workitem.FieldStatus).All(ctx)
				if err != nil {
					return wrapStore("read dependency status", err)
				}
				for _, w := range ws {
					status[w.ID] = w.Status
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, w := range rows {
			seen(w.SourceSession)
			seen(w.DestinationSession)
			if err := sink.Work(toWork(w, counts)); err != nil {
				return err
			}
			for _, d := range w.Edges.DependsOn {
				if err := sink.Edge(Edge{From: w.ID, To: d.ID, Kind: EdgeDependsOn}); err != nil {
					return err
				}
				if st, ok := status[d.ID]; ok && st != workitem.StatusAccepted {
					if err := sink.Edge(Edge{From: d.ID, To: w.ID, Kind: EdgeBlocks}); err != nil {
						return err
					}
				}
			}
		}
		if len(rows) < streamPage {
			return nil
		}
		last := rows[len(rows)-1]
		after = timeKey{at: last.UpdatedAt, id: last.ID}
	}
}

func (s *Service) streamEvidence(ctx context.Context, sink GraphSink, seen func(*string)) error {
	var after timeKey
	for {
		var rows []*ent.Evidence
		err := s.st.Read(ctx, func(tx *ent.Tx) error {
			q := tx.Evidence.Query().Where(evidence.WorkIDNotNil())
			if after.set() {
				q = q.Where(keysetBefore(evidence.FieldCapturedAt, evidence.FieldID, after))
			}
			var err error
			rows, err = q.Order(evidenceNewestFirst()...).Limit(streamPage).Select(evidenceMetaFields()...).All(ctx)
			return wrapStoreNil("read evidence", err)
		})
		if err != nil {
			return err
		}
		for _, e := range rows {
			seen(e.SessionID)
			if err := sink.Evidence(toEvidenceMeta(e)); err != nil {
				return err
			}
			if err := sink.Edge(Edge{From: e.ID, To: *e.WorkID, Kind: EdgeEvidence}); err != nil {
				return err
			}
			if e.Trust == evidence.TrustRuntimeObserved || e.Trust == evidence.TrustRepositoryVerified {
				if err := sink.Edge(Edge{From: e.ID, To: *e.WorkID, Kind: EdgeVerifies}); err != nil {
					return err
				}
			}
		}
		if len(rows) < streamPage {
			return nil
		}
		last := rows[len(rows)-1]
		after = timeKey{at: last.CapturedAt, id: last.ID}
	}
}

// streamHandoffs reads handoffs by (work, created, id), so each work's
// handoffs arrive in order and supersedes edges need only the previous one.
func (s *Service) streamHandoffs(ctx context.Context, sink GraphSink, seen func(*string)) error {
	var last *ent.Handoff
	for {
		var rows []*ent.Handoff
		err := s.st.Read(ctx, func(tx *ent.Tx) error {
			q := tx.Handoff.Query()
			if last != nil {
				q = q.Where(func(sel *sql.Selector) {
					sel.Where(sql.CompositeGT([]string{sel.C(handoff.FieldWorkID), sel.C(handoff.FieldCreatedAt), sel.C(handoff.FieldID)},
						last.WorkID, last.CreatedAt, last.ID))
				})
			}
			var err error
			rows, err = q.Order(ent.Asc(handoff.FieldWorkID), ent.Asc(handoff.FieldCreatedAt), ent.Asc(handoff.FieldID)).Limit(streamPage).All(ctx)
			return wrapStoreNil("read handoffs", err)
		})
		if err != nil {
			return err
		}
		for _, h := range rows {
			seen(&h.SourceSession)
			seen(h.DestinationSession)
			if err := sink.Handoff(toHandoff(h)); err != nil {
				return err
			}
			if h.DestinationSession != nil {
				if err := sink.Edge(Edge{From: h.SourceSession, To: *h.DestinationSession, Kind: EdgeHandoff, Ref: h.ID}); err != nil {
					return err
				}
			}
			if last != nil && last.WorkID == h.WorkID && last.Status == handoff.StatusSuperseded {
				if err := sink.Edge(Edge{From: h.ID, To: last.ID, Kind: EdgeSupersedes}); err != nil {
					return err
				}
			}
			last = h
		}
		if len(rows) < streamPage {
			return nil
		}
	}
}

func (s *Service) streamReviews(ctx context.Context, sink GraphSink, seen func(*string)) error {
	var after timeKey
	for {
		var rows []*ent.Review
		subjectSession := map[string]string{}
		err := s.st.Read(ctx, func(tx *ent.Tx) error {
			q := tx.Review.Query()
			if after.set() {
				q = q.Where(keysetBefore(review.FieldCreatedAt, review.FieldID, after))
			}
			var err error
			if rows, err = q.Order(reviewNewestFirst()...).Limit(streamPage).All(ctx); err != nil {
				return wrapStore("read reviews", err)
			}
			var subjects []string
			for _, rv := range rows {
				subjects = append(subjects, rv.SubjectEvidenceIds...)
			}
			for _, chunk := range paging.Chunks(subjects, paging.ChunkSize) {
				es, err := tx.Evidence.Query().Where(evidence.IDIn(chunk...)).Select(evidence.FieldID, evidence.FieldSessionID).All(ctx)
				if err != nil {
					return wrapStore("read review subjects", err)
				}
				for _, e := range es {
					if e.SessionID != nil {
						subjectSession[e.ID] = *e.SessionID
					}
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, rv := range rows {
			seen(&rv.ReviewerSessionID)
			if err := sink.Review(toReview(rv)); err != nil {
				return err
			}
			subjects := map[string]bool{}
			for _, id := range rv.SubjectEvidenceIds {
				if err := sink.Edge(Edge{From: rv.ID, To: id, Kind: EdgeVerifies}); err != nil {
					return err
				}
				if s := subjectSession[id]; s != "" && s != rv.ReviewerSessionID {
					subjects[s] = true
				}
			}
			for _, s := range sortedKeys(subjects) {
				if err := sink.Edge(Edge{From: rv.ReviewerSessionID, To: s, Kind: EdgeReview, Ref: rv.ID}); err != nil {
					return err
				}
			}
		}
		if len(rows) < streamPage {
			return nil
		}
		last := rows[len(rows)-1]
		after = timeKey{at: last.CreatedAt, id: last.ID}
	}
}

func (s *Service) streamClaims(ctx context.Context, sink GraphSink, seen func(*string), now time.Time) error {
	var after timeKey
	for {
		var rows []*ent.Claim
		err := s.st.Read(ctx, func(tx *ent.Tx) error {
			q := tx.Claim.Query()
			if after.set() {
				q = q.Where(keysetBefore(claim.FieldAcquiredAt, claim.FieldID, after))
			}
			var err error
			rows, err = q.Order(claim.ByAcquiredAt(sql.OrderDesc()), claim.ByID(sql.OrderDesc())).Limit(streamPage).All(ctx)
			return wrapStoreNil("read claims", err)
		})
		if err != nil {
			return err
		}
		for _, c := range rows {
			seen(&c.SessionID)
			gc := toGraphClaim(c, now)
			if err := sink.Claim(gc); err != nil {
				return err
			}
			if gc.Status == "active" {
				if err := sink.Edge(Edge{From: c.SessionID, To: c.WorkID, Kind: EdgeClaims, Ref: c.ID}); err != nil {
					return err
				}
			}
		}
		if len(rows) < streamPage {
			return nil
		}
		last := rows[len(rows)-1]
		after = timeKey{at: last.AcquiredAt, id: last.ID}
	}
}
