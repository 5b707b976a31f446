package claims

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agent-interop/runtime/ent"
	"github.com/agent-interop/runtime/ent/claim"
	"github.com/agent-interop/runtime/ent/claimconflict"
	"github.com/agent-interop/runtime/ent/workitem"
)

// AcquireInput is the input of Acquire. Zero Kind, Mode and TTLSeconds
// take the defaults (file, exclusive, 900 s).
type AcquireInput struct {
	WorkID     string
	SessionID  string
	Resource   string
	Kind       Kind
	Mode       Mode
	TTLSeconds int
}

// Acquire records a new active claim, or refuses it with a *ConflictError
// naming an active claim of another session that overlaps it. The check and
// the insert are one write transaction, so racing acquisitions in any
// number of processes have exactly one winner.
func (s *Service) Acquire(ctx context.Context, in AcquireInput) (Claim, error) {
	req, ttl, err := s.validate(in)
	if err != nil {
		return Claim{}, err
	}
	var out Claim
	var refused *ConflictError
	err = s.tx(ctx, func(tx *ent.Tx) error {
		refused = nil
		now := s.now()
		ok, err := tx.WorkItem.Query().Where(workitem.ID(req.WorkID)).Exist(ctx)
		if err != nil {
			return fmt.Errorf("look up work %s: %w", req.WorkID, err)
		}
		if !ok {
			return &NotFoundError{What: "work", ID: req.WorkID}
		}
		if err := checkConflicts(ctx, tx, req, now); err != nil {
			var conflict *ConflictError
			if !errors.As(err, &conflict) {
				return err
			}
			// The refusal is recorded (and committed) with the state
			// that caused it, so the traffic desk can show it.
			if err := recordConflict(ctx, tx, req, conflict, now); err != nil {
				return err
			}
			refused = conflict
			return nil
		}
		row, err := tx.Claim.Create().
			SetID(s.newID()).
			SetWorkID(req.WorkID).
			SetSessionID(req.SessionID).
			SetResource(req.Resource).
			SetKind(claim.Kind(req.Kind)).
			SetMode(claim.Mode(req.Mode)).
			SetStatus(claim.StatusActive).
			SetAcquiredAt(now).
			SetExpiresAt(now.Add(ttl)).
			Save(ctx)
		if err != nil {
			return fmt.Errorf("insert claim: %w", err)
		}
		out = view(row, now)
		return nil
	})
	if err != nil {
		return Claim{}, err
	}
	if refused != nil {
		return Claim{}, refused
	}
	return out, nil
}

// MaxConflictRecords is how many refused acquisitions the store keeps
// (newest first); older records are deleted as new ones arrive.
const MaxConflictRecords = 1000

// recordConflict stores one refused acquisition and drops the records
// beyond MaxConflictRecords.
func recordConflict(ctx context.Context, tx *ent.Tx, req Claim, c *ConflictError, now time.Time) error {
	row, err := tx.ClaimConflict.Create().
		SetWorkID(req.WorkID).SetSessionID(req.SessionID).SetResource(req.Resource).
		SetKind(string(req.Kind)).SetMode(string(req.Mode)).
		SetHeldClaimID(c.Held.ID).SetHeldSessionID(c.Held.SessionID).SetRefusedAt(now).
		Save(ctx)
	if err != nil {
		return fmt.Errorf("record the refused claim: %w", err)
	}
	if cut := row.ID - MaxConflictRecords; cut > 0 {
		if _, err := tx.ClaimConflict.Delete().Where(claimconflict.IDLTE(cut)).Exec(ctx); err != nil {
			return fmt.Errorf("trim the refused-claim records: %w", err)
		}
	}
	return nil
}

// checkConflicts refuses req when an unexpired active claim of another
// session overlaps it, naming the oldest such claim (see Overlapping).
func checkConflicts(ctx context.Context, tx *ent.Tx, req Claim, now time.Time) error {
	held, err := overlapping(ctx, tx.Client(), OverlapQuery{
		Kind: req.Kind, Resource: req.Resource, ExcludeSession: req.SessionID,
		ExclusiveOnly: req.Mode == ModeSharedRead, Limit: 1,
	}, now)
	if err != nil {
		return err
	}
	if len(held) > 0 {
		return &ConflictError{Kind: req.Kind, Resource: req.Resource, Mode: req.Mode, Held: held[0]}
	}
	return nil
}

// validate applies defaults and bounds, and normalizes the resource.
func (s *Service) validate(in AcquireInput) (Claim, time.Duration, error) {
	c := Claim{
		WorkID:    strings.TrimSpace(in.WorkID),
		SessionID: strings.TrimSpace(in.SessionID),
		Kind:      in.Kind,
		Mode:      in.Mode,
	}
	if c.Kind == "" {
		c.Kind = KindFile
	}
	if c.Mode == "" {
		c.Mode = ModeExclusive
	}
	switch {
	case c.WorkID == "":
		return c, 0, invalidf("workId must not be blank")
	case c.SessionID == "":
		return c, 0, invalidf("sessionId must not be blank")
	}
	switch c.Kind {
	case KindFile, KindDirectory, KindInterface, KindWorkspace:
	default:
		return c, 0, invalidf("kind must be one of file, directory, interface, workspace; received %q", in.Kind)
	}
	switch c.Mode {
	case ModeExclusive, ModeSharedRead:
	default:
		return c, 0, invalidf("mode must be one of exclusive, shared_read; received %q", in.Mode)
	}
	c.Resource = normalizeResource(c.Kind, in.Resource)
	switch {
	case c.Resource == "":
		return c, 0, invalidf("resource must not be blank")
	case utf8.RuneCountInString(c.Resource) > MaxResourceLen:
		return c, 0, invalidf("resource must be at most %d characters; received %d", MaxResourceLen, utf8.RuneCountInString(c.Resource))
	}
	ttl := in.TTLSeconds
	if ttl == 0 {
		ttl = DefaultTTLSeconds
	}
	if ttl < MinTTLSeconds || ttl > MaxTTLSeconds {
		return c, 0, invalidf("ttlSeconds must be between %d and %d; received %d", MinTTLSeconds, MaxTTLSeconds, in.TTLSeconds)
	}
	return c, time.Duration(ttl) * time.Second, nil
}

// view converts a row to the client shape; an active claim whose lease has
// ended is reported as expired.
func view(row *ent.Claim, now time.Time) Claim {
	c := Claim{
		ID:         row.ID,
		WorkID:     row.WorkID,
		SessionID:  row.SessionID,
		Resource:   row.Resource,
		Kind:       Kind(row.Kind),
		Mode:       Mode(row.Mode),
		Status:     Status(row.Status),
		AcquiredAt: row.AcquiredAt.UTC(),
		ExpiresAt:  row.ExpiresAt.UTC(),
	}
	if row.ReleasedAt != nil {
		t := row.ReleasedAt.UTC()
		c.ReleasedAt = &t
	}
	if c.Status == StatusActive && !now.Before(c.ExpiresAt) {
		c.Status = StatusExpired
	}
	return c
}
