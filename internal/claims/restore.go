package claims

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agent-interop/runtime/ent"
	"github.com/agent-interop/runtime/ent/claim"
	"github.com/agent-interop/runtime/ent/workitem"
)

// NormalizeResource returns resource as a claim of kind stores it: trimmed,
// and for file and directory claims cleaned as a slash-separated path.
func NormalizeResource(kind Kind, resource string) string { return normalizeResource(kind, resource) }

// Restore records a claim made elsewhere (migrate import-state brings 0.3.x
// claims over) with its own id, times and status, inside the caller's
// transaction tx. Kind and mode are checked and the resource is normalized
// as Acquire does; the TTL bounds do not apply (the lease is given). Status
// is active or released (an expired claim is an active one whose lease has
// ended). A claim still active at now that conflicts with an active claim
// of another session, in the store or restored before it in the same
// transaction, is refused with a *ConflictError: two conflicting claims are
// never both active.
func Restore(ctx context.Context, tx *ent.Tx, c Claim, now time.Time) (Claim, error) {
	req, err := checkRestored(c)
	if err != nil {
		return Claim{}, err
	}
	ok, err := tx.WorkItem.Query().Where(workitem.ID(req.WorkID)).Exist(ctx)
	if err != nil {
		return Claim{}, fmt.Errorf("look up work %s: %w", req.WorkID, err)
	}
	if !ok {
		return Claim{}, &NotFoundError{What: "work", ID: req.WorkID}
	}
	if req.Status == StatusActive && now.Before(req.ExpiresAt) {
		if err := checkConflicts(ctx, tx, req, now); err != nil {
			return Claim{}, err
		}
	}
	row, err := tx.Claim.Create().
		SetID(req.ID).
		SetWorkID(req.WorkID).
		SetSessionID(req.SessionID).
		SetResource(req.Resource).
		SetKind(claim.Kind(req.Kind)).
		SetMode(claim.Mode(req.Mode)).
		SetStatus(claim.Status(req.Status)).
		SetAcquiredAt(req.AcquiredAt).
		SetExpiresAt(req.ExpiresAt).
		SetNillableReleasedAt(req.ReleasedAt).
		Save(ctx)
	if err != nil {
		return Claim{}, fmt.Errorf("insert claim %s: %w", req.ID, err)
	}
	return view(row, now), nil
}

// checkRestored validates a claim given to Restore and normalizes it.
func checkRestored(c Claim) (Claim, error) {
	c.ID, c.WorkID, c.SessionID = strings.TrimSpace(c.ID), strings.TrimSpace(c.WorkID), strings.TrimSpace(c.SessionID)
	switch {
	case c.ID == "":
		return c, invalidf("id must not be blank")
	case c.WorkID == "":
		return c, invalidf("workId must not be blank")
	case c.SessionID == "":
		return c, invalidf("sessionId must not be blank")
	}
	switch c.Kind {
	case KindFile, KindDirectory, KindInterface, KindWorkspace:
	default:
		return c, invalidf("kind must be one of file, directory, interface, workspace; received %q", c.Kind)
	}
	switch c.Mode {
	case ModeExclusive, ModeSharedRead:
	default:
		return c, invalidf("mode must be one of exclusive, shared_read; received %q", c.Mode)
	}
	c.Resource = normalizeResource(c.Kind, c.Resource)
	switch {
	case c.Resource == "":
		return c, invalidf("resource must not be blank")
	case utf8.RuneCountInString(c.Resource) > MaxResourceLen:
		return c, invalidf("resource must be at most %d characters; received %d", MaxResourceLen, utf8.RuneCountInString(c.Resource))
	}
	switch c.Status {
	case StatusActive:
		c.ReleasedAt = nil
	case StatusReleased:
		if c.ReleasedAt == nil {
			return c, invalidf("a released claim needs releasedAt")
		}
		t := c.ReleasedAt.UTC()
		c.ReleasedAt = &t
	default:
		return c, invalidf("status must be active or released; received %q", c.Status)
	}
	if c.AcquiredAt.IsZero() || c.ExpiresAt.IsZero() {
		return c, invalidf("acquiredAt and expiresAt are required")
	}
	c.AcquiredAt, c.ExpiresAt = c.AcquiredAt.UTC(), c.ExpiresAt.UTC()
	return c, nil
}
