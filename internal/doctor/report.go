package doctor

import (
	"time"

	"github.com/agent-interop/runtime/internal/providers"
	"github.com/agent-interop/runtime/internal/store"
)

// Report is everything doctor found.
type Report struct {
	// Runtime is the runtime's version.
	Runtime   string    `json:"runtime"`
	StartedAt time.Time `json:"startedAt"`
	ElapsedMS int64     `json:"elapsedMs"`
	// DeadlineReached is set when the overall deadline ended the run
	// before every check finished.
	DeadlineReached bool             `json:"deadlineReached,omitempty"`
	Store           StoreReport      `json:"store"`
	Providers       []ProviderReport `json:"providers"`
	// Cleanup lists what could not be stopped in time (normally empty).
	Cleanup []string `json:"cleanup,omitempty"`
}

// Summary values of a ProviderReport.
const (
	// SummaryReady: sending a prompt is available.
	SummaryReady = "ready"
	// SummaryDegraded: some operations work, sending does not fully.
	SummaryDegraded = "degraded"
	// SummaryUnavailable: nothing works.
	SummaryUnavailable = "unavailable"
)

// ProviderReport is one provider's part of the report.
type ProviderReport struct {
	Provider providers.ID `json:"provider"`
	// Summary is ready, degraded or unavailable.
	Summary        string            `json:"summary"`
	Program        Program           `json:"program"`
	Handshake      Handshake         `json:"handshake"`
	Authorization  string            `json:"authorization"`
	AdapterVersion string            `json:"adapterVersion,omitempty"`
	Capabilities   []NamedCapability `json:"capabilities"`
	Limitations    []string          `json:"limitations,omitempty"`
	ElapsedMS      int64             `json:"elapsedMs"`
	CloseError     string            `json:"closeError,omitempty"`
}

// Version sources.
const (
	// VersionFromProvider: the provider reported it over its protocol
	// (initialize, agentInfo, /global/health).
	VersionFromProvider = "provider"
	// VersionFromFlag: doctor ran the program with --version.
	VersionFromFlag = "--version"
)

// Program is the provider program found.
type Program struct {
	Found   bool   `json:"found"`
	Path    string `json:"path,omitempty"`
	Version string `json:"version,omitempty"`
	// VersionSource says where Version came from: "provider" or "--version".
	VersionSource string `json:"versionSource,omitempty"`
}

// HandshakeStatus is the outcome of a provider handshake.
type HandshakeStatus string

// Handshake outcomes.
const (
	HandshakeOK      HandshakeStatus = "ok"
	HandshakeFailed  HandshakeStatus = "failed"
	HandshakeTimeout HandshakeStatus = "timeout"
	// HandshakeSkipped: the adapter did not attempt it (for example no
	// OpenCode server runs and doctor does not start one).
	HandshakeSkipped HandshakeStatus = "skipped"
	// HandshakeNotSupported: the adapter has no separate handshake; its
	// capability record is what it observed.
	HandshakeNotSupported HandshakeStatus = "not-supported"
)

// Handshake is the result of the bounded protocol handshake.
type Handshake struct {
	Status     HandshakeStatus `json:"status"`
	Detail     string          `json:"detail,omitempty"`
	Fix        string          `json:"fix,omitempty"`
	DurationMS int64           `json:"durationMs"`
}

// NamedCapability is one operation's capability under its name.
type NamedCapability struct {
	Name string `json:"name"`
	providers.Capability
}

// CapabilityNames are the operations reported, in order; they are the JSON
// names of [providers.Capabilities]' fields.
var capabilityNames = [...]string{
	"discovery", "sessions", "sendMessage", "steer", "cancel",
	"events", "diff", "permissions", "model", "reasoning",
}

// CapabilityNames returns the operation names in report order.
func CapabilityNames() []string { return append([]string(nil), capabilityNames[:]...) }

// named lists c's capabilities in report order.
func named(c providers.Capabilities) []NamedCapability {
	all := [...]providers.Capability{
		c.Discovery, c.Sessions, c.SendMessage, c.Steer, c.Cancel,
		c.Events, c.Diff, c.Permissions, c.Model, c.Reasoning,
	}
	out := make([]NamedCapability, len(all))
	for i, cp := range all {
		out[i] = NamedCapability{Name: capabilityNames[i], Capability: cp}
	}
	return out
}

// Capability returns the named capability and whether it is in the report.
func (p ProviderReport) Capability(name string) (providers.Capability, bool) {
	for _, c := range p.Capabilities {
		if c.Name == name {
			return c.Capability, true
		}
	}
	return providers.Capability{}, false
}

// StoreReport describes the state store.
type StoreReport struct {
	// Path is the store file, or a team store's URL without its password.
	Path string `json:"path"`
	// Dialect is "postgres" for a team store ("" for a SQLite file).
	Dialect string `json:"dialect,omitempty"`
	// Exists is false when no store file was created yet (serve creates
	// it on first start; doctor does not).
	Exists bool `json:"exists"`
	// Opens is true when the store opened with the integrity check.
	Opens            bool   `json:"opens"`
	IntegrityChecked bool   `json:"integrityChecked"`
	SchemaVersion    string `json:"schemaVersion"`
	// Error is why the store does not open (or cannot be located).
	Error string `json:"error,omitempty"`
	Fix   string `json:"fix,omitempty"`
	// Recovery is the pending recovery record: the file was unusable and
	// was moved aside.
	Recovery  *store.Recovery `json:"recovery,omitempty"`
	ElapsedMS int64           `json:"elapsedMs"`
}
