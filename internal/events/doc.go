// Package events is the runtime's native-event log and the reader side of
// read_session_events.
//
// [Log] stores every session's events in the store (table session_events,
// head row in session_streams). The sequence is owned by the runtime and
// allocated in the same transaction as the insert, so it is monotonic per
// session across provider reconnects, runtime restarts and several runtime
// processes on one file; the epoch counts how often the provider stream was
// opened; retention keeps the newest events per session (10,000 by default)
// and a page reports a gap when its cursor is older than what is kept.
//
// [Hub] keeps ONE provider subscription per session, shared by all readers
// (a poll never opens a new provider stream), pumps it into the Log, reopens
// it with a new epoch when it ends, and answers reads: at once when events
// exist after the cursor, otherwise after a bounded wait (at most 30 s) that
// wakes on an in-process notification or a short database poll (for events
// appended by another runtime process), reports progress at least every
// second and honours cancellation.
package events
