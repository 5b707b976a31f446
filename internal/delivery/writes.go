package delivery

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"

	"github.com/agent-interop/runtime/internal/providers"
)

// This file is the ledger of the provider writes that have no session tool
// of their own: the Freebuff thread tools (send_thread_message,
// stop_thread, resume_thread, set_thread_model, set_thread_reasoning). They
// are operations like every other send: recorded before they are
// dispatched, owned, followed and settled the same way.

// Operation kinds of the Freebuff thread writes besides send and cancel
// (stop_thread is a cancel).
const (
	OpResume       = "resume"
	OpSetModel     = "set_model"
	OpSetReasoning = "set_reasoning"
)

// Kinds lists every operation kind the ledger records, for filters.
func Kinds() []string {
	return []string{OpSend, OpCancel, OpPermission, OpResume, OpSetModel, OpSetReasoning}
}

// WriteRequest is one provider write dispatched by its caller's own
// function (a Freebuff thread write).
type WriteRequest struct {
	Provider       string
	NativeID       string
	Operation      string // OpSend, OpCancel, OpResume, OpSetModel or OpSetReasoning
	IdempotencyKey string
	// Text is a send's prompt: it must not be blank, and its SHA-256 is
	// stored so that settlement can find it in the provider's history.
	Text string
	// Request is stored in the operation's detail (the model, the effort)
	// and compared on a replay.
	Request map[string]any
	// Dispatch sends the write once it is recorded; op is the recorded
	// operation (its id is the correlation id). Its errors follow the
	// adapter contract: providers.NotSentError, RejectedError or
	// UnsupportedError when it certainly did not take effect, anything else
	// is uncertain (delivery_unknown, never resent).
	Dispatch func(ctx context.Context, a providers.Adapter, op Operation) (providers.Receipt, error)
}

// Write records and dispatches one write, like Send (and like Send, the
// same request again under its key answers the recorded operation).
func (s *Service) Write(ctx context.Context, req WriteRequest) (Result, error) {
	sp, err := writeSpec(req)
	if err != nil {
		return Result{}, err
	}
	return s.run(ctx, sp)
}

func writeSpec(req WriteRequest) (spec, error) {
	switch req.Operation {
	case OpSend, OpCancel, OpResume, OpSetModel, OpSetReasoning:
	default:
		return spec{}, &InvalidError{Msg: "operation must be one of send, cancel, resume, set_model, set_reasoning; received " + req.Operation}
	}
	if req.Dispatch == nil {
		return spec{}, &InvalidError{Msg: "a write needs a dispatch function"}
	}
	sp := spec{provider: req.Provider, nativeID: req.NativeID, key: req.IdempotencyKey, op: req.Operation,
		request: req.Request, dispatch: req.Dispatch}
	if req.Operation == OpSend {
		if strings.TrimSpace(req.Text) == "" {
			return spec{}, &InvalidError{Msg: "Message text must not be blank"}
		}
		sum := sha256.Sum256([]byte(req.Text))
		sp.textSHA = hex.EncodeToString(sum[:])
	}
	return sp, nil
}

// sameRequest reports whether a recorded operation is the request sp
// describes, to the same session.
func sameRequest(o Operation, provider providers.ID, nativeID string, sp spec) bool {
	if o.Provider != provider || o.NativeID != nativeID || o.Operation != sp.op || o.TextSHA256 != sp.textSHA {
		return false
	}
	stored, err1 := json.Marshal(decodeDetail(o.Detail).Request)
	asked, err2 := json.Marshal(normalRequest(sp.request))
	return err1 == nil && err2 == nil && bytes.Equal(stored, asked)
}

// normalRequest is the request as it reads back from the store (an empty
// one is not stored).
func normalRequest(r map[string]any) map[string]any {
	if len(r) == 0 {
		return nil
	}
	b, err := json.Marshal(r)
	if err != nil {
		return r
	}
	var out map[string]any
	if json.Unmarshal(b, &out) != nil {
		return r
	}
	return out
}

// Replay answers a repeated request (KeyRule) with its recorded
// operation, as the ledger knows it now; nothing is dispatched. An
// uncertain one answers as it did the first time.
func Replay(o Operation) (Result, error) {
	res := Result{Operation: o, Receipt: o.Receipt()}
	if o.Status == providers.StatusDeliveryUnknown {
		return res, &DeliveryUnknownError{Result: res, Reason: o.Reason()}
	}
	return res, nil
}

// SameSend reports whether req, to provider:nativeID, is the request o
// records (KeyRule): the same kind, session, text and options.
func SameSend(o Operation, provider, nativeID string, req SendRequest) bool {
	sp, err := sendSpec(req)
	return err == nil && sameRequest(o, providers.ID(provider), nativeID, sp)
}
