package desktop

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/agent-interop/runtime/internal/providers"
	"github.com/agent-interop/runtime/internal/providers/freebuff/core"
	"github.com/agent-interop/runtime/internal/security"
)

// write performs one Desktop mutation under the delivery contract:
//   - the connection is re-discovered first, and a write needs a launch id
//     verified through /healthz (otherwise NotSent with the 0.3.x reason);
//   - a write refused for authorization (401/403: a rotated launch id or a
//     new port) is retried exactly once after re-discovery; so is a write
//     whose connection could not even be opened;
//   - a timeout or a connection cut after the request may have left is
//     returned as an uncertain error and never retried;
//   - any other 4xx is a RejectedError with the provider's reason.
func (d *Backend) write(ctx context.Context, op, threadID, p string, body any) (providers.Receipt, error) {
	for attempt := 0; attempt < 2; attempt++ {
		conn, err := d.connection(ctx, true)
		if err != nil {
			return providers.Receipt{}, core.NotSent(err)
		}
		if !conn.Verified {
			return providers.Receipt{}, core.NotSent(&core.ReadOnlyError{Reason: core.ReasonDesktopUnverified})
		}
		rctx, cancel := d.withTimeout(ctx, d.cfg.RequestTimeout, TagRequest)
		res, err := d.do(rctx, conn, http.MethodPost, p, body)
		cancel()
		if err != nil {
			var se *sendError
			if errors.As(err, &se) && !se.sent {
				if attempt == 0 && ctx.Err() == nil {
					continue
				}
				return providers.Receipt{}, core.NotSent(fmt.Errorf("Freebuff Desktop %s: %w", op, err))
			}
			return providers.Receipt{}, fmt.Errorf("Freebuff Desktop %s outcome unknown (the request may have been delivered): %w", op, err)
		}
		switch {
		case res.status >= 300 && res.status < 400:
			return providers.Receipt{}, &providers.RejectedError{Reason: fmt.Sprintf("Freebuff Desktop answered HTTP %d with a redirect; redirects are refused", res.status)}
		case res.status == http.StatusUnauthorized || res.status == http.StatusForbidden:
			if attempt == 0 {
				d.cfg.Logger.Info("freebuff desktop write refused for authorization; re-discovering", "op", op, "status", res.status)
				continue
			}
			return providers.Receipt{}, &providers.RejectedError{Reason: res.reason() + " (launch authorization refused after re-discovery)"}
		case res.status >= 400 && res.status < 500:
			if res.status == http.StatusNotFound && threadID != "" {
				return providers.Receipt{}, &providers.RejectedError{Reason: (&core.NotFoundError{Kind: "thread", ID: threadID}).Error() + " (" + res.reason() + ")"}
			}
			return providers.Receipt{}, &providers.RejectedError{Reason: res.reason()}
		case res.status >= 500:
			return providers.Receipt{}, fmt.Errorf("Freebuff Desktop %s outcome unknown: %s", op, res.reason())
		case res.status < 200 || res.status > 299:
			return providers.Receipt{}, fmt.Errorf("Freebuff Desktop %s outcome unknown: unexpected HTTP %d", op, res.status)
		}
		var detail any = map[string]any{}
		if len(bytes.TrimSpace(res.body)) > 0 {
			if v, err := core.DecodeJSON(res.body); err == nil {
				detail = security.SanitizeFreebuff(v)
			}
		}
		// A prompt is queued: its turn's end is observed later. The
		// orchestrator applies a stop, resume, model or effort change
		// before it answers, so its 2xx is the observed result.
		status, state := providers.StatusQueued, "accepted"
		if op != "send" && op != "create" {
			status, state = providers.StatusCompleted, "applied"
		}
		return providers.Receipt{
			Provider:      providers.Freebuff,
			NativeID:      threadID,
			Operation:     op,
			Accepted:      true,
			Status:        status,
			ProviderState: state,
			Detail:        detail,
		}, nil
	}
	return providers.Receipt{}, core.NotSent(errors.New("Freebuff Desktop write was not attempted"))
}

// Send posts a prompt to a thread; the receipt is queued.
func (d *Backend) Send(ctx context.Context, id, text string) (providers.Receipt, error) {
	return d.write(ctx, "send", id, threadPath(id, "/message"), map[string]any{"text": text})
}

// Stop stops a thread's running turn.
func (d *Backend) Stop(ctx context.Context, id string) (providers.Receipt, error) {
	// The Desktop ends a stopped turn as "closed": the turn it ends is
	// aborted, not answered. Marked before the write, whose answer may
	// come after the turn's end frame; unmarked when the stop was refused.
	marked := d.norm.markStopped(id, true)
	r, err := d.write(ctx, "stop", id, threadPath(id, "/stop"), map[string]any{})
	if marked && (err != nil || !r.Accepted) {
		d.norm.markStopped(id, false)
	}
	return r, err
}

// Resume restarts a thread's queue.
func (d *Backend) Resume(ctx context.Context, id string) (providers.Receipt, error) {
	return d.write(ctx, "resume", id, threadPath(id, "/resume"), map[string]any{})
}

// SetModel sets a thread's model for harness.
func (d *Backend) SetModel(ctx context.Context, id, model, harness string) (providers.Receipt, error) {
	return d.write(ctx, "set_model", id, threadPath(id, "/agent"), map[string]any{"model": model, "harnessId": harness})
}

// SetReasoning sets (nil: clears) a thread's reasoning effort.
func (d *Backend) SetReasoning(ctx context.Context, id string, effort *string) (providers.Receipt, error) {
	var e any
	if effort != nil {
		e = *effort
	}
	return d.write(ctx, "set_reasoning", id, threadPath(id, "/effort"), map[string]any{"effort": e})
}

// CreateThread creates a Desktop thread in a project.
func (d *Backend) CreateThread(ctx context.Context, opts core.CreateThreadOptions) (core.ThreadSummary, error) {
	body := map[string]any{"projectPath": opts.ProjectPath}
	if opts.Title != "" {
		body["title"] = opts.Title
	}
	rec, err := d.write(ctx, "create", "", "/api/threads", body)
	if err != nil {
		return core.ThreadSummary{}, err
	}
	t := core.AsMap(rec.Detail)
	if inner := core.AsMap(t["thread"]); inner != nil {
		t = inner
	}
	if security.ValidateID(core.Str(t["id"])) != nil {
		return core.ThreadSummary{}, errors.New("Freebuff created a thread but returned no valid id")
	}
	return threadSummary(t, opts.ProjectPath), nil
}
