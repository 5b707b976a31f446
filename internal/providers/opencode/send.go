package opencode

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/agent-interop/runtime/internal/providers"
)

// Provider states of receipts.
const (
	stateTransportAccepted = "transport_accepted"
	stateAbortRequested    = "abort_requested"
	stateDecisionSent      = "decision_sent"
	stateStoredForNext     = "stored_for_next_prompt"
)

// Send queues a prompt with POST /session/:id/prompt_async. A 204 is only
// transport acceptance: the receipt is queued and its outcome is reported
// later through Host.ReportOutcome when the event stream shows it. Mode
// "steer" is delivered exactly like "send". Reasoning becomes the prompt's
// model variant. Nothing is ever retried.
func (a *Adapter) Send(ctx context.Context, nativeID, text string, opts providers.SendOptions) (providers.Receipt, error) {
	op := "send"
	switch opts.Mode {
	case "", "send":
	case "steer":
		op = "steer"
	default:
		return providers.Receipt{}, &providers.NotSentError{Err: fmt.Errorf("unknown send mode %q (send or steer)", opts.Mode)}
	}
	if strings.TrimSpace(text) == "" {
		return providers.Receipt{}, &providers.NotSentError{Err: errors.New("message text must not be blank")}
	}
	msgID := a.msgIDs.next(a.clock.Now())
	body := map[string]any{"messageID": msgID, "parts": []any{map[string]any{"type": "text", "text": text}}}
	variant := opts.Reasoning
	if opts.Model != nil {
		if opts.Model.ProviderID == "" || opts.Model.ModelID == "" {
			return providers.Receipt{}, &providers.NotSentError{Err: errors.New("model needs providerID and modelID")}
		}
		body["model"] = map[string]any{"providerID": opts.Model.ProviderID, "modelID": opts.Model.ModelID}
		if opts.Model.Variant != "" {
			variant = opts.Model.Variant
		}
	}
	if variant == "" {
		a.mu.Lock()
		variant = a.variants[nativeID]
		a.mu.Unlock()
	}
	if variant != "" {
		body["variant"] = variant
	}
	if opts.Agent != "" {
		body["agent"] = opts.Agent
	}

	ep, err := a.current(ctx)
	if err != nil {
		return providers.Receipt{}, &providers.NotSentError{Err: fmt.Errorf("sending to OpenCode: %w", err)}
	}
	dir, err := a.sessionDir(ctx, nativeID)
	if err != nil {
		return providers.Receipt{}, &providers.NotSentError{Err: fmt.Errorf("sending to OpenCode session %s: %w", nativeID, err)}
	}

	// Follow the session on the event stream before the prompt leaves, so
	// its first events are not missed. If the stream is not connected yet,
	// the outcome is caught up from the session's messages once it is.
	ref := newRef()
	connected, release := a.hub.hold(ctx)
	defer release()
	tracked := a.hub.track(nativeID, ref, text, msgID)
	_, err = a.do(ctx, ep.base, request{
		method: http.MethodPost, path: sessionPath(nativeID, "/prompt_async"), query: dirQuery(dir), body: body, write: true,
	})
	if err != nil {
		a.hub.untrack(nativeID, ref)
		return providers.Receipt{}, classify(err, func() { a.invalidate(ep) })
	}
	completion := "not_observed"
	switch {
	case tracked && connected:
		completion = "observing"
	case tracked:
		completion = "observing_once_the_event_stream_connects"
	}
	if tracked {
		defer a.hub.ready(nativeID, ref)
	}
	return providers.Receipt{
		Provider: providers.OpenCode, NativeID: nativeID, Operation: op,
		Accepted: true, Status: providers.StatusQueued, ProviderState: stateTransportAccepted,
		Detail:       map[string]any{"delivery": stateTransportAccepted, "completion": completion, "endpoint": ep.base, "messageId": msgID},
		NativeTurnID: msgID,
		Ref:          ref,
	}, nil
}

// classify maps a failed write to the delivery contract: not sent, rejected
// by the server (4xx), or uncertain.
func classify(err error, onNotSent func()) error {
	if notSent(err) {
		onNotSent()
		return &providers.NotSentError{Err: err}
	}
	var ae *APIError
	if errors.As(err, &ae) && ae.Status >= 400 && ae.Status < 500 {
		return &providers.RejectedError{
			Reason: ae.Error(),
			Detail: map[string]any{"status": ae.Status, "name": ae.Name, "message": ae.Message},
		}
	}
	return err
}

// newRef returns a fresh correlation handle for Host.ReportOutcome.
func newRef() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "oc_" + hex.EncodeToString(b[:])
}

// Cancel aborts the session's running turn (POST /session/:id/abort).
func (a *Adapter) Cancel(ctx context.Context, nativeID string) (providers.Receipt, error) {
	ep, err := a.current(ctx)
	if err != nil {
		return providers.Receipt{}, &providers.NotSentError{Err: fmt.Errorf("cancelling OpenCode session: %w", err)}
	}
	dir, err := a.sessionDir(ctx, nativeID)
	if err != nil {
		return providers.Receipt{}, &providers.NotSentError{Err: fmt.Errorf("cancelling OpenCode session %s: %w", nativeID, err)}
	}
	var aborted bool
	if _, err := a.do(ctx, ep.base, request{
		method: http.MethodPost, path: sessionPath(nativeID, "/abort"), query: dirQuery(dir), out: &aborted, write: true,
	}); err != nil {
		return providers.Receipt{}, classify(err, func() { a.invalidate(ep) })
	}
	if !aborted {
		return providers.Receipt{}, &providers.RejectedError{Reason: "OpenCode answered false to POST /session/" + nativeID + "/abort"}
	}
	return providers.Receipt{
		Provider: providers.OpenCode, NativeID: nativeID, Operation: "cancel",
		Accepted: true, Status: providers.StatusCompleted, ProviderState: stateAbortRequested,
		Detail: map[string]any{"aborted": true},
	}, nil
}

// SetModel is not supported: OpenCode takes the model per prompt.
func (a *Adapter) SetModel(context.Context, string, providers.Model) (providers.Receipt, error) {
	return providers.Receipt{}, &providers.UnsupportedError{Provider: providers.OpenCode, Operation: "model changes", Reason: modelReason}
}

// SetReasoning stores effort as the model variant of the session's next
// prompts (OpenCode has no session-level reasoning setting). "default" or an
// empty effort clears it.
func (a *Adapter) SetReasoning(ctx context.Context, nativeID, effort string) (providers.Receipt, error) {
	effort = strings.TrimSpace(effort)
	if _, err := a.sessionDir(ctx, nativeID); err != nil {
		return providers.Receipt{}, &providers.NotSentError{Err: fmt.Errorf("setting reasoning of OpenCode session %s: %w", nativeID, err)}
	}
	a.mu.Lock()
	if effort == "" || effort == "default" {
		delete(a.variants, nativeID)
	} else {
		a.variants[nativeID] = effort
	}
	a.mu.Unlock()
	return providers.Receipt{
		Provider: providers.OpenCode, NativeID: nativeID, Operation: "set_reasoning",
		Accepted: true, Status: providers.StatusCompleted, ProviderState: stateStoredForNext,
		Detail: map[string]any{"variant": effort, "appliesTo": "the next prompt_async of this session"},
	}, nil
}
