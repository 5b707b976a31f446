package delivery

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/agent-interop/runtime/ent"
	"github.com/agent-interop/runtime/internal/providers"
)

func TestImportedOperationsAreNeverSettled(t *testing.T) {
	e := newEnv(t, "")
	ctx := context.Background()
	// A history that would settle anything it is asked about: an imported
	// operation must never reach it.
	asked := 0
	e.fake.LookupFunc = func(context.Context, providers.TurnQuery) (providers.TurnRecord, error) {
		asked++
		return providers.TurnRecord{Found: true, Status: providers.StatusCompleted, Source: "fake history"}, nil
	}
	at := time.Date(2026, 1, 2, 3, 4, 5, 678e6, time.UTC)
	imports := []ImportedOperation{
		{ID: "op_import_a", IdempotencyKey: "outbound_a", Provider: "codex", NativeID: "t1", Operation: OpSend,
			Status: providers.StatusQueued, ProviderState: "transport_accepted", Receipt: map[string]any{"delivery": "transport_accepted"},
			Original: json.RawMessage(`{"from":"0.3.x","delivery":"queued"}`), CreatedAt: at, UpdatedAt: at},
		{ID: "op_import_b", IdempotencyKey: "outbound_b", Provider: "codex", NativeID: "t1", Operation: OpSend,
			Status: providers.StatusDeliveryUnknown, Reason: "imported from 0.3.x while in flight", Classification: "delivery_unknown",
			Original: json.RawMessage(`{"from":"0.3.x","delivery":"queued","dispatchLease":{"id":"dispatch_1"}}`), CreatedAt: at, UpdatedAt: at},
	}
	err := e.st.Tx(ctx, func(tx *ent.Tx) error {
		for _, in := range imports {
			if _, err := RecordImportedTx(ctx, tx, in); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// Start-up settlement claims nothing and asks no history.
	changed, err := e.svc.Settle(ctx)
	if err != nil || len(changed) != 0 || asked != 0 {
		t.Fatalf("settle changed %+v, err %v, history asked %d times", changed, err, asked)
	}
	changed, err = e.svc.SettleOperations(ctx, []string{"op_import_a", "op_import_b"})
	if err != nil || len(changed) != 0 || asked != 0 {
		t.Fatalf("settle by id changed %+v, err %v, history asked %d times", changed, err, asked)
	}
	a, err := e.svc.Get(ctx, "op_import_a")
	if err != nil {
		t.Fatal(err)
	}
	if a.Status != providers.StatusQueued || a.Owner != ImportedOwner || !a.Imported() || !a.CreatedAt.Equal(at) ||
		a.Receipt().ProviderState != "transport_accepted" {
		t.Fatalf("imported queued operation = %+v", a)
	}
	// Reconciliation leaves a transport-accepted import alone, as 0.3.x did.
	if followed, err := e.svc.Followed(ctx, a); err != nil || !followed {
		t.Fatalf("Followed(imported queued) = %v, %v", followed, err)
	}
	// Evidence the caller observed may still resolve a delivery_unknown
	// import; the original record survives the change.
	b, changedB, err := e.svc.ApplyObserved(ctx, "op_import_b", providers.Receipt{Accepted: true, Status: providers.StatusCompleted})
	if err != nil || !changedB || b.Status != providers.StatusCompleted || !strings.Contains(string(b.Detail), `"dispatchLease":{"id":"dispatch_1"}`) {
		t.Fatalf("observed on imported delivery_unknown = %+v %s, %v", b, b.Detail, err)
	}
	// A key that is taken is refused.
	err = e.st.Tx(ctx, func(tx *ent.Tx) error {
		in := imports[0]
		in.ID = "op_import_c"
		_, err := RecordImportedTx(ctx, tx, in)
		return err
	})
	var dup *DuplicateKeyError
	if !errors.As(err, &dup) || dup.Existing.ID != "op_import_a" {
		t.Fatalf("reused key = %v", err)
	}
}
