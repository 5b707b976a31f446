package registry

import (
	"sync"

	"github.com/agent-interop/runtime/internal/providers"
)

// maxEarlyReports bounds what Host keeps, of each kind, before its
// consumer is there.
const maxEarlyReports = 1024

// Host is the providers.Host (and providers.EventReporter) the adapters get
// at construction: a relay of their reports. It is made first, because the
// adapters are built before the services that consume their reports, and
// those services, built over the registry, take the reports over when they
// are made: the delivery ledger the outcomes (ForwardOutcomes), the event
// hub the events (ForwardEvents). Reports made before that are kept
// (bounded) and passed on then.
type Host struct {
	mu           sync.Mutex
	outcome      providers.Host
	events       providers.EventReporter
	earlyOutcome []func(providers.Host)
	earlyEvents  []func(providers.EventReporter)
}

// NewHost returns a Host whose reports nobody consumes yet.
func NewHost() *Host { return &Host{} }

// ForwardOutcomes passes every operation outcome, those kept so far first,
// to sink.
func (h *Host) ForwardOutcomes(sink providers.Host) {
	h.mu.Lock()
	h.outcome = sink
	early := h.earlyOutcome
	h.earlyOutcome = nil
	h.mu.Unlock()
	for _, f := range early {
		f(sink)
	}
}

// ForwardEvents passes every out-of-band event, those kept so far first,
// to sink.
func (h *Host) ForwardEvents(sink providers.EventReporter) {
	h.mu.Lock()
	h.events = sink
	early := h.earlyEvents
	h.earlyEvents = nil
	h.mu.Unlock()
	for _, f := range early {
		f(sink)
	}
}

// ReportOutcome implements providers.Host.
func (h *Host) ReportOutcome(provider providers.ID, nativeID, ref string, o providers.Outcome) {
	h.mu.Lock()
	sink := h.outcome
	if sink == nil {
		if len(h.earlyOutcome) < maxEarlyReports {
			h.earlyOutcome = append(h.earlyOutcome, func(s providers.Host) { s.ReportOutcome(provider, nativeID, ref, o) })
		}
		h.mu.Unlock()
		return
	}
	h.mu.Unlock()
	sink.ReportOutcome(provider, nativeID, ref, o)
}

// ReportEvent implements providers.EventReporter.
func (h *Host) ReportEvent(provider providers.ID, ev providers.NativeEvent) {
	h.mu.Lock()
	sink := h.events
	if sink == nil {
		if len(h.earlyEvents) < maxEarlyReports {
			h.earlyEvents = append(h.earlyEvents, func(s providers.EventReporter) { s.ReportEvent(provider, ev) })
		}
		h.mu.Unlock()
		return
	}
	h.mu.Unlock()
	sink.ReportEvent(provider, ev)
}
