package delivery

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/agent-interop/runtime/internal/providers"
	"github.com/agent-interop/runtime/internal/store"
	"github.com/agent-interop/runtime/internal/testutil/pgtest"
)

// TestRecordWhoseCommitIsUnknownIsNeverDispatched: on a team store the
// connection breaks after the server ran the COMMIT of a send's record but
// before its answer arrived. The send fails saying the record may exist,
// nothing is dispatched, the idempotency key stays taken (the same request
// again answers the stored record and sends nothing), and the record
// (which did commit) becomes delivery_unknown once its lease expires.
func TestRecordWhoseCommitIsUnknownIsNeverDispatched(t *testing.T) {
	c := pgtest.Shared(t)
	dsn := pgtest.Database(t)
	proxy, err := c.NewProxy()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { proxy.Close() })
	e := newEnv(t, proxy.Rewrite(dsn))
	e.fake.SendFunc = func(context.Context, string, string, providers.SendOptions) (providers.Receipt, error) {
		return queued("r")
	}
	ctx := context.Background()
	if _, err := e.reg.Resolve(ctx, "codex", "t1"); err != nil { // record the session first
		t.Fatal(err)
	}
	proxy.DropNextCommit()
	_, err = e.svc.Send(ctx, SendRequest{Provider: "codex", NativeID: "t1", Text: "maybe", IdempotencyKey: "k-maybe"})
	var unknown *store.CommitUnknownError
	if !errors.As(err, &unknown) || !strings.Contains(err.Error(), "may or may not have been stored") {
		t.Fatalf("send whose record commit is unknown = %v", err)
	}
	if n := e.fake.CallCount("send"); n != 0 || proxy.Dropped() != 1 {
		t.Fatalf("dispatched %d times (connections dropped %d): an unknown record must never be dispatched", n, proxy.Dropped())
	}
	// The record did commit, so the same request again answers its stored
	// receipt (KeyRule) and sends nothing; other arguments are refused.
	again, err := e.svc.Send(ctx, SendRequest{Provider: "codex", NativeID: "t1", Text: "maybe", IdempotencyKey: "k-maybe"})
	if err != nil || again.Operation.IdempotencyKey != "k-maybe" || again.Operation.Status == providers.StatusCompleted {
		t.Fatalf("the same request again = %+v, %v; want the stored, unfinished record (the record did commit)", again.Operation, err)
	}
	if _, err := e.svc.Send(ctx, SendRequest{Provider: "codex", NativeID: "t1", Text: "other", IdempotencyKey: "k-maybe"}); !errors.As(err, new(*DuplicateKeyError)) {
		t.Fatalf("other text with the same key = %v, want the duplicate-key refusal", err)
	}
	if n := e.fake.CallCount("send"); n != 0 {
		t.Fatalf("dispatched %d times after the same key was used again", n)
	}
	// The record did commit: once its owner is gone (the process died), the
	// next runtime's settlement finds it open and, with no native history to
	// read, marks it delivery_unknown. It is still never dispatched.
	table.kill(e.pid())
	later := newEnv(t, dsn)
	ops, err := later.svc.Settle(ctx)
	if err != nil || len(ops) != 1 || ops[0].IdempotencyKey != "k-maybe" || ops[0].Status != providers.StatusDeliveryUnknown {
		t.Fatalf("recover = %+v, %v", ops, err)
	}
	if n := e.fake.CallCount("send") + later.fake.CallCount("send"); n != 0 {
		t.Fatalf("dispatched %d times", n)
	}
}
