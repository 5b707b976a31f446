// Package providers defines the contract every provider adapter implements
// (OpenCode, Codex, Claude Code, Cursor, Freebuff) and the shared value types
// the registry, the delivery log and the MCP handlers exchange with them.
//
// An adapter speaks one provider's native protocol. It never invents data: a
// missing program, a failed handshake or an unsupported operation is reported
// through its Capabilities and through typed errors, never hidden.
package providers

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/agent-interop/runtime/internal/lazy"
)

// ID names a provider (an agent): a built-in entry of spec/agents.yaml
// ([BuiltinAgents]) or a user's (the agents file). The set is open; a
// registry knows the ids of the adapters it was built with.
type ID string

// The native providers and the built-in ACP agents the code names.
const (
	Freebuff   ID = "freebuff"
	OpenCode   ID = "opencode"
	Codex      ID = "codex"
	ClaudeCode ID = "claude-code"
	Cursor     ID = "cursor"
)

// Order returns the built-in agent ids in catalog order (the registry's
// reporting order; a user's agents follow them). The slice is the
// caller's own.
func Order() []ID { return slices.Clone(builtinOrder.Get()) }

// builtinOrder is Order's table, read from BuiltinAgents once: that
// builds every built-in agent's whole spec (commands, hints, notes), and
// Order is called on every get_runtime_status and session listing. It is
// never modified.
var builtinOrder = lazy.Value[[]ID]{New: func() []ID {
	agents := BuiltinAgents()
	out := make([]ID, len(agents))
	for i, a := range agents {
		out[i] = a.ID
	}
	return out
}}

// ParseID returns s as an ID when it is well formed (see [IDRule]);
// whether the runtime knows it is the registry's question.
func ParseID(s string) (ID, error) {
	if !ValidID(s) {
		return "", fmt.Errorf("Unknown provider %s: an agent id is lower-case letters, digits and dashes", s)
	}
	return ID(s), nil
}

// CapabilityState is the state of one operation of one provider.
type CapabilityState string

// Capability states.
const (
	Available   CapabilityState = "available"
	Unavailable CapabilityState = "unavailable"
	Degraded    CapabilityState = "degraded"
	Unknown     CapabilityState = "unknown"
)

// Capability describes one operation: whether it is supported, its current
// state, how it is carried and, when not plainly available, the exact reason.
type Capability struct {
	Supported bool            `json:"supported"`
	State     CapabilityState `json:"state"`
	Transport string          `json:"transport,omitempty"`
	Protocol  string          `json:"protocol,omitempty"`
	Reason    string          `json:"reason,omitempty"`
	// Fix is a concrete command or environment variable to try when the
	// operation is not available (shown by doctor).
	Fix string `json:"fix,omitempty"`
}

// Capabilities is a provider's capability record (0.3.x AgentCapabilities).
type Capabilities struct {
	Provider        ID         `json:"provider"`
	AdapterVersion  string     `json:"adapterVersion"`
	ProviderVersion string     `json:"providerVersion,omitempty"`
	Program         string     `json:"program,omitempty"` // path of the program found, if any
	Authorization   string     `json:"authorization"`     // authorized | unauthorized | unknown
	Discovery       Capability `json:"discovery"`
	Sessions        Capability `json:"sessions"`
	SendMessage     Capability `json:"sendMessage"`
	Steer           Capability `json:"steer"`
	Cancel          Capability `json:"cancel"`
	Events          Capability `json:"events"`
	Diff            Capability `json:"diff"`
	Permissions     Capability `json:"permissions"`
	Model           Capability `json:"model"`
	Reasoning       Capability `json:"reasoning"`
	Limitations     []string   `json:"limitations"`
}

// Provenance records where a session was seen.
type Provenance struct {
	DiscoveredAt time.Time `json:"discoveredAt"`
	Source       string    `json:"source"`
	Native       bool      `json:"native"`
}

// Session is a native session of a provider (0.3.x AgentSession).
// Endpoint names the server or process that exposed it (for example
// "http://127.0.0.1:4096" or "codex app-server pid 1234"); a session keeps it
// for its whole life, so switching servers never redirects it.
type Session struct {
	ID        string `json:"id"` // "<provider>:<nativeId>"
	Provider  ID     `json:"provider"`
	NativeID  string `json:"nativeId"`
	Title     string `json:"title,omitempty"`
	State     string `json:"state,omitempty"`
	Model     string `json:"model,omitempty"`
	ProjectID string `json:"projectId,omitempty"`
	CWD       string `json:"cwd,omitempty"`
	Transport string `json:"transport,omitempty"`
	Endpoint  string `json:"endpoint,omitempty"`
	// Host is the machine that runs the session, on a team store shared
	// by several machines ("" on a local store); only a runtime on that
	// host can drive it.
	Host       string         `json:"host,omitempty"`
	Provenance Provenance     `json:"provenance"`
	Metadata   map[string]any `json:"metadata,omitempty"`
	// Liveness is what this runtime knows of the session now (set by the
	// registry on listings).
	Liveness *Liveness `json:"liveness,omitempty"`
}

// Model is a structured model selection.
type Model struct {
	ProviderID string `json:"providerID"`
	ModelID    string `json:"modelID"`
	Variant    string `json:"variant,omitempty"`
}

// CreateOptions are the options of CreateSession.
type CreateOptions struct {
	CWD   string
	Title string
}

// SendOptions are the per-prompt options of Send.
type SendOptions struct {
	Mode      string // "send" (default) or "steer"
	Model     *Model
	Agent     string
	Reasoning string
	// CorrelationID is the runtime's operation id for this prompt. An
	// adapter whose provider stores a client-chosen id with the prompt
	// passes it on (Codex clientUserMessageId), so the turn can be found
	// in the provider's history after a crash ([TurnLookup]).
	CorrelationID string
}

// ReceiptStatus is the delivery state of an operation.
type ReceiptStatus string

// Receipt states. Accepted-by-transport is Queued, never Completed.
const (
	StatusQueued          ReceiptStatus = "queued"
	StatusCompleted       ReceiptStatus = "completed"
	StatusRejected        ReceiptStatus = "rejected"
	StatusDeliveryUnknown ReceiptStatus = "delivery_unknown"
)

// Receipt is what an adapter observed about one operation (0.3.x OperationReceipt).
// Ref is an adapter-chosen correlation handle (a turn id, a message id) that
// the adapter later passes to Host.ReportOutcome.
type Receipt struct {
	Provider      ID            `json:"provider"`
	NativeID      string        `json:"nativeId"`
	Operation     string        `json:"operation"`
	Accepted      bool          `json:"accepted"`
	Status        ReceiptStatus `json:"status,omitempty"`
	ProviderState string        `json:"providerState,omitempty"`
	Detail        any           `json:"detail,omitempty"`
	// NativeTurnID names the provider's own record of the turn the
	// operation started, when the provider gives one: a Codex turn id, an
	// OpenCode user message id, an ACP prompt. Events of that turn carry
	// it as their turnId.
	NativeTurnID string `json:"nativeTurnId,omitempty"`
	// Turn is what was observed of the turn a send started, once it ended
	// (the ledger fills it; an adapter's Send leaves it nil).
	Turn *TurnResult `json:"turn,omitempty"`
	Ref  string      `json:"-"`
}

// NativeEvent is one event as the provider produced it. The registry assigns
// the runtime-owned sequence and epoch when it stores it.
type NativeEvent struct {
	NativeID  string          `json:"nativeId"`
	Timestamp time.Time       `json:"timestamp"`
	Type      string          `json:"type"`
	Data      json.RawMessage `json:"data"`
	// TurnID is the native turn the event belongs to, when the adapter
	// knows it (the NativeTurnID of the receipt that started the turn).
	TurnID string `json:"turnId,omitempty"`
}

// PermissionOption is one choice a provider offered for a permission request.
type PermissionOption struct {
	ID   string `json:"id"`
	Name string `json:"name,omitempty"`
	Kind string `json:"kind,omitempty"` // e.g. allow_once, allow_always, reject_once, accept, decline, cancel
}

// PermissionRequest is a request held until respond_to_permission answers it.
// It is never auto-approved.
type PermissionRequest struct {
	Provider    ID                 `json:"provider"`
	RequestID   string             `json:"requestId"`
	NativeID    string             `json:"nativeId"`
	Method      string             `json:"method"`
	Title       string             `json:"title,omitempty"`
	Options     []PermissionOption `json:"options"`
	RequestedAt time.Time          `json:"requestedAt"`
	Detail      any                `json:"detail,omitempty"`
	// Paths are the files the request would edit, as the provider named
	// them (absolute, or relative to the session's cwd); empty when the
	// request edits no file or the provider does not say.
	Paths []string `json:"paths,omitempty"`
	// PathsUnknown is set when the request would let the agent write
	// files that cannot be named before it runs: a shell command (what a
	// command writes is known only once it has run), or a write grant on
	// a pattern. Claims are checked against Paths only.
	PathsUnknown bool `json:"pathsUnknown,omitempty"`
}

// DiffOptions selects which diff to read; the zero value means the latest turn's.
type DiffOptions struct {
	MessageID string
}

// Host is what the registry gives an adapter at construction.
type Host interface {
	// ReportOutcome moves an operation receipt previously returned with Ref
	// to its observed outcome (completed, or rejected with the provider's reason).
	ReportOutcome(provider ID, nativeID, ref string, o Outcome)
}

// Outcome is what an adapter observed of one operation it had returned a
// Receipt for: its final delivery status and the provider's reason.
type Outcome struct {
	Status ReceiptStatus
	// Reason is the provider's words for the outcome ("turn completed",
	// the refusal's message); empty when it gave none.
	Reason string
	// Turn is what the adapter observed of the turn a send started (its
	// verdict, usage and the files it wrote); nil for an operation that
	// starts no turn or when the adapter observed nothing of it.
	Turn *TurnResult
}

// Adapter is one provider's native bridge. Every method must honour ctx.
// Operations a provider does not support return an *UnsupportedError.
//
// Delivery contract for Send, Cancel and RespondPermission: return a
// *NotSentError when the request certainly never reached the provider (not
// connected, refused before writing), a *RejectedError when the provider
// answered with a refusal, and any other error when the outcome is uncertain
// (the request may have left). The caller records uncertain outcomes as
// delivery_unknown and never retries them.
type Adapter interface {
	ID() ID
	Capabilities(ctx context.Context) Capabilities
	// Roles declares what the adapter offers beyond this contract.
	Roles() Roles
	SessionStore
	Messenger
	Differ
	PermissionBroker
	Tuner
	Close() error
}

// Roles are the optional roles of an [Adapter], declared: a nil role is
// one the adapter does not have. Callers ask the role (a.Roles().Liveness)
// and never type-assert the adapter, so a wrapper passes them on.
type Roles struct {
	// Endpoints routes a session to the endpoint that exposed it; nil:
	// the adapter has one endpoint.
	Endpoints EndpointRouter
	// Liveness says what the adapter holds in memory of a session; nil:
	// every session's liveness is unknown.
	Liveness LivenessReporter
	// History finds the turn an operation started in the provider's own
	// history; nil: the provider keeps none the runtime can read.
	History TurnLookup
	// State settles a write other than a send from the session's state;
	// nil: the provider shows no such state.
	State StateLookup
	// Handshake performs the protocol's opening exchange on demand
	// (doctor); nil: the adapter has none to perform.
	Handshake Prober
	// Workspaces takes the workspaces the runtime recorded for the
	// provider's sessions; nil: the provider finds its sessions without.
	Workspaces WorkspaceHints
	// Starting reports a start of the provider's program under way; nil:
	// the adapter starts none, or does not say.
	Starting StartReporter
}

// StartReporter reports whether the adapter is starting its program (the
// program spawned, its handshake not answered yet) or, for a provider
// reached over the network, still finding its server. Programs take
// seconds to start, so a listing of every provider reports such a
// provider late early instead of waiting its whole soft deadline for it.
type StartReporter interface {
	Starting() bool
}

// WorkspaceHints takes the workspace the runtime recorded for a session.
// A provider that lists and reopens sessions per directory (ACP's
// session/list, session/load and session/resume take a cwd, and Qwen Code
// or opencode list only the directory they run in without one) needs it
// after a restart, when the adapter's own memory is empty. The registry
// gives it before an operation on a recorded session and before a
// listing.
type WorkspaceHints interface {
	KnowWorkspace(nativeID, cwd string)
}

// Prober performs an adapter's protocol handshake on demand: start the
// program (or find the server) and complete the protocol's opening
// exchange, bounded by ctx. Whatever it starts is stopped by the
// adapter's Close.
type Prober interface {
	Probe(ctx context.Context) error
}

// The Adapter contract is the sum of the small roles below, so code that
// needs one role (a service that only sends, a test fake that only lists
// sessions) can ask for just that role.

// SessionStore finds, starts and resumes a provider's sessions.
type SessionStore interface {
	ListSessions(ctx context.Context) ([]Session, error)
	// GetSession returns (nil, nil) when the provider does not know nativeID.
	GetSession(ctx context.Context, nativeID string) (*Session, error)
	CreateSession(ctx context.Context, opts CreateOptions) (Session, error)
	ResumeSession(ctx context.Context, nativeID string) (Session, error)
}

// Messenger sends prompts, cancels turns and streams a session's events,
// under the delivery contract of [Adapter].
type Messenger interface {
	Send(ctx context.Context, nativeID, text string, opts SendOptions) (Receipt, error)
	Cancel(ctx context.Context, nativeID string) (Receipt, error)
	// Subscribe streams the session's native events until ctx ends or the
	// provider stream ends (the channel is then closed; the registry reopens
	// it and counts a new epoch).
	Subscribe(ctx context.Context, nativeID string) (<-chan NativeEvent, error)
}

// Differ returns the changes a session's turns made.
type Differ interface {
	Diff(ctx context.Context, nativeID string, opts DiffOptions) (any, error)
}

// PermissionBroker lists the provider's permission requests and answers
// them (the answer under the delivery contract of [Adapter]).
type PermissionBroker interface {
	PendingPermissions(ctx context.Context) ([]PermissionRequest, error)
	RespondPermission(ctx context.Context, nativeID, requestID, decision string) (Receipt, error)
}

// Tuner changes a session's model and reasoning effort.
type Tuner interface {
	SetModel(ctx context.Context, nativeID string, model Model) (Receipt, error)
	SetReasoning(ctx context.Context, nativeID, effort string) (Receipt, error)
}

// UnsupportedError says a provider does not support an operation, and why.
type UnsupportedError struct {
	Provider  ID
	Operation string
	Reason    string
}

func (e *UnsupportedError) Error() string {
	if e.Reason == "" {
		return fmt.Sprintf("%s does not support %s", e.Provider, e.Operation)
	}
	return fmt.Sprintf("%s does not support %s: %s", e.Provider, e.Operation, e.Reason)
}

// NotSentError says a request certainly did not reach the provider.
type NotSentError struct{ Err error }

func (e *NotSentError) Error() string { return "not sent: " + e.Err.Error() }
func (e *NotSentError) Unwrap() error { return e.Err }

// RejectedError says the provider answered with a refusal.
type RejectedError struct {
	Reason string
	Detail any
	// Err is what the refusal means when the adapter knows it (for
	// example ErrSessionLost); nil otherwise.
	Err error
}

func (e *RejectedError) Error() string { return "rejected by provider: " + e.Reason }

// Unwrap returns what the refusal means, if the adapter said.
func (e *RejectedError) Unwrap() error { return e.Err }

// ErrSessionLost is wrapped by an adapter's ResumeSession (and by any
// operation that reopens a session) when the provider answered that it no
// longer has the session: ACP's resource_not_found (-32002), Codex's
// "no rollout found" for thread/resume, OpenCode's 404 for the session.
// The wrapping error carries the provider's own words. The registry then
// refuses the resume unless the caller accepts a fresh session.
var ErrSessionLost = errors.New("the provider no longer has the session")

// SessionLost wraps ErrSessionLost with the provider's reason.
func SessionLost(reason string) error {
	reason = strings.TrimSpace(reason)
	if reason == "" {
		return ErrSessionLost
	}
	return &lostError{reason: reason}
}

// lostError is ErrSessionLost with the provider's words.
type lostError struct{ reason string }

func (e *lostError) Error() string { return ErrSessionLost.Error() + ": " + e.reason }
func (e *lostError) Unwrap() error { return ErrSessionLost }

// LostReason returns the provider's words of an error wrapping
// ErrSessionLost ("" when it gave none), and whether err wraps it.
func LostReason(err error) (string, bool) {
	if !errors.Is(err, ErrSessionLost) {
		return "", false
	}
	var le *lostError
	if errors.As(err, &le) {
		return le.reason, true
	}
	return "", true
}

// IsUncertain reports whether err leaves a delivery outcome unknown.
func IsUncertain(err error) bool {
	if err == nil {
		return false
	}
	var ns *NotSentError
	var rj *RejectedError
	var un *UnsupportedError
	return !errors.As(err, &ns) && !errors.As(err, &rj) && !errors.As(err, &un)
}

// EventProviderRestarted is the type of the event an adapter reports in each
// affected session when the provider process (or its connection) was lost
// and started again. Its data carries the reason; whatever was in flight is
// never resent.
const EventProviderRestarted = "provider.restarted"

// EventReporter is optionally implemented by a [Host]. An adapter uses it to
// record an event in a session's log even when no subscription is open (for
// example [EventProviderRestarted]). The registry assigns sequence and epoch.
type EventReporter interface {
	ReportEvent(provider ID, ev NativeEvent)
}

// EndpointRouter is an optional role ([Roles]) of an [Adapter] whose sessions
// can live on more than one endpoint (several servers, several processes).
// The registry records the endpoint that exposed each session and routes
// every later operation on it through ForEndpoint, so a session is never
// redirected to another server. An adapter without it has one endpoint.
type EndpointRouter interface {
	// ForEndpoint returns the adapter bound to endpoint, or an error saying
	// why that endpoint cannot be reached now.
	ForEndpoint(ctx context.Context, endpoint string) (Adapter, error)
}

// LivenessState is what the runtime knows of a session right now.
type LivenessState string

// Liveness states.
const (
	// LiveWorking: a turn is running.
	LiveWorking LivenessState = "working"
	// LiveWaitingOnApproval: the session is parked on a permission request
	// that respond_to_permission has not answered.
	LiveWaitingOnApproval LivenessState = "waiting_on_approval"
	// LiveIdle: the provider is reachable and no turn is running.
	LiveIdle LivenessState = "idle"
	// LiveDead: the process or connection that served the session is gone.
	LiveDead LivenessState = "dead"
	// LiveUnknown: this runtime has not observed the session.
	LiveUnknown LivenessState = "unknown"
)

// Liveness is a session's state as last observed by this runtime, with the
// time of that observation (nil when it never observed the session).
type Liveness struct {
	State      LivenessState `json:"state"`
	ObservedAt *time.Time    `json:"observedAt,omitempty"`
	Reason     string        `json:"reason,omitempty"`
}

// LivenessReporter is an optional role ([Roles]) of an [Adapter]: it answers
// from what the adapter already holds in memory, without contacting the
// provider.
type LivenessReporter interface {
	Liveness(nativeID string) Liveness
}

// TurnQuery names an operation whose outcome a previous runtime process did
// not observe.
type TurnQuery struct {
	NativeID  string
	Operation string // send, cancel, permission
	// CorrelationID is the operation id passed as SendOptions.CorrelationID.
	CorrelationID string
	// NativeTurnID and Ref are what the previous process recorded, if the
	// dispatch returned before it stopped.
	NativeTurnID string
	Ref          string
	// TextSHA256 is the hex SHA-256 of the prompt text; SentAfter bounds
	// the search to turns that started after the operation was recorded.
	TextSHA256 string
	SentAfter  time.Time
	// Request is what a write other than a send asked for, as recorded
	// (a model, an effort), for a StateLookup.
	Request map[string]any
}

// Matches reports whether text is the prompt q names by its SHA-256
// (exactly, or once surrounding blanks are trimmed: a history may store the
// prompt trimmed).
func (q TurnQuery) Matches(text string) bool {
	if q.TextSHA256 == "" {
		return false
	}
	for _, t := range []string{text, strings.TrimSpace(text)} {
		sum := sha256.Sum256([]byte(t))
		if hex.EncodeToString(sum[:]) == q.TextSHA256 {
			return true
		}
	}
	return false
}

// TurnRecord is what the provider's native history says about a turn.
type TurnRecord struct {
	// Found says the provider has the prompt in its history.
	Found bool
	// Status is StatusCompleted or StatusRejected when the history shows
	// the turn's result; anything else means no result was observed.
	Status       ReceiptStatus
	Reason       string
	NativeTurnID string
	// Source names what was read (e.g. "codex thread/read").
	Source string
	// Following says the turn is still running and the adapter now follows
	// it: it reports the outcome through Host.ReportOutcome with Ref, so the
	// operation stays open, owned by this process.
	Following bool
	Ref       string
}

// StateLookup is an optional role ([Roles]) of an [Adapter] whose provider
// shows the effect of a write other than a send in its session's state
// (a stopped turn, a model): it settles such an operation a gone process
// left open by reading that state, without sending anything. Found with
// StatusCompleted: the state shows the write took effect; StatusRejected:
// it shows it did not; Found without a status, or not Found: it cannot be
// known (delivery_unknown).
type StateLookup interface {
	LookupState(ctx context.Context, q TurnQuery) (TurnRecord, error)
}

// TurnLookup is an optional role ([Roles]) of an [Adapter] whose provider keeps
// a history the runtime can read: it finds the turn an operation started
// without sending anything.
type TurnLookup interface {
	LookupTurn(ctx context.Context, q TurnQuery) (TurnRecord, error)
}
