package workflow

import (
	"context"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agent-interop/runtime/catalogs/limits"
	"github.com/agent-interop/runtime/ent"
	"github.com/agent-interop/runtime/ent/handoff"
	"github.com/agent-interop/runtime/ent/workitem"
)

// CreateHandoffInput is create_handoff's argument. The six lists from
// AcceptanceCriteria to AuthorityBoundaries are required but may be empty.
type CreateHandoffInput struct {
	WorkID              string
	SourceSession       string
	DestinationSession  *string
	Objective           string
	AcceptanceCriteria  []string
	EvidenceIDs         []string
	ChangedFiles        []string
	Risks               []string
	UnresolvedQuestions []string
	AuthorityBoundaries []string
	ContinuationState   *string // not_started|in_progress|needs_completion|likely_complete|existing_behavior_broken
	LatestValidation    *Validation
	Assumptions         []string
	RollbackNotes       []string
	NextAction          *string
	RepositoryRevision  *string
}

// CreateHandoff builds the handoff's packet against the token budget and,
// only when the packet fits, stores the durable record (every field, also
// the omitted ones) and moves the work to in_progress with the handoff's
// destination session. A packet whose mandatory part does not fit is
// refused and nothing is stored.
func (s *Service) CreateHandoff(ctx context.Context, in CreateHandoffInput) (Handoff, error) {
	h, err := validateHandoff(in)
	if err != nil {
		return Handoff{}, err
	}
	now := s.now()
	h.ID = randomID("handoff")
	h.Status = HandoffCreated
	h.CreatedAt, h.UpdatedAt = Timestamp(now), Timestamp(now)
	budget := s.handoffBudget()
	packet, omitted, err := s.buildPacket(&h, budget)
	if err != nil {
		return Handoff{}, err
	}
	h.ContextTokens, h.TokenBudget, h.OmittedFields = packet.ContextTokens, budget, omitted

	err = s.st.Tx(ctx, func(tx *ent.Tx) error {
		if err := requireWorks(ctx, tx, []string{h.WorkID}, ""); err != nil {
			return err
		}
		if err := requireEvidence(ctx, tx, h.EvidenceIDs); err != nil {
			return err
		}
		return s.insertHandoff(ctx, tx, &h, now)
	})
	if err != nil {
		return Handoff{}, err
	}
	return h, nil
}

// insertHandoff stores h and applies its side effects on the work.
func (s *Service) insertHandoff(ctx context.Context, tx *ent.Tx, h *Handoff, now time.Time) error {
	create := tx.Handoff.Create().
		SetID(h.ID).
		SetWorkID(h.WorkID).
		SetSourceSession(h.SourceSession).
		SetNillableDestinationSession(h.DestinationSession).
		SetObjective(h.Objective).
		SetAcceptanceCriteria(h.AcceptanceCriteria).
		SetEvidenceIds(h.EvidenceIDs).
		SetChangedFiles(h.ChangedFiles).
		SetRisks(h.Risks).
		SetUnresolvedQuestions(h.UnresolvedQuestions).
		SetAuthorityBoundaries(h.AuthorityBoundaries).
		SetNillableNextAction(h.NextAction).
		SetStatus(handoff.StatusCreated).
		SetContextTokens(h.ContextTokens).
		SetTokenBudget(h.TokenBudget).
		SetOmittedFields(h.OmittedFields).
		SetCreatedAt(now).
		SetUpdatedAt(now)
	if h.ContinuationState != nil {
		create.SetContinuationState(handoff.ContinuationState(*h.ContinuationState))
	}
	if h.LatestValidation != nil {
		create.SetLatestValidation(h.LatestValidation)
	}
	if len(h.Assumptions) > 0 {
		create.SetAssumptions(h.Assumptions)
	}
	if len(h.RollbackNotes) > 0 {
		create.SetRollbackNotes(h.RollbackNotes)
	}
	create.SetNillableRepositoryRevision(h.RepositoryRevision)
	if err := create.Exec(ctx); err != nil {
		return wrapStore("create handoff", err)
	}
	// Upstream side effects: the work follows the handoff.
	upd := tx.WorkItem.UpdateOneID(h.WorkID).
		SetStatus(workitem.StatusInProgress).
		SetUpdatedAt(now)
	if h.DestinationSession != nil {
		upd.SetDestinationSession(*h.DestinationSession)
	} else {
		upd.ClearDestinationSession()
	}
	if err := upd.Exec(ctx); err != nil {
		return wrapStore("update work for handoff", err)
	}
	return nil
}

func validateHandoff(in CreateHandoffInput) (Handoff, error) {
	var h Handoff
	var err error
	if h.WorkID, err = requiredText("workId", in.WorkID, limits.CreateHandoffWorkIDMaxLen); err != nil {
		return h, err
	}
	if h.SourceSession, err = requiredText("sourceSession", in.SourceSession, limits.CreateHandoffSourceSessionMaxLen); err != nil {
		return h, err
	}
	if h.DestinationSession, err = optionalText("destinationSession", in.DestinationSession, limits.CreateHandoffDestinationSessionMaxLen); err != nil {
		return h, err
	}
	if h.Objective, err = requiredText("objective", in.Objective, limits.CreateHandoffObjectiveMaxLen); err != nil {
		return h, err
	}
	lists := []struct {
		field    string
		in       []string
		out      *[]string
		maxItems int
		maxLen   int
	}{
		{"acceptanceCriteria", in.AcceptanceCriteria, &h.AcceptanceCriteria, limits.CreateHandoffAcceptanceCriteriaMaxItems, limits.CreateHandoffAcceptanceCriteriaItemMaxLen},
		{"changedFiles", in.ChangedFiles, &h.ChangedFiles, limits.CreateHandoffChangedFilesMaxItems, limits.CreateHandoffChangedFilesItemMaxLen},
		{"risks", in.Risks, &h.Risks, limits.CreateHandoffRisksMaxItems, limits.CreateHandoffRisksItemMaxLen},
		{"unresolvedQuestions", in.UnresolvedQuestions, &h.UnresolvedQuestions, limits.CreateHandoffUnresolvedQuestionsMaxItems, limits.CreateHandoffUnresolvedQuestionsItemMaxLen},
		{"authorityBoundaries", in.AuthorityBoundaries, &h.AuthorityBoundaries, limits.CreateHandoffAuthorityBoundariesMaxItems, limits.CreateHandoffAuthorityBoundariesItemMaxLen},
		{"assumptions", in.Assumptions, &h.Assumptions, limits.CreateHandoffAssumptionsMaxItems, limits.CreateHandoffAssumptionsItemMaxLen},
		{"rollbackNotes", in.RollbackNotes, &h.RollbackNotes, limits.CreateHandoffRollbackNotesMaxItems, limits.CreateHandoffRollbackNotesItemMaxLen},
	}
	for _, l := range lists {
		if *l.out, err = textList(l.field, l.in, l.maxItems, l.maxLen); err != nil {
			return h, err
		}
	}
	if len(h.Assumptions) == 0 {
		h.Assumptions = nil
	}
	if len(h.RollbackNotes) == 0 {
		h.RollbackNotes = nil
	}
	if h.EvidenceIDs, err = idList("evidenceIds", in.EvidenceIDs, limits.CreateHandoffEvidenceIdsMaxItems, limits.CreateHandoffEvidenceIdsItemMaxLen); err != nil {
		return h, err
	}
	if in.ContinuationState != nil {
		cs := strings.TrimSpace(*in.ContinuationState)
		if handoff.ContinuationStateValidator(handoff.ContinuationState(cs)) != nil {
			return h, invalid("Invalid continuationState %q; expected one of not_started, in_progress, needs_completion, likely_complete, existing_behavior_broken", cs)
		}
		h.ContinuationState = &cs
	}
	if in.LatestValidation != nil {
		v := *in.LatestValidation
		switch v.Outcome {
		case "passed", "failed", "unknown":
		default:
			return h, invalid("Invalid latestValidation.outcome %q; expected passed, failed or unknown", v.Outcome)
		}
		for _, f := range []struct {
			name string
			val  *string
			max  int
		}{
			{"latestValidation.label", &v.Label, limits.CreateHandoffLatestValidationLabelMaxLen},
			{"latestValidation.command", &v.Command, limits.CreateHandoffLatestValidationCommandMaxLen},
			{"latestValidation.observedAt", &v.ObservedAt, limits.CreateHandoffLatestValidationObservedAtMaxLen},
		} {
			*f.val = strings.TrimSpace(*f.val)
			if utf8.RuneCountInString(*f.val) > f.max {
				return h, invalid("%s exceeds %d characters", f.name, f.max)
			}
		}
		h.LatestValidation = &v
	}
	if h.NextAction, err = optionalText("nextAction", in.NextAction, limits.CreateHandoffNextActionMaxLen); err != nil {
		return h, err
	}
	if h.RepositoryRevision, err = optionalText("repositoryRevision", in.RepositoryRevision, limits.CreateHandoffRepositoryRevisionMaxLen); err != nil {
		return h, err
	}
	return h, nil
}

// UpdateHandoffStatus moves a handoff along its lifecycle (see
// [checkTransition]); an invalid transition is refused and nothing changes.
func (s *Service) UpdateHandoffStatus(ctx context.Context, handoffID, status string) (Handoff, error) {
	id := strings.TrimSpace(handoffID)
	if id == "" {
		return Handoff{}, invalid("handoffId must not be blank")
	}
	if err := validHandoffStatus(status); err != nil {
		return Handoff{}, err
	}
	now := s.now()
	var out Handoff
	err := s.st.Tx(ctx, func(tx *ent.Tx) error {
		h, err := tx.Handoff.Get(ctx, id)
		if ent.IsNotFound(err) {
			return unknownHandoff(id)
		}
		if err != nil {
			return wrapStore("read handoff "+id, err)
		}
		if err := checkTransition(string(h.Status), status); err != nil {
			return err
		}
		h, err = h.Update().SetStatus(handoff.Status(status)).SetUpdatedAt(now).Save(ctx)
		if err != nil {
			return wrapStore("update handoff "+id, err)
		}
		out = toHandoff(h)
		return nil
	})
	return out, err
}

// GetHandoff returns the durable handoff record.
func (s *Service) GetHandoff(ctx context.Context, handoffID string) (Handoff, error) {
	id := strings.TrimSpace(handoffID)
	if id == "" {
		return Handoff{}, invalid("handoffId must not be blank")
	}
	h, err := s.st.Client().Handoff.Get(ctx, id)
	if ent.IsNotFound(err) {
		return Handoff{}, unknownHandoff(id)
	}
	if err != nil {
		return Handoff{}, wrapStore("read handoff "+id, err)
	}
	return toHandoff(h), nil
}

// GetHandoffPacket rebuilds a handoff's delivery packet from the durable
// record: the fields omitted at creation stay omitted, with a note saying
// to request them from the work item.
func (s *Service) GetHandoffPacket(ctx context.Context, handoffID string) (Packet, error) {
	h, err := s.GetHandoff(ctx, handoffID)
	if err != nil {
		return Packet{}, err
	}
	return s.rebuildPacket(&h)
}
