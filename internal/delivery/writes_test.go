package delivery

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agent-interop/runtime/internal/providers"
)

// TestWriteReplaysTheSameRequest: a write repeated under its key answers
// the recorded operation without dispatching; the key of another request
// (text, kind, session or request detail) is refused; an uncertain write
// answers delivery_unknown again and is never dispatched again.
func TestWriteReplaysTheSameRequest(t *testing.T) {
	e := newEnv(t, "")
	ctx := context.Background()
	var dispatched atomic.Int64
	write := func(op, nativeID, text, key string, request map[string]any, err error) WriteRequest {
		return WriteRequest{Provider: "codex", NativeID: nativeID, Operation: op, IdempotencyKey: key, Text: text, Request: request,
			Dispatch: func(context.Context, providers.Adapter, Operation) (providers.Receipt, error) {
				dispatched.Add(1)
				return providers.Receipt{Operation: op, Accepted: true, Status: providers.StatusQueued}, err
			}}
	}
	first, err := e.svc.Write(ctx, write(OpSetModel, "t1", "", "k1", map[string]any{"model": "m"}, nil))
	if err != nil {
		t.Fatal(err)
	}
	if first.Operation.Operation != OpSetModel || first.Operation.IdempotencyKey != "k1" || first.Receipt.Status != providers.StatusQueued {
		t.Fatalf("first = %+v", first)
	}
	again, err := e.svc.Write(ctx, write(OpSetModel, "t1", "", "k1", map[string]any{"model": "m"}, nil))
	if err != nil || again.Operation.ID != first.Operation.ID || again.Receipt.Status != providers.StatusQueued {
		t.Fatalf("replay = %+v, %v", again, err)
	}
	for name, req := range map[string]WriteRequest{
		"another request": write(OpSetModel, "t1", "", "k1", map[string]any{"model": "other"}, nil),
		"another kind":    write(OpResume, "t1", "", "k1", nil, nil),
		"another session": write(OpSetModel, "t2", "", "k1", map[string]any{"model": "m"}, nil),
	} {
		var dup *DuplicateKeyError
		if _, err := e.svc.Write(ctx, req); !errors.As(err, &dup) || dup.Existing.ID != first.Operation.ID ||
			!strings.Contains(err.Error(), "for other arguments; nothing was sent. Rule: "+KeyRule) {
			t.Fatalf("%s: %v, want the key refused", name, err)
		}
	}
	// A send's text is part of the request.
	if _, err := e.svc.Write(ctx, write(OpSend, "t1", "hello", "k2", nil, nil)); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Write(ctx, write(OpSend, "t1", "hello!", "k2", nil, nil)); !errors.As(err, new(*DuplicateKeyError)) {
		t.Fatalf("another text: %v", err)
	}
	// An uncertain dispatch: delivery_unknown, the same answer on a replay.
	for i := range 2 {
		_, err := e.svc.Write(ctx, write(OpSend, "t1", "maybe", "k3", nil, errors.New("connection reset after the request left")))
		var du *DeliveryUnknownError
		if !errors.As(err, &du) || du.Result.Operation.Status != providers.StatusDeliveryUnknown || !strings.Contains(du.Reason, "connection reset") {
			t.Fatalf("uncertain write, call %d: %v", i+1, err)
		}
	}
	if n := dispatched.Load(); n != 3 {
		t.Fatalf("dispatched %d writes, want 3 (one per key)", n)
	}
	// Bad requests are refused before anything is recorded.
	for name, req := range map[string]WriteRequest{
		"unknown kind": write("permission", "t1", "", "k4", nil, nil),
		"blank text":   write(OpSend, "t1", " ", "k5", nil, nil),
	} {
		if _, err := e.svc.Write(ctx, req); !errors.As(err, new(*InvalidError)) {
			t.Fatalf("%s: %v", name, err)
		}
	}
}

// TestOpenWritesOfAGoneProcessSettle: a resume, model or reasoning change
// left open by a gone process has no record in a provider's history: it
// becomes delivery_unknown, never dispatched again.
func TestOpenWritesOfAGoneProcessSettle(t *testing.T) {
	e := newEnv(t, "")
	ctx := context.Background()
	var ids []string
	for _, op := range []string{OpResume, OpSetModel, OpSetReasoning} {
		r, err := e.svc.Write(ctx, WriteRequest{Provider: "codex", NativeID: "t1", Operation: op,
			Dispatch: func(context.Context, providers.Adapter, Operation) (providers.Receipt, error) {
				return providers.Receipt{Operation: op, Accepted: true, Status: providers.StatusQueued}, nil
			}})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.Operation.ID)
	}
	if err := e.svc.Close(); err != nil {
		t.Fatal(err)
	}
	next := newEnv(t, e.path)
	settled, err := next.svc.Settle(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(settled) != 3 {
		t.Fatalf("settled %d, want 3", len(settled))
	}
	want := map[string]bool{ids[0]: true, ids[1]: true, ids[2]: true}
	for _, o := range settled {
		if !want[o.ID] {
			t.Fatalf("settled %s, not one of %v", o.ID, ids)
		}
		if o.Status != providers.StatusDeliveryUnknown || !strings.Contains(o.Reason(), "has no record in codex's history") {
			t.Fatalf("%s %s settled as %s: %s", o.ID, o.Operation, o.Status, o.Reason())
		}
	}
}
