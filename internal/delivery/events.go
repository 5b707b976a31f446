package delivery

import (
	"encoding/json"

	"github.com/agent-interop/runtime/internal/providers"
)

// EventOperation is the event type under which a recorded operation's later
// outcome appears in its session's event log.
const EventOperation = "interop.operation"

// operationEvent is the data of an interop.operation event.
type operationEvent struct {
	OperationID    string                  `json:"operationId"`
	IdempotencyKey string                  `json:"idempotencyKey"`
	Operation      string                  `json:"operation"`
	Status         providers.ReceiptStatus `json:"status"`
	ProviderState  string                  `json:"providerState,omitempty"`
	NativeTurnID   string                  `json:"nativeTurnId,omitempty"`
	Detail         json.RawMessage         `json:"detail,omitempty"`
	// Turn is the verdict, usage and changed files of the turn a send
	// started, once it ended: a reader waiting on the session's events
	// learns the verdict from this event.
	Turn *providers.TurnResult `json:"turn,omitempty"`
}

// reportOperation tells events of op's changed state (the reporter bounds
// its own write: the event hub appends within 10 s).
func reportOperation(events providers.EventReporter, op Operation) {
	data, err := json.Marshal(operationEvent{
		OperationID: op.ID, IdempotencyKey: op.IdempotencyKey, Operation: op.Operation,
		Status: op.Status, ProviderState: op.ProviderState, NativeTurnID: op.NativeTurnID, Detail: op.Detail, Turn: op.Turn,
	})
	if err != nil {
		return
	}
	events.ReportEvent(op.Provider, providers.NativeEvent{NativeID: op.NativeID, Timestamp: op.UpdatedAt, Type: EventOperation,
		Data: data, TurnID: op.NativeTurnID})
}
