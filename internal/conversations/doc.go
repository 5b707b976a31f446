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
// Send follows the 0.3.x persist-before-send protocol. The message is first
// recorded, in one write transaction, with delivery "queued", its
// idempotency key and a dispatch lease (now + 120 s). Only then is it
// dispatched, through a [Dispatcher], to the recipient participant's own
// provider session; the lease is renewed every 30 s while the dispatch is in
// flight. The outcome is then recorded: "queued" (the transport accepted
// it), "completed" (a result was observed) or "rejected". When the outcome is
// uncertain (the request may have left) the message becomes
// "delivery_unknown" and is never sent again automatically. The idempotency
// key is unique across the whole store (a database constraint), so a retried
// send, from this process or another one, is refused instead of delivered
// twice.
//
// [Service.Reconcile] settles interrupted sends: messages left queued
// without a receipt whose lease has expired become delivery_unknown, and
// receipts the caller observed resolve messages by idempotency key.
// [Service.ReconcileExpiredAtStartup] runs the same pass once after start.
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
