// Package pending settles the operations an adapter sent to a provider
// whose outcome it had not seen yet (a turn still running, an interrupt,
// a permission answer not confirmed) when the connection that carried
// them is lost.
//
// Such an operation may have run in part, so it is never resent and never
// reported as failed: it becomes delivery_unknown, with the reason the
// connection was lost and what is uncertain about the operation. [Lost]
// is the one place that rule is written; [Report] hands the outcomes to
// the runtime's Host, outside any lock the adapter holds.
//
// An adapter keeps a [Tracker] per connection: it adds each operation
// when it was written, settles it when its outcome was observed, and on
// the loss calls [Tracker.Lost], which settles the rest, then Report
// outside its own lock:
//
//	ops.Add(pending.Op{NativeID: thread, Ref: turn})   // written
//	if ops.Settle(turn) { report the observed outcome } // answered
//	pending.Report(host, providers.Codex, ops.Lost("codex app-server connection lost: EOF"))
//
// An adapter whose state already says what is unsettled may instead
// collect [Op] values itself and call the package function Lost.
package pending

import (
	"sync"

	"github.com/agent-interop/runtime/internal/providers"
)

// Op is one operation whose outcome was not observed.
type Op struct {
	// NativeID is the provider's session the operation belongs to.
	NativeID string
	// Ref is the operation's receipt ref (what the runtime's ledger
	// settles).
	Ref string
	// Unsettled says what is not known of it, appended to the loss reason
	// ("turn t1 had not completed and may have run in part; it is not
	// resent"); "" uses [DefaultUnsettled].
	Unsettled string
}

// DefaultUnsettled is what is said of an operation with no Unsettled text.
const DefaultUnsettled = "its outcome was not observed and it is not resent"

// Outcome is one settled operation, to report to the Host.
type Outcome struct {
	NativeID string
	Ref      string
	Status   providers.ReceiptStatus
	Reason   string
	// Turn is what the adapter observed of the turn (verdict, usage).
	Turn *providers.TurnResult
}

// Lost settles every op after the connection that carried them was lost
// for why: each becomes delivery_unknown with the reason "<why>; <what is
// unsettled>", in the order given.
func Lost(why string, ops []Op) []Outcome {
	if len(ops) == 0 {
		return nil
	}
	out := make([]Outcome, 0, len(ops))
	for _, op := range ops {
		what := op.Unsettled
		if what == "" {
			what = DefaultUnsettled
		}
		out = append(out, Outcome{NativeID: op.NativeID, Ref: op.Ref, Status: providers.StatusDeliveryUnknown, Reason: why + "; " + what})
	}
	return out
}

// Report passes each outcome to host for provider, in order. A nil host
// (doctor, which sends nothing) receives nothing. Call it without holding
// a lock the Host's callbacks may need.
func Report(host providers.Host, provider providers.ID, outs []Outcome) {
	if host == nil {
		return
	}
	for _, o := range outs {
		host.ReportOutcome(provider, o.NativeID, o.Ref, providers.Outcome{Status: o.Status, Reason: o.Reason, Turn: o.Turn})
	}
}

// Sessions are the sessions the outcomes concern, each once, in the
// order first named (for the provider_restarted events that go with a
// loss).
func Sessions(outs []Outcome) []string {
	seen := map[string]bool{}
	var ids []string
	for _, o := range outs {
		if !seen[o.NativeID] {
			seen[o.NativeID] = true
			ids = append(ids, o.NativeID)
		}
	}
	return ids
}

// Tracker is the set of operations in flight on one connection: added
// when written, settled when their outcome was observed, and settled as
// delivery_unknown all at once by Lost. It is safe for concurrent use.
type Tracker struct {
	mu   sync.Mutex
	ops  []Op // in the order added
	lost bool
	why  string
}

// Add records an operation written to the provider. After Lost, the
// connection that carried it is gone: Add returns its delivery_unknown
// outcome at once (to report) instead of keeping it.
func (t *Tracker) Add(op Op) []Outcome {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.lost {
		return Lost(t.why, []Op{op})
	}
	t.ops = append(t.ops, op)
	return nil
}

// Settle marks the operation ref settled, its outcome observed. It
// reports whether it was in flight: false when it was never added or was
// already settled (by Lost, so its outcome is reported already).
func (t *Tracker) Settle(ref string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	for i, op := range t.ops {
		if op.Ref == ref {
			t.ops = append(t.ops[:i], t.ops[i+1:]...)
			return true
		}
	}
	return false
}

// InFlight is the operations not settled yet, in the order added.
func (t *Tracker) InFlight() []Op {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]Op(nil), t.ops...)
}

// Lost settles every operation still in flight as delivery_unknown after
// the connection was lost for why (see the package function Lost); later
// calls and later Adds settle at once with the first reason.
func (t *Tracker) Lost(why string) []Outcome {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.lost {
		t.lost, t.why = true, why
	}
	ops := t.ops
	t.ops = nil
	return Lost(t.why, ops)
}
