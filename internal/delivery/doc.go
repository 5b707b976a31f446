// Package delivery records and dispatches the operations that reach a
// provider session — send_session_message, cancel_session and
// respond_to_permission — honestly:
//
//   - The request is recorded in the store before it is dispatched, in one
//     write transaction, under an idempotency key (the caller's, or a
//     generated one). A reused key is refused with a message naming the
//     existing operation and its status; the unique constraint holds across
//     runtime processes.
//   - While the dispatch is in flight the record carries a lease, renewed
//     while it lasts. At start-up ([Service.Recover]) a queued record whose
//     lease expired belongs to a runtime that stopped mid-dispatch: it
//     becomes delivery_unknown.
//   - Receipts: queued (the transport accepted it), completed (a result was
//     observed), rejected (the provider refused, or the request certainly
//     never left). When the outcome is uncertain (providers.IsUncertain) the
//     record becomes delivery_unknown and is never sent again.
//   - Adapters report observed outcomes later through providers.Host
//     ([Service.ReportOutcome]): a queued record moves to completed or
//     rejected with the provider's reason. An outcome that arrives before
//     its receipt was recorded is kept and applied when it is.
//
// [Service.Dispatch] implements the conversations Dispatcher on the same
// machinery, so conversation messages get operation records and outcomes
// too.
package delivery
