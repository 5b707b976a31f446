// Package importstate brings a 0.3.x runtime's files into the store:
// ~/.agent-interop-runtime/state.json (work items, evidence, handoffs,
// reviews, claims) and conversations.json (conversations, participants,
// messages and their delivery receipts). It is `interop-runtime migrate
// import-state`.
//
// Records keep their ids, times and sequences. A message's delivery
// receipt becomes the delivery operation (internal/delivery, the one
// ledger) that the message references, owned by delivery.ImportedOwner so
// start-up settlement never picks it up; a send 0.3.x had in flight becomes
// delivery_unknown ([ReasonInFlight]) and is never resent.
//
// An import is one store transaction: every record is written or none is.
// [Parse] checks the files before the store is opened; malformed input is
// refused with the file, line:column and the path of the value. [Import]
// compares each record with the store: a new one is written, one already
// there with the same content is left alone (so a second run changes
// nothing and says so), and an id the store has with other content is a
// conflict that refuses the whole import. A dry run does all of it and
// rolls back. docs/import.md has the mapping of every record kind.
package importstate
