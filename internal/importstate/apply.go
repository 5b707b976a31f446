package importstate

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/agent-interop/runtime/ent"
	"github.com/agent-interop/runtime/ent/claim"
	"github.com/agent-interop/runtime/ent/conversation"
	"github.com/agent-interop/runtime/ent/evidence"
	"github.com/agent-interop/runtime/ent/handoff"
	"github.com/agent-interop/runtime/ent/message"
	"github.com/agent-interop/runtime/ent/operation"
	"github.com/agent-interop/runtime/ent/participant"
	"github.com/agent-interop/runtime/ent/review"
	"github.com/agent-interop/runtime/ent/workitem"
	"github.com/agent-interop/runtime/internal/claims"
	"github.com/agent-interop/runtime/internal/delivery"
)

// Store is the part of *store.Store an import needs: one write
// transaction, committed when fn returns nil (fn may run again on a
// store that retries serialization failures, so it keeps no state).
type Store interface {
	Tx(ctx context.Context, fn func(tx *ent.Tx) error) error
}

// Options configure an import.
type Options struct {
	// DryRun rolls the transaction back: the report says what a real run
	// would do, and nothing is written.
	DryRun bool
	// At is the import time (a claim's expiry, an in-flight send's
	// delivery_unknown time); Run passes the instant it read the files at.
	At time.Time
}

// ErrConflicts is wrapped by the error Import returns when records the
// store already has differ from the files'; nothing was written.
var ErrConflicts = errors.New("the store has records with these ids and other content")

// errRollback ends a dry run's transaction.
var errRollback = errors.New("dry run: roll back")

// chunk bounds the ids of one IN (...) query.
const chunk = 500

// Import writes a snapshot into the store in one transaction: new records
// are created with their ids, times and sequences; records already there
// with the same content are left as they are (also when they changed in
// the store since, e.g. a handoff that moved on); a record whose id the
// store has with other content is a conflict, and any conflict refuses the
// whole import. A dry run does the same and rolls back.
func Import(ctx context.Context, st Store, snap *Snapshot, opts Options) (*Report, error) {
	var rep *Report
	err := st.Tx(ctx, func(tx *ent.Tx) error {
		rep = newReport(snap, opts.DryRun)
		w := &writer{tx: tx, rep: rep, now: opts.At.UTC()}
		if err := w.run(ctx, snap); err != nil {
			return err
		}
		switch {
		case len(rep.Conflicts) > 0:
			return fmt.Errorf("%w (%d)", ErrConflicts, len(rep.Conflicts))
		case opts.DryRun || rep.New() == 0:
			return errRollback
		}
		return nil
	})
	switch {
	case errors.Is(err, errRollback):
		rep.Unchanged = !opts.DryRun
		return rep, nil
	case errors.Is(err, ErrConflicts):
		if opts.DryRun {
			return rep, nil // a dry run reports conflicts, it does not fail on them
		}
		return rep, err
	case err != nil:
		return nil, fmt.Errorf("import into the store: %w", err)
	}
	rep.Written = true
	return rep, nil
}

func newReport(snap *Snapshot, dryRun bool) *Report {
	rep := &Report{DryRun: dryRun, Files: snap.Files, Deliveries: map[string]int{}, Conflicts: []Conflict{}, Notes: append([]string{}, snap.Notes...)}
	for _, k := range kindOrder {
		rep.count(k)
	}
	rep.count(KindWork).InFiles = len(snap.Works)
	rep.count(KindEvidence).InFiles = len(snap.Evidence)
	rep.count(KindHandoff).InFiles = len(snap.Handoffs)
	rep.count(KindReview).InFiles = len(snap.Reviews)
	rep.count(KindClaim).InFiles = len(snap.Claims)
	rep.count(KindConversation).InFiles = len(snap.Conversations)
	rep.count(KindParticipant).InFiles = len(snap.Participants)
	rep.count(KindMessage).InFiles = len(snap.Messages)
	if snap.rehashed > 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("%d evidence records: 0.3.x hashed the data as JSON.stringify wrote it; the store keeps and hashes its canonical form (docs/store.md), so their contentHash differs from 0.3.x's (the content is the same)", snap.rehashed))
	}
	return rep
}

// writer is one attempt of an import's transaction.
type writer struct {
	tx  *ent.Tx
	rep *Report
	now time.Time
}

// outcome records how one record compared: new (nil diffs, !present),
// present (identity equal; changed when mutable fields differ), or a
// conflict.
func (w *writer) outcome(kind string, o origin, id string, present bool, identity, mutable []fieldDiff) bool {
	c := w.rep.count(kind)
	switch {
	case !present:
		c.New++
		return true
	case len(identity) > 0:
		c.Conflicts++
		for _, d := range identity {
			w.rep.Conflicts = append(w.rep.Conflicts, Conflict{Kind: kind, ID: id, At: o.at(d.Field), Field: d.Field, Store: d.Store, File: d.File})
		}
	case len(mutable) > 0:
		c.Present++
		c.Changed++
	default:
		c.Present++
	}
	return false
}

// collision records a record that collides with another one of the store.
func (w *writer) collision(kind string, o origin, id, field, reason string) {
	w.rep.count(kind).Conflicts++
	w.rep.Conflicts = append(w.rep.Conflicts, Conflict{Kind: kind, ID: id, At: o.at(field), Field: field, Reason: reason})
}

func (w *writer) run(ctx context.Context, snap *Snapshot) error {
	steps := []func(context.Context, *Snapshot) error{
		w.works, w.evidence, w.handoffs, w.reviews, w.claims, w.conversations,
	}
	for _, step := range steps {
		if err := step(ctx, snap); err != nil {
			return err
		}
	}
	return nil
}

// byID loads the existing rows among ids, in chunks.
func byID[T any](ctx context.Context, ids []string, load func(ctx context.Context, ids []string) ([]T, error), key func(T) string) (map[string]T, error) {
	out := make(map[string]T, len(ids))
	for start := 0; start < len(ids); start += chunk {
		rows, err := load(ctx, ids[start:min(start+chunk, len(ids))])
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			out[key(r)] = r
		}
	}
	return out, nil
}

func (w *writer) works(ctx context.Context, snap *Snapshot) error {
	ids := make([]string, len(snap.Works))
	for i, r := range snap.Works {
		ids[i] = r.ID
	}
	have, err := byID(ctx, ids, func(ctx context.Context, ids []string) ([]*ent.WorkItem, error) {
		return w.tx.WorkItem.Query().Where(workitem.IDIn(ids...)).
			WithDependsOn(func(q *ent.WorkItemQuery) { q.Select(workitem.FieldID).Order(ent.Asc(workitem.FieldID)) }).All(ctx)
	}, func(r *ent.WorkItem) string { return r.ID })
	if err != nil {
		return fmt.Errorf("read work items: %w", err)
	}
	var created []workRec
	for _, r := range snap.Works {
		cur, present := have[r.ID]
		var id, mut comparer
		if present {
			id.str("objective", cur.Objective, r.Objective)
			id.list("acceptanceCriteria", cur.AcceptanceCriteria, r.AcceptanceCriteria)
			id.list("risks", cur.Risks, r.Risks)
			id.list("unresolvedQuestions", cur.UnresolvedQuestions, r.UnresolvedQuestions)
			id.ptr("sourceSession", cur.SourceSession, r.SourceSession)
			id.time("createdAt", cur.CreatedAt, r.CreatedAt)
			var deps []string
			for _, d := range cur.Edges.DependsOn {
				deps = append(deps, d.ID)
			}
			id.list("dependsOn", deps, r.DependsOn)
			mut.str("status", string(cur.Status), r.Status)
			mut.ptr("destinationSession", cur.DestinationSession, r.DestinationSession)
			mut.list("changedFiles", cur.ChangedFiles, r.ChangedFiles)
			mut.time("updatedAt", cur.UpdatedAt, r.UpdatedAt)
		}
		if !w.outcome(KindWork, r.origin, r.ID, present, id.diffs, mut.diffs) {
			continue
		}
		err := w.tx.WorkItem.Create().
			SetID(r.ID).SetObjective(r.Objective).SetAcceptanceCriteria(r.AcceptanceCriteria).
			SetRisks(r.Risks).SetUnresolvedQuestions(r.UnresolvedQuestions).
			SetNillableSourceSession(r.SourceSession).SetNillableDestinationSession(r.DestinationSession).
			SetStatus(workitem.Status(r.Status)).SetChangedFiles(r.ChangedFiles).
			SetCreatedAt(r.CreatedAt).SetUpdatedAt(r.UpdatedAt).Exec(ctx)
		if err != nil {
			return fmt.Errorf("create work %s: %w", r.ID, err)
		}
		created = append(created, r)
	}
	// Dependencies once every work exists (a work may depend on one later
	// in the file).
	for _, r := range created {
		if len(r.DependsOn) == 0 {
			continue
		}
		if err := w.tx.WorkItem.UpdateOneID(r.ID).AddDependsOnIDs(r.DependsOn...).Exec(ctx); err != nil {
			return fmt.Errorf("record dependencies of work %s: %w", r.ID, err)
		}
	}
	return nil
}

func (w *writer) evidence(ctx context.Context, snap *Snapshot) error {
	ids := make([]string, len(snap.Evidence))
	for i, r := range snap.Evidence {
		ids[i] = r.ID
	}
	have, err := byID(ctx, ids, func(ctx context.Context, ids []string) ([]*ent.Evidence, error) {
		return w.tx.Evidence.Query().Where(evidence.IDIn(ids...)).All(ctx)
	}, func(r *ent.Evidence) string { return r.ID })
	if err != nil {
		return fmt.Errorf("read evidence: %w", err)
	}
	for _, r := range snap.Evidence {
		cur, present := have[r.ID]
		var id comparer
		if present {
			id.ptr("workId", cur.WorkID, r.WorkID)
			id.ptr("sessionId", cur.SessionID, r.SessionID)
			id.str("kind", string(cur.Kind), r.Kind)
			id.str("trust", string(cur.Trust), r.Trust)
			id.json("source", cur.Source, r.Source)
			id.time("capturedAt", cur.CapturedAt, r.CapturedAt)
			id.str("summary", cur.Summary, r.Summary)
			id.str("contentHash", cur.ContentHash, r.ContentHash)
		}
		if !w.outcome(KindEvidence, r.origin, r.ID, present, id.diffs, nil) {
			continue
		}
		err := w.tx.Evidence.Create().
			SetID(r.ID).SetNillableWorkID(r.WorkID).SetNillableSessionID(r.SessionID).
			SetKind(evidence.Kind(r.Kind)).SetTrust(evidence.Trust(r.Trust)).SetSource(r.Source).
			SetCapturedAt(r.CapturedAt).SetSummary(r.Summary).SetData(r.Data).SetDataBytes(len(r.Data)).
			SetContentHash(r.ContentHash).Exec(ctx)
		if err != nil {
			return fmt.Errorf("create evidence %s: %w", r.ID, err)
		}
	}
	return nil
}

func (w *writer) handoffs(ctx context.Context, snap *Snapshot) error {
	ids := make([]string, len(snap.Handoffs))
	for i, r := range snap.Handoffs {
		ids[i] = r.ID
	}
	have, err := byID(ctx, ids, func(ctx context.Context, ids []string) ([]*ent.Handoff, error) {
		return w.tx.Handoff.Query().Where(handoff.IDIn(ids...)).All(ctx)
	}, func(r *ent.Handoff) string { return r.ID })
	if err != nil {
		return fmt.Errorf("read handoffs: %w", err)
	}
	for _, r := range snap.Handoffs {
		cur, present := have[r.ID]
		var id, mut comparer
		if present {
			id.str("workId", cur.WorkID, r.WorkID)
			id.str("sourceSession", cur.SourceSession, r.SourceSession)
			id.ptr("destinationSession", cur.DestinationSession, r.DestinationSession)
			id.str("objective", cur.Objective, r.Objective)
			id.list("acceptanceCriteria", cur.AcceptanceCriteria, r.AcceptanceCriteria)
			id.list("evidenceIds", cur.EvidenceIds, r.EvidenceIDs)
			id.list("changedFiles", cur.ChangedFiles, r.ChangedFiles)
			id.list("risks", cur.Risks, r.Risks)
			id.list("unresolvedQuestions", cur.UnresolvedQuestions, r.UnresolvedQuestions)
			id.list("authorityBoundaries", cur.AuthorityBoundaries, r.AuthorityBoundaries)
			var cs *string
			if cur.ContinuationState != nil {
				v := string(*cur.ContinuationState)
				cs = &v
			}
			id.ptr("continuationState", cs, r.ContinuationState)
			id.json("latestValidation", cur.LatestValidation, r.LatestValidation)
			id.list("assumptions", cur.Assumptions, r.Assumptions)
			id.list("rollbackNotes", cur.RollbackNotes, r.RollbackNotes)
			id.ptr("nextAction", cur.NextAction, r.NextAction)
			id.ptr("repositoryRevision", cur.RepositoryRevision, r.RepositoryRevision)
			id.num("contextTokens", int64(cur.ContextTokens), int64(r.ContextTokens))
			id.num("tokenBudget", int64(cur.TokenBudget), int64(r.TokenBudget))
			id.list("omittedFields", cur.OmittedFields, r.OmittedFields)
			id.time("createdAt", cur.CreatedAt, r.CreatedAt)
			mut.str("status", string(cur.Status), r.Status)
			mut.time("updatedAt", cur.UpdatedAt, r.UpdatedAt)
		}
		if !w.outcome(KindHandoff, r.origin, r.ID, present, id.diffs, mut.diffs) {
			continue
		}
		create := w.tx.Handoff.Create().
			SetID(r.ID).SetWorkID(r.WorkID).SetSourceSession(r.SourceSession).
			SetNillableDestinationSession(r.DestinationSession).SetObjective(r.Objective).
			SetAcceptanceCriteria(r.AcceptanceCriteria).SetEvidenceIds(r.EvidenceIDs).
			SetChangedFiles(r.ChangedFiles).SetRisks(r.Risks).SetUnresolvedQuestions(r.UnresolvedQuestions).
			SetAuthorityBoundaries(r.AuthorityBoundaries).SetNillableNextAction(r.NextAction).
			SetNillableRepositoryRevision(r.RepositoryRevision).SetStatus(handoff.Status(r.Status)).
			SetContextTokens(r.ContextTokens).SetTokenBudget(r.TokenBudget).SetOmittedFields(r.OmittedFields).
			SetCreatedAt(r.CreatedAt).SetUpdatedAt(r.UpdatedAt)
		if r.ContinuationState != nil {
			create.SetContinuationState(handoff.ContinuationState(*r.ContinuationState))
		}
		if r.LatestValidation != nil {
			create.SetLatestValidation(r.LatestValidation)
		}
		if r.Assumptions != nil {
			create.SetAssumptions(r.Assumptions)
		}
		if r.RollbackNotes != nil {
			create.SetRollbackNotes(r.RollbackNotes)
		}
		if err := create.Exec(ctx); err != nil {
			return fmt.Errorf("create handoff %s: %w", r.ID, err)
		}
	}
	return nil
}

func (w *writer) reviews(ctx context.Context, snap *Snapshot) error {
	ids := make([]string, len(snap.Reviews))
	for i, r := range snap.Reviews {
		ids[i] = r.ID
	}
	have, err := byID(ctx, ids, func(ctx context.Context, ids []string) ([]*ent.Review, error) {
		return w.tx.Review.Query().Where(review.IDIn(ids...)).All(ctx)
	}, func(r *ent.Review) string { return r.ID })
	if err != nil {
		return fmt.Errorf("read reviews: %w", err)
	}
	for _, r := range snap.Reviews {
		cur, present := have[r.ID]
		var id comparer
		if present {
			id.str("workId", cur.WorkID, r.WorkID)
			id.list("subjectEvidenceIds", cur.SubjectEvidenceIds, r.SubjectEvidenceIDs)
			id.str("reviewerSessionId", cur.ReviewerSessionID, r.ReviewerSessionID)
			id.json("independence", cur.Independence, r.Independence)
			id.json("findings", cur.Findings, r.Findings)
			id.str("verdict", string(cur.Verdict), r.Verdict)
			id.ptr("evidenceId", cur.EvidenceID, r.EvidenceID)
			id.time("createdAt", cur.CreatedAt, r.CreatedAt)
		}
		if !w.outcome(KindReview, r.origin, r.ID, present, id.diffs, nil) {
			continue
		}
		err := w.tx.Review.Create().
			SetID(r.ID).SetWorkID(r.WorkID).SetSubjectEvidenceIds(r.SubjectEvidenceIDs).
			SetReviewerSessionID(r.ReviewerSessionID).SetIndependence(r.Independence).SetFindings(r.Findings).
			SetVerdict(review.Verdict(r.Verdict)).SetProvenance(review.ProvenanceAgentClaim).
			SetNillableEvidenceID(r.EvidenceID).SetCreatedAt(r.CreatedAt).Exec(ctx)
		if err != nil {
			return fmt.Errorf("create review %s: %w", r.ID, err)
		}
	}
	return nil
}

func (w *writer) claims(ctx context.Context, snap *Snapshot) error {
	ids := make([]string, len(snap.Claims))
	for i, r := range snap.Claims {
		ids[i] = r.Claim.ID
	}
	have, err := byID(ctx, ids, func(ctx context.Context, ids []string) ([]*ent.Claim, error) {
		return w.tx.Claim.Query().Where(claim.IDIn(ids...)).All(ctx)
	}, func(r *ent.Claim) string { return r.ID })
	if err != nil {
		return fmt.Errorf("read claims: %w", err)
	}
	for _, r := range snap.Claims {
		k := r.Claim
		cur, present := have[k.ID]
		var id, mut comparer
		if present {
			id.str("workId", cur.WorkID, k.WorkID)
			id.str("sessionId", cur.SessionID, k.SessionID)
			id.str("resource", cur.Resource, k.Resource)
			id.str("kind", string(cur.Kind), string(k.Kind))
			id.str("mode", string(cur.Mode), string(k.Mode))
			id.time("acquiredAt", cur.AcquiredAt, k.AcquiredAt)
			mut.str("status", string(cur.Status), string(k.Status))
			mut.time("expiresAt", cur.ExpiresAt, k.ExpiresAt)
			mut.timePtr("releasedAt", cur.ReleasedAt, k.ReleasedAt)
		}
		if !w.outcome(KindClaim, r.origin, k.ID, present, id.diffs, mut.diffs) {
			continue
		}
		_, err := claims.Restore(ctx, w.tx, k, w.now)
		var conflict *claims.ConflictError
		if errors.As(err, &conflict) {
			w.rep.count(KindClaim).New--
			w.collision(KindClaim, r.origin, k.ID, "resource", fmt.Sprintf("still active, and %s %s (%s) of %s conflicts with active claim %s of %s on %s %s (%s)",
				k.Kind, k.Resource, k.Mode, k.SessionID, conflict.Held.ID, conflict.Held.SessionID, conflict.Held.Kind, conflict.Held.Resource, conflict.Held.Mode))
			continue
		}
		if err != nil {
			return fmt.Errorf("restore claim %s: %w", k.ID, err)
		}
	}
	return nil
}

func (w *writer) conversations(ctx context.Context, snap *Snapshot) error {
	ids := make([]string, len(snap.Conversations))
	for i, r := range snap.Conversations {
		ids[i] = r.ID
	}
	have, err := byID(ctx, ids, func(ctx context.Context, ids []string) ([]*ent.Conversation, error) {
		return w.tx.Conversation.Query().Where(conversation.IDIn(ids...)).All(ctx)
	}, func(r *ent.Conversation) string { return r.ID })
	if err != nil {
		return fmt.Errorf("read conversations: %w", err)
	}
	for _, r := range snap.Conversations {
		cur, present := have[r.ID]
		var id, mut comparer
		if present {
			id.str("title", cur.Title, r.Title)
			id.time("createdAt", cur.CreatedAt, r.CreatedAt)
			if cur.LastSequence > r.LastSequence { // a file ahead of the store adds messages
				mut.num("lastSequence", cur.LastSequence, r.LastSequence)
			}
		}
		if !w.outcome(KindConversation, r.origin, r.ID, present, id.diffs, mut.diffs) {
			continue
		}
		err := w.tx.Conversation.Create().SetID(r.ID).SetTitle(r.Title).
			SetCreatedAt(r.CreatedAt).SetUpdatedAt(r.UpdatedAt).SetLastSequence(r.LastSequence).Exec(ctx)
		if err != nil {
			return fmt.Errorf("create conversation %s: %w", r.ID, err)
		}
	}
	if err := w.participants(ctx, snap, ids); err != nil {
		return err
	}
	return w.messages(ctx, snap, ids)
}

func (w *writer) participants(ctx context.Context, snap *Snapshot, convIDs []string) error {
	type key struct{ conv, pid string }
	type session struct{ conv, provider, native string }
	byKey := map[key]*ent.Participant{}
	bySession := map[session]*ent.Participant{}
	for start := 0; start < len(convIDs); start += chunk {
		rows, err := w.tx.Participant.Query().Where(participant.ConversationIDIn(convIDs[start:min(start+chunk, len(convIDs))]...)).All(ctx)
		if err != nil {
			return fmt.Errorf("read participants: %w", err)
		}
		for _, p := range rows {
			byKey[key{p.ConversationID, p.ParticipantID}] = p
			bySession[session{p.ConversationID, p.Provider, p.NativeID}] = p
		}
	}
	for _, r := range snap.Participants {
		label := r.ConversationID + "/" + r.ParticipantID
		cur, present := byKey[key{r.ConversationID, r.ParticipantID}]
		var id comparer
		if present {
			id.str("provider", cur.Provider, r.Provider)
			id.str("nativeId", cur.NativeID, r.NativeID)
			id.ptr("workspaceId", cur.WorkspaceID, r.WorkspaceID)
			var role *string
			if cur.Role != nil {
				v := string(*cur.Role)
				role = &v
			}
			id.ptr("role", role, r.Role)
		} else if other := bySession[session{r.ConversationID, r.Provider, r.NativeID}]; other != nil {
			w.collision(KindParticipant, r.origin, label, "nativeId", fmt.Sprintf("session %s:%s is already participant %s of the conversation", r.Provider, r.NativeID, other.ParticipantID))
			continue
		}
		if !w.outcome(KindParticipant, r.origin, label, present, id.diffs, nil) {
			continue
		}
		create := w.tx.Participant.Create().SetConversationID(r.ConversationID).SetParticipantID(r.ParticipantID).
			SetProvider(r.Provider).SetNativeID(r.NativeID).SetNillableWorkspaceID(r.WorkspaceID).SetJoinedAt(r.JoinedAt)
		if r.Role != nil {
			create.SetRole(participant.Role(*r.Role))
		}
		if err := create.Exec(ctx); err != nil {
			return fmt.Errorf("create participant %s: %w", label, err)
		}
	}
	return nil
}

func (w *writer) messages(ctx context.Context, snap *Snapshot, convIDs []string) error {
	ids := make([]string, len(snap.Messages))
	keys := make([]string, len(snap.Messages))
	for i, r := range snap.Messages {
		ids[i], keys[i] = r.ID, r.IdempotencyKey
	}
	have, err := byID(ctx, ids, func(ctx context.Context, ids []string) ([]*ent.Message, error) {
		return w.tx.Message.Query().Where(message.IDIn(ids...)).All(ctx)
	}, func(r *ent.Message) string { return r.ID })
	if err != nil {
		return fmt.Errorf("read messages: %w", err)
	}
	keyed, err := byID(ctx, keys, func(ctx context.Context, keys []string) ([]*ent.Message, error) {
		return w.tx.Message.Query().Where(message.IdempotencyKeyIn(keys...)).Select(message.FieldID, message.FieldIdempotencyKey).All(ctx)
	}, func(r *ent.Message) string { return r.IdempotencyKey })
	if err != nil {
		return fmt.Errorf("read message keys: %w", err)
	}
	opKeyed, err := byID(ctx, keys, func(ctx context.Context, keys []string) ([]*ent.Operation, error) {
		return w.tx.Operation.Query().Where(operation.IdempotencyKeyIn(keys...)).Select(operation.FieldID, operation.FieldIdempotencyKey).All(ctx)
	}, func(r *ent.Operation) string { return r.IdempotencyKey })
	if err != nil {
		return fmt.Errorf("read operation keys: %w", err)
	}
	taken, err := w.takenSequences(ctx, convIDs)
	if err != nil {
		return err
	}
	last := map[string]int64{} // conversation -> highest new sequence
	for _, r := range snap.Messages {
		cur, present := have[r.ID]
		var id comparer
		if present {
			id = compareMessage(cur, r)
		} else {
			switch {
			case taken[seqKey{r.ConversationID, r.Sequence}] != "":
				w.collision(KindMessage, r.origin, r.ID, "sequence", fmt.Sprintf("sequence %d of %s is message %s in the store", r.Sequence, r.ConversationID, taken[seqKey{r.ConversationID, r.Sequence}]))
				continue
			case keyed[r.IdempotencyKey] != nil:
				w.collision(KindMessage, r.origin, r.ID, "idempotencyKey", fmt.Sprintf("idempotency key %q is taken by message %s in the store", r.IdempotencyKey, keyed[r.IdempotencyKey].ID))
				continue
			case opKeyed[r.IdempotencyKey] != nil:
				w.collision(KindMessage, r.origin, r.ID, "idempotencyKey", fmt.Sprintf("idempotency key %q is taken by operation %s in the store", r.IdempotencyKey, opKeyed[r.IdempotencyKey].ID))
				continue
			}
		}
		if !w.outcome(KindMessage, r.origin, r.ID, present, id.diffs, nil) {
			continue
		}
		op, err := delivery.RecordImportedTx(ctx, w.tx, r.Op)
		if err != nil {
			return fmt.Errorf("record the delivery of message %s: %w", r.ID, err)
		}
		w.rep.Deliveries[string(op.Status)]++
		if r.InFlight {
			w.rep.InFlight++
		}
		create := w.tx.Message.Create().SetID(r.ID).SetConversationID(r.ConversationID).SetSequence(r.Sequence).
			SetSender(r.Sender).SetRecipient(r.Recipient).SetText(r.Text).SetCreatedAt(r.CreatedAt).
			SetIdempotencyKey(r.IdempotencyKey).SetOperationID(op.ID)
		if r.ReplyTo != nil {
			create.SetReplyTo(*r.ReplyTo)
		}
		if err := create.Exec(ctx); err != nil {
			return fmt.Errorf("create message %s: %w", r.ID, err)
		}
		last[r.ConversationID] = max(last[r.ConversationID], r.Sequence)
	}
	return w.advance(ctx, snap, last)
}

// seqKey is a message's place: its conversation and sequence.
type seqKey struct {
	conv string
	seq  int64
}

// takenSequences reads the places the store's messages of conversations
// convIDs hold, each to its message ID.
func (w *writer) takenSequences(ctx context.Context, convIDs []string) (map[seqKey]string, error) {
	taken := map[seqKey]string{}
	for start := 0; start < len(convIDs); start += chunk {
		rows, err := w.tx.Message.Query().Where(message.ConversationIDIn(convIDs[start:min(start+chunk, len(convIDs))]...)).
			Select(message.FieldID, message.FieldConversationID, message.FieldSequence).All(ctx)
		if err != nil {
			return nil, fmt.Errorf("read message sequences: %w", err)
		}
		for _, m := range rows {
			taken[seqKey{m.ConversationID, m.Sequence}] = m.ID
		}
	}
	return taken, nil
}

// compareMessage lists how the file's message r differs from the store's
// cur; a trimmed message's text is not compared.
func compareMessage(cur *ent.Message, r messageRec) comparer {
	var id comparer
	id.str("conversationId", cur.ConversationID, r.ConversationID)
	id.num("sequence", cur.Sequence, r.Sequence)
	id.str("sender", cur.Sender, r.Sender)
	id.str("recipient", cur.Recipient, r.Recipient)
	if cur.TrimmedAt == nil {
		id.str("text", cur.Text, r.Text)
	}
	id.ptr("replyTo", cur.ReplyTo, r.ReplyTo)
	id.time("createdAt", cur.CreatedAt, r.CreatedAt)
	id.str("idempotencyKey", cur.IdempotencyKey, r.IdempotencyKey)
	return id
}

// advance raises the lastSequence and updatedAt of conversations that took
// new messages (to the file's when it is ahead) and keeps the newest 500 of
// each (older ones become tombstones, as a send would leave them).
func (w *writer) advance(ctx context.Context, snap *Snapshot, last map[string]int64) error {
	files := map[string]conversationRec{}
	for _, c := range snap.Conversations {
		files[c.ID] = c
	}
	for _, convID := range slices.Sorted(maps.Keys(last)) {
		cur, err := w.tx.Conversation.Get(ctx, convID)
		if err != nil {
			return fmt.Errorf("read conversation %s: %w", convID, err)
		}
		file := files[convID]
		top := max(cur.LastSequence, last[convID], file.LastSequence)
		if top != cur.LastSequence || file.UpdatedAt.After(cur.UpdatedAt) {
			updated := cur.UpdatedAt
			if file.UpdatedAt.After(updated) {
				updated = file.UpdatedAt
			}
			if err := w.tx.Conversation.UpdateOneID(convID).SetLastSequence(top).SetUpdatedAt(updated).Exec(ctx); err != nil {
				return fmt.Errorf("advance conversation %s: %w", convID, err)
			}
		}
		if cut := top - retained; cut >= 1 {
			n, err := w.tx.Message.Update().
				Where(message.ConversationID(convID), message.SequenceLTE(cut), message.TrimmedAtIsNil()).
				SetTrimmedAt(w.now).SetText("").Save(ctx)
			if err != nil {
				return fmt.Errorf("trim conversation %s: %w", convID, err)
			}
			if n > 0 {
				w.rep.Notes = append(w.rep.Notes, fmt.Sprintf("conversation %s: %d messages older than the newest %d are kept as tombstones (sequence and key, no text), as a send would leave them", convID, n, retained))
			}
		}
	}
	return nil
}
