// Package conversations implements directed conversations between provider
// sessions, with durable delivery records.
//
// A conversation has participants (provider sessions, each under a
// participant ID unique in the conversation) and messages. Every message has
// one sender and one recipient, both participants; there is no broadcast and
// nothing is ever sent automatically: a reply is another explicit send.
//
// # Delivery
//
// A message is delivered through the one delivery ledger
// (internal/delivery). Send resolves the recipient participant's own
// provider session, then records the message and the operation that
// carries it in one write transaction (the message references the
// operation), and only then dispatches it. The message shows that
// operation's state — "queued" (the transport accepted it), "completed" (a
// result was observed), "rejected", or "delivery_unknown" when the outcome
// is uncertain — so the two can never disagree, and it is never sent again
// automatically. The idempotency key is unique across the whole store (a
// database constraint on messages and on operations), so a retried send,
// from this process or another one, is refused instead of delivered twice.
//
// [Service.Reconcile] settles interrupted sends: an operation whose owner
// (the runtime process that dispatched it) is gone is settled from the
// provider's native history, and receipts the caller observed resolve
// messages by idempotency key. The runtime settles every gone process's
// operations at start-up (delivery.Service.Settle).
//
// # Transcript
//
// Sequence numbers are per conversation, kept in the database and never
// reused. Only the newest 500 messages are retained: older ones become
// tombstones (text cleared, number and key kept), and a reader whose cursor
// predates the oldest retained message is told so with a gap.
//
// docs/conversations.md lists the rules, the inferred decisions and every
// error text.
package conversations
