package handlers

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/agent-interop/runtime/catalogs"
	"github.com/agent-interop/runtime/internal/claims"
	"github.com/agent-interop/runtime/internal/providers"
	"github.com/agent-interop/runtime/internal/workflow"
)

// ClaimConflictError refuses an allow that would break another session's
// claim.
type ClaimConflictError struct {
	RequestID string
	Conflicts []claims.EditConflict
}

func (e *ClaimConflictError) Error() string {
	parts := make([]string, 0, len(e.Conflicts))
	for _, c := range e.Conflicts {
		parts = append(parts, fmt.Sprintf("%s is claimed exclusively by %s (claim %s on %s, work %s, until %s)",
			c.Path, c.Holder, c.ClaimID, c.Resource, c.WorkID, c.ExpiresAt.UTC().Format(time.RFC3339)))
	}
	return fmt.Sprintf("Permission %s not allowed: %s. Pass override: true to allow it anyway (recorded as evidence).", e.RequestID, strings.Join(parts, "; "))
}

// editConflicts are the claims req would break, related through the
// session's recorded workspace.
func (t SessionTools) editConflicts(ctx context.Context, req providers.PermissionRequest) ([]claims.EditConflict, error) {
	if t.Claims == nil || len(req.Paths) == 0 {
		return nil, nil
	}
	ws, err := t.Registry.Workspace(ctx, req.Provider, req.NativeID)
	if err != nil {
		return nil, err
	}
	return t.Claims.EditConflicts(ctx, string(req.Provider)+":"+req.NativeID, ws, req.Paths)
}

// checkClaims refuses an allow of a conflicting request without override,
// and records an override.
func (t SessionTools) checkClaims(ctx context.Context, in *catalogs.RespondToPermissionInput) error {
	if t.Claims == nil {
		return nil
	}
	list, err := t.Registry.PendingPermissions(ctx, in.Provider, in.NativeID)
	if err != nil {
		return nil // the delivery path reports an unknown provider or session
	}
	var req *providers.PermissionRequest
	for i := range list.Requests {
		if list.Requests[i].RequestID == in.RequestID {
			req = &list.Requests[i]
			break
		}
	}
	if req == nil || !isAllow(in.Decision, req.Options) {
		return nil
	}
	conflicts, err := t.editConflicts(ctx, *req)
	if err != nil || len(conflicts) == 0 {
		return err
	}
	if in.Override == nil || !*in.Override {
		return &ClaimConflictError{RequestID: in.RequestID, Conflicts: conflicts}
	}
	return t.recordOverride(ctx, in, *req, conflicts)
}

// recordOverride stores one approval evidence per overridden claim's work.
func (t SessionTools) recordOverride(ctx context.Context, in *catalogs.RespondToPermissionInput, req providers.PermissionRequest, conflicts []claims.EditConflict) error {
	if t.Workflow == nil {
		return fmt.Errorf("override of claims on permission %s: no evidence store to record it", in.RequestID)
	}
	session := string(req.Provider) + ":" + req.NativeID
	byWork := map[string][]claims.EditConflict{}
	for _, c := range conflicts {
		byWork[c.WorkID] = append(byWork[c.WorkID], c)
	}
	for work, cs := range byWork {
		holders := make([]string, 0, len(cs))
		for _, c := range cs {
			holders = append(holders, c.Holder+" on "+c.Resource)
		}
		w := work
		_, err := t.Workflow.AddEvidence(ctx, workflow.AddEvidenceInput{
			WorkID: &w, SessionID: &session, Kind: "approval", Trust: "runtime_observed",
			Source:  workflow.EvidenceSource{Adapter: string(req.Provider), Protocol: req.Method, NativeEventID: in.RequestID},
			Summary: fmt.Sprintf("Claim override: %s allowed %s despite %s", session, strings.Join(req.Paths, ", "), strings.Join(holders, ", ")),
			Data:    map[string]any{"requestId": in.RequestID, "decision": in.Decision, "paths": req.Paths, "conflicts": cs, "method": req.Method},
		})
		if err != nil {
			return fmt.Errorf("record the claim override of permission %s: %w", in.RequestID, err)
		}
	}
	return nil
}

// isAllow reports whether decision (an option kind or id) allows the
// request: it resolves the offered option and looks at its kind or id.
func isAllow(decision string, options []providers.PermissionOption) bool {
	word := decision
	for _, o := range options {
		if o.ID == decision || o.Kind == decision {
			word = o.Kind
			if word == "" {
				word = o.ID
			}
			break
		}
	}
	w := strings.ToLower(word)
	for _, prefix := range []string{"allow", "accept", "approve"} {
		if strings.HasPrefix(w, prefix) {
			return true
		}
	}
	return false
}
