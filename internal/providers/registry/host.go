package registry

import (
	"sync"

	"github.com/agent-interop/runtime/internal/providers"
)

// maxEarlyReports bounds what Host keeps before its sinks are attached.
const maxEarlyReports = 1024

// Host is the providers.Host (and providers.EventReporter) the adapters get
// at construction. Adapters are built before the services that consume
// their reports (the delivery log, the event log), so the sinks are
// attached later; reports made before that are kept (bounded) and passed on
// at Attach.
type Host struct {
	mu      sync.Mutex
	outcome providers.Host
	events  providers.EventReporter
	early   []func()
}

// NewHost returns a Host without sinks.
func NewHost() *Host { return &Host{} }

// Attach sets the sinks and passes on the reports kept so far.
func (h *Host) Attach(outcomes providers.Host, events providers.EventReporter) {
	h.mu.Lock()
	h.outcome, h.events = outcomes, events
	early := h.early
	h.early = nil
	h.mu.Unlock()
	for _, f := range early {
		f()
	}
}

// ReportOutcome implements providers.Host.
func (h *Host) ReportOutcome(provider providers.ID, nativeID, ref string, status providers.ReceiptStatus, reason string) {
	h.mu.Lock()
	sink := h.outcome
	if sink == nil {
		if len(h.early) < maxEarlyReports {
			h.early = append(h.early, func() { h.ReportOutcome(provider, nativeID, ref, status, reason) })
		}
		h.mu.Unlock()
		return
	}
	h.mu.Unlock()
	sink.ReportOutcome(provider, nativeID, ref, status, reason)
}

// ReportEvent implements providers.EventReporter.
func (h *Host) ReportEvent(provider providers.ID, ev providers.NativeEvent) {
	h.mu.Lock()
	sink := h.events
	if sink == nil {
		if len(h.early) < maxEarlyReports {
			h.early = append(h.early, func() { h.ReportEvent(provider, ev) })
		}
		h.mu.Unlock()
		return
	}
	h.mu.Unlock()
	sink.ReportEvent(provider, ev)
}
