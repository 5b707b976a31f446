package delivery

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/agent-interop/runtime/ent"
	"github.com/agent-interop/runtime/ent/operation"
	"github.com/agent-interop/runtime/internal/providers"
)

// ImportedOwner owns every operation that was recorded by another program
// and imported into the ledger (interop-runtime migrate import-state brings
// 0.3.x delivery receipts over). No process follows these operations and
// settlement never claims them: their outcome is what the other program
// recorded. A queued one is a transport-accepted send whose result was never
// observed, which 0.3.x treated as final too; only evidence the caller
// observes for a delivery_unknown one may still change it.
const ImportedOwner = "import:0.3.x"

// ImportedOperation is an operation recorded by another program, written
// as it is by RecordImportedTx.
type ImportedOperation struct {
	ID             string
	IdempotencyKey string
	Provider       string
	NativeID       string
	Operation      string // OpSend, OpCancel or OpPermission
	// TextSHA256 is the hex SHA-256 of the text that was sent.
	TextSHA256 string
	Status     providers.ReceiptStatus
	// ProviderState, Receipt, Reason and Classification are what a receipt
	// of this operation shows (see Operation.Receipt).
	ProviderState  string
	Receipt        any
	Reason         string
	Classification string
	// Request is the request detail (e.g. the conversation message).
	Request map[string]any
	// Original is the record as the other program stored it; it is kept in
	// the detail under "imported" and survives later changes.
	Original  json.RawMessage
	CreatedAt time.Time
	UpdatedAt time.Time
}

// RecordImportedTx writes an imported operation inside tx, owned by
// ImportedOwner, with its own id, key, status and times. A key another
// operation already has is refused with a *DuplicateKeyError.
func RecordImportedTx(ctx context.Context, tx *ent.Tx, in ImportedOperation) (Operation, error) {
	switch in.Status {
	case providers.StatusQueued, providers.StatusCompleted, providers.StatusRejected, providers.StatusDeliveryUnknown:
	default:
		return Operation{}, &InvalidError{Msg: fmt.Sprintf("imported operation %s: unknown status %q", in.ID, in.Status)}
	}
	if in.ID == "" || in.IdempotencyKey == "" || in.Provider == "" || in.NativeID == "" || in.Operation == "" {
		return Operation{}, &InvalidError{Msg: fmt.Sprintf("imported operation %q: id, key, provider, native id and operation are required", in.ID)}
	}
	existing, err := tx.Operation.Query().Where(operation.IdempotencyKey(in.IdempotencyKey)).Only(ctx)
	if err == nil {
		return Operation{}, &DuplicateKeyError{Key: in.IdempotencyKey, Existing: fromEnt(existing)}
	}
	if !ent.IsNotFound(err) {
		return Operation{}, fmt.Errorf("read operation with key %s: %w", in.IdempotencyKey, err)
	}
	d := detail{Request: in.Request, Receipt: in.Receipt, Reason: in.Reason, Classification: in.Classification, Imported: in.Original}
	row, err := tx.Operation.Create().
		SetID(in.ID).SetIdempotencyKey(in.IdempotencyKey).SetProvider(in.Provider).SetNativeID(in.NativeID).
		SetOperation(in.Operation).SetTextSha256(in.TextSHA256).SetStatus(operation.Status(in.Status)).
		SetProviderState(in.ProviderState).SetDetail(d.raw()).SetOwner(ImportedOwner).
		SetCreatedAt(in.CreatedAt.UTC()).SetUpdatedAt(in.UpdatedAt.UTC()).Save(ctx)
	if err != nil {
		return Operation{}, fmt.Errorf("record imported operation %s: %w", in.ID, err)
	}
	return fromEnt(row), nil
}

// Imported reports whether the operation was imported from another
// program (see ImportedOwner).
func (o Operation) Imported() bool { return o.Owner == ImportedOwner }
