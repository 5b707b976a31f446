// Package delivery is the one ledger of everything the runtime sends to a
// provider session — send_session_message, cancel_session,
// respond_to_permission, the conversation messages (which reference the
// operation that carries them) and the Freebuff thread writes ([Service.Write])
// — and keeps every receipt honest:
//
//   - The request is recorded in the store before it is dispatched, in one
//     write transaction, under an idempotency key (the caller's, or a
//     generated one). A reused key is refused with a message naming the
//     existing operation and its status; the unique constraint holds across
//     runtime processes.
//   - Receipts: queued (the transport accepted it), completed (a result was
//     observed), rejected (the provider refused, or the request certainly
//     never left). When the outcome is uncertain (providers.IsUncertain) the
//     record becomes delivery_unknown and is never sent again.
//   - Adapters report observed outcomes later through providers.Host
//     ([Service.ReportOutcome]): a queued record moves to completed or
//     rejected with the provider's reason, and a delivery_unknown one takes
//     such evidence too. An outcome that arrives before its receipt was
//     recorded is kept and applied when it is.
//   - Every open (queued) record has an owner: the runtime process that
//     dispatched it and follows its outcome, recorded in runtime_owners
//     with a heartbeat renewed every few seconds. When the owner is gone
//     (it closed, its pid no longer runs on this host, or its heartbeat is
//     older than the owner timeout), [Service.Settle] — run at start-up and
//     periodically — claims the record and looks the turn up in the
//     provider's native history (providers.TurnLookup): completed or
//     rejected only on an observed result, otherwise delivery_unknown with
//     the reason. Nothing is resent. Records a live process owns are left
//     to it. docs/delivery.md lists what each provider lets us reconcile.
//   - Operations recorded by another program (0.3.x receipts brought over
//     by migrate import-state, [RecordImportedTx]) belong to
//     [ImportedOwner]: they keep the other program's outcome and their
//     original record, and settlement never claims them.
package delivery
