package delivery

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/coder/quartz"
	"github.com/google/uuid"

	"github.com/agent-interop/runtime/catalogs/limits"
	"github.com/agent-interop/runtime/ent"
	"github.com/agent-interop/runtime/ent/operation"
	"github.com/agent-interop/runtime/internal/clockctx"
	"github.com/agent-interop/runtime/internal/providers"
	"github.com/agent-interop/runtime/internal/providers/registry"
	"github.com/agent-interop/runtime/internal/store"
)

// Defaults.
const (
	// DefaultHeartbeatEvery is how often a process renews its owner
	// heartbeat while it runs.
	DefaultHeartbeatEvery = 3 * time.Second
	// DefaultOwnerTimeout is how old an owner's heartbeat may get before
	// another process treats it as gone (a pid that no longer runs on the
	// same host is gone at once).
	DefaultOwnerTimeout = 20 * time.Second
	// DefaultSettleEvery is how often a running process looks for open
	// operations whose owner went away after start-up.
	DefaultSettleEvery = 15 * time.Second
	// DefaultLookupTimeout bounds one native-history lookup at settlement.
	DefaultLookupTimeout = 45 * time.Second
	// MaxKeyLen bounds an idempotency key, in characters: the longest key
	// any tool's schema allows (a review send's key, "review:<handoffId>",
	// is built by the runtime and far shorter).
	MaxKeyLen = max(limits.SendSessionMessageIdempotencyKeyMaxLen, limits.CancelSessionIdempotencyKeyMaxLen,
		limits.RespondToPermissionIdempotencyKeyMaxLen, limits.SendConversationMessageIdempotencyKeyMaxLen,
		limits.SendThreadMessageIdempotencyKeyMaxLen, limits.StopThreadIdempotencyKeyMaxLen, limits.ResumeThreadIdempotencyKeyMaxLen,
		limits.SetThreadModelIdempotencyKeyMaxLen, limits.SetThreadReasoningIdempotencyKeyMaxLen)
	// earlyTTL is how long an outcome waits for its receipt.
	earlyTTL = 10 * time.Minute
	maxEarly = 4096
	// outcomeWriteTimeout bounds the write that records an outcome; it runs
	// even when the caller went away.
	outcomeWriteTimeout = 30 * time.Second
)

// Operation kinds.
const (
	OpSend       = "send"
	OpCancel     = "cancel"
	OpPermission = "permission"
)

// Provider states the ledger itself sets.
const (
	stateDispatching = "dispatching"
	stateReconciling = "reconciling"
	stateReconciled  = "reconciled"
	stateObserved    = "outcome_observed"
	stateLost        = "provider_lost"
)

// Options configure a Service.
type Options struct {
	// Clock is the time source (default the wall clock).
	Clock quartz.Clock
	// HeartbeatEvery, OwnerTimeout, SettleEvery and LookupTimeout: see the
	// Default constants.
	HeartbeatEvery time.Duration
	OwnerTimeout   time.Duration
	SettleEvery    time.Duration
	LookupTimeout  time.Duration
	// NewID returns a fresh unique suffix (default: a UUID).
	NewID func() string
	// Logf receives diagnostics (default: discarded).
	Logf func(format string, args ...any)
	// Process identifies this process as an owner (default: this host,
	// boot and pid). Tests set it to act as another process.
	Process *Process
	// Alive reports whether a pid runs on this host (default: ask the OS).
	Alive func(pid int) bool
	// WatchExit watches a live owner's pid on this host: it returns a
	// channel closed when the process exits, and a function that ends the
	// watch; a nil channel when it cannot watch (default, with the default
	// Alive: a pidfd on Linux, nothing elsewhere). The settlement loop runs as soon as a
	// watched owner exits, besides every SettleEvery.
	WatchExit func(pid int) (exited <-chan struct{}, stop func())
	// Reports, when set, hands the ledger the adapters' operation outcomes
	// (the registry's relay).
	Reports OutcomeSource
	// Events, when set, is told every later outcome of a recorded operation
	// (a conversation message's too: it shows its operation's state) as an
	// EventOperation event of the session, so read_session_events shows a
	// queued send becoming completed or rejected, with the turn it started.
	Events providers.EventReporter
}

// OutcomeSource passes operation outcomes on to a ledger once it is there.
type OutcomeSource interface {
	ForwardOutcomes(providers.Host)
}

// Service records and dispatches operations. It implements providers.Host.
type Service struct {
	st   *store.Store
	reg  *registry.Registry
	opts Options
	// me is this process as an owner, described on first use (self): the
	// host name, the boot id and a fresh id are not needed to answer
	// initialize, only to own or settle an operation.
	meOnce sync.Once
	me     Process

	mu        sync.Mutex // orders receipt recording against outcome handling
	early     map[refKey][]earlyOutcome
	listeners []func(Operation)

	ownerMu    sync.Mutex // guards registered, watched, and every bg.Add against Close
	registered bool
	// marks is the owner marks' directory of a SQLite store (nil for a
	// team store); marked is set once this process's mark was written.
	marks  *marks
	marked atomic.Bool
	// watched holds the pids of live owners on this host being watched;
	// ownerExited wakes the settlement loop when one exits (exitwatch.go).
	watched     map[int]bool
	ownerExited chan struct{}

	queue  chan outcomeReport // made with the worker (startWorker)
	worker sync.Once          // starts the worker, or settles it at Close
	stop   chan struct{}
	// closing ends with Close, as stop does, for work under a context.
	closing    context.Context
	endClosing context.CancelFunc
	done       chan struct{}
	bg         sync.WaitGroup
	closed     sync.Once
}

type refKey struct {
	provider providers.ID
	nativeID string
	ref      string
}

type earlyOutcome struct {
	status providers.ReceiptStatus
	reason string
	turn   *providers.TurnResult
	at     time.Time
}

type outcomeReport struct {
	k      refKey
	status providers.ReceiptStatus
	reason string
	turn   *providers.TurnResult
	at     time.Time
	ack    chan struct{}
}

// New returns a Service; call Close to stop its background work.
func New(st *store.Store, reg *registry.Registry, opts Options) *Service {
	opts = opts.withDefaults()
	s := &Service{
		st: st, reg: reg, opts: opts,
		early: map[refKey][]earlyOutcome{},
		stop:  make(chan struct{}),
		done:  make(chan struct{}),

		watched:     map[int]bool{},
		ownerExited: make(chan struct{}, 1),
	}
	s.closing, s.endClosing = context.WithCancel(context.Background())
	s.marks = marksOf(st)
	if opts.Events != nil {
		s.listeners = append(s.listeners, func(op Operation) { reportOperation(opts.Events, op) })
	}
	if opts.Reports != nil {
		opts.Reports.ForwardOutcomes(s)
	}
	return s
}

// withDefaults fills in what opts leaves unset.
func (opts Options) withDefaults() Options {
	if opts.Clock == nil {
		opts.Clock = quartz.NewReal()
	}
	if opts.HeartbeatEvery <= 0 {
		opts.HeartbeatEvery = DefaultHeartbeatEvery
	}
	if opts.OwnerTimeout <= 0 {
		opts.OwnerTimeout = DefaultOwnerTimeout
	}
	if opts.SettleEvery <= 0 {
		opts.SettleEvery = DefaultSettleEvery
	}
	if opts.LookupTimeout <= 0 {
		opts.LookupTimeout = DefaultLookupTimeout
	}
	if opts.NewID == nil {
		opts.NewID = func() string { return uuid.NewString() }
	}
	if opts.Logf == nil {
		opts.Logf = func(string, ...any) {}
	}
	if opts.Alive == nil {
		opts.Alive = pidAlive
		if opts.WatchExit == nil { // the watch pairs with the OS's process table
			opts.WatchExit = watchExit
		}
	}
	return opts
}

// Owner is this process's owner id (the owner of the operations it
// dispatches).
func (s *Service) Owner() string { return s.self().ID }

// self describes this process as an owner, once: Options.Process, or the
// running process with a fresh id.
func (s *Service) self() *Process {
	s.meOnce.Do(func() {
		if s.opts.Process != nil {
			s.me = *s.opts.Process
		} else {
			s.me = thisProcess()
		}
		if s.me.ID == "" {
			s.me.ID = "rt_" + s.opts.NewID()
		}
	})
	return &s.me
}

// Close stops the outcome worker after it handled what was reported, stops
// the heartbeat and marks this process's ownership as ended, so the next
// process settles what it left open at once.
func (s *Service) Close() error {
	var err error
	s.closed.Do(func() {
		// Under ownerMu: every bg.Add happens under it after checking
		// stop, so none can run concurrently with the Wait below.
		s.ownerMu.Lock()
		close(s.stop)
		s.endClosing()
		s.ownerMu.Unlock()
		// No outcome was ever reported: no worker started, none to wait for.
		s.worker.Do(func() { close(s.done) })
		<-s.done
		s.bg.Wait()
		err = s.release()
	})
	return err
}

// OnOutcome registers f to be called after an observed outcome or a
// settlement changed an operation (for example to log it as an event).
func (s *Service) OnOutcome(f func(Operation)) {
	s.mu.Lock()
	s.listeners = append(s.listeners, f)
	s.mu.Unlock()
}

func (s *Service) notify(ops ...Operation) {
	s.mu.Lock()
	ls := append([]func(Operation){}, s.listeners...)
	s.mu.Unlock()
	for _, o := range ops {
		for _, f := range ls {
			f(o)
		}
	}
}

// Operation is the stored record of one operation.
type Operation struct {
	ID             string                  `json:"id"`
	IdempotencyKey string                  `json:"idempotencyKey"`
	Provider       providers.ID            `json:"provider"`
	NativeID       string                  `json:"nativeId"`
	Operation      string                  `json:"operation"`
	TextSHA256     string                  `json:"textSha256,omitempty"`
	Status         providers.ReceiptStatus `json:"status"`
	ProviderState  string                  `json:"providerState,omitempty"`
	Detail         json.RawMessage         `json:"detail,omitempty"`
	Ref            string                  `json:"ref,omitempty"`
	NativeTurnID   string                  `json:"nativeTurnId,omitempty"`
	Owner          string                  `json:"owner,omitempty"`
	// Turn is what the adapter observed of the turn a send started; nil
	// until the turn ended, or when nothing was observed.
	Turn      *providers.TurnResult `json:"turn,omitempty"`
	CreatedAt time.Time             `json:"createdAt"`
	UpdatedAt time.Time             `json:"updatedAt"`
}

func fromEnt(o *ent.Operation) Operation {
	return Operation{
		ID: o.ID, IdempotencyKey: o.IdempotencyKey, Provider: providers.ID(o.Provider), NativeID: o.NativeID,
		Operation: o.Operation, TextSHA256: o.TextSha256, Status: providers.ReceiptStatus(o.Status),
		ProviderState: o.ProviderState, Detail: o.Detail, Ref: o.Ref, NativeTurnID: o.NativeTurn, Owner: o.Owner,
		Turn: turnFromEnt(o), CreatedAt: o.CreatedAt, UpdatedAt: o.UpdatedAt,
	}
}

// turnFromEnt reads the stored turn facts; nil when none were recorded.
func turnFromEnt(o *ent.Operation) *providers.TurnResult {
	if o.Verdict == nil && o.TurnError == nil && len(o.Usage) == 0 && len(o.ChangedFiles) == 0 {
		return nil
	}
	t := &providers.TurnResult{ChangedFiles: o.ChangedFiles}
	if o.Verdict != nil {
		t.Verdict = providers.Verdict(*o.Verdict)
	}
	if o.TurnError != nil {
		t.Error = *o.TurnError
	}
	if len(o.Usage) > 0 && string(o.Usage) != "null" {
		var u providers.Usage
		if json.Unmarshal(o.Usage, &u) == nil && u.Known() {
			t.Usage = &u
		}
	}
	return t
}

// Reason returns the reason recorded in the operation's detail, if any.
func (o Operation) Reason() string {
	var d struct {
		Reason string `json:"reason"`
	}
	_ = json.Unmarshal(o.Detail, &d)
	return d.Reason
}

// Receipt renders the operation as a receipt (0.3.x OperationReceipt): what
// the ledger knows of it now.
func (o Operation) Receipt() providers.Receipt {
	r := providers.Receipt{
		Provider: o.Provider, NativeID: o.NativeID, Operation: o.Operation, Status: o.Status,
		Accepted: o.Status == providers.StatusQueued || o.Status == providers.StatusCompleted, ProviderState: o.ProviderState,
		NativeTurnID: o.NativeTurnID, Turn: o.Turn,
	}
	// Only the fields the receipt shows are decoded (reads render many).
	var d struct {
		Receipt        json.RawMessage `json:"receipt"`
		Reason         string          `json:"reason"`
		Classification string          `json:"classification"`
	}
	if json.Unmarshal(o.Detail, &d) == nil {
		switch {
		case d.Reason != "" || d.Classification != "":
			m := map[string]any{}
			if d.Reason != "" {
				m["reason"] = d.Reason
			}
			if d.Classification != "" {
				m["classification"] = d.Classification
			}
			r.Detail = m
		case len(d.Receipt) > 0 && string(d.Receipt) != "null":
			r.Detail = d.Receipt
		}
	}
	return r
}

// Result is the answer of a dispatched operation.
type Result struct {
	Operation Operation         `json:"operation"`
	Receipt   providers.Receipt `json:"receipt"`
}

// KeyRule is the one idempotency rule of every write that takes an
// idempotencyKey (send_session_message, cancel_session,
// respond_to_permission, the Freebuff thread writes and conversation
// messages); refusals quote it.
const KeyRule = "an idempotencyKey names one request: the same arguments again answer its stored receipt and send nothing; other arguments need a new idempotencyKey"

// DuplicateKeyError refuses an idempotency key that already has an
// operation for other arguments (another kind, session, text or options).
type DuplicateKeyError struct {
	Key      string
	Existing Operation
}

func (e *DuplicateKeyError) Error() string {
	return fmt.Sprintf("Idempotency key '%s' already has an operation (%s, %s %s:%s, status %s) for other arguments; nothing was sent. Rule: %s.",
		e.Key, e.Existing.ID, e.Existing.Operation, e.Existing.Provider, e.Existing.NativeID, e.Existing.Status, KeyRule)
}

// DeliveryUnknownError says a dispatch's outcome is unknown: the operation
// was recorded as delivery_unknown and will not be sent again.
type DeliveryUnknownError struct {
	Result Result
	Reason string
	Err    error
}

func (e *DeliveryUnknownError) Error() string {
	return fmt.Sprintf("Operation %s persisted with delivery_unknown; it may have reached the provider and must not be resent blindly: %s",
		e.Result.Operation.ID, e.Reason)
}

func (e *DeliveryUnknownError) Unwrap() error { return e.Err }

// OutcomeWriteError says the operation was dispatched but its outcome could
// not be stored; the record stays open under this process, and once this
// process is gone the next one settles it from the provider's history. It
// is uncertain by nature.
type OutcomeWriteError struct {
	OperationID string
	Status      providers.ReceiptStatus
	Err         error
}

func (e *OutcomeWriteError) Error() string {
	return fmt.Sprintf("record %s outcome of operation %s: %v (it was dispatched; it stays open and is settled from the provider's history, never resent)",
		e.Status, e.OperationID, e.Err)
}

func (e *OutcomeWriteError) Unwrap() error { return e.Err }

// InvalidError is a request refused before anything was recorded.
type InvalidError struct{ Msg string }

func (e *InvalidError) Error() string { return e.Msg }

// SendRequest is one send_session_message.
type SendRequest struct {
	Provider       string
	NativeID       string
	Text           string
	IdempotencyKey string
	Options        providers.SendOptions
	// Extra is stored with the request detail (for example the
	// conversation message the send carries).
	Extra map[string]any
}

// Send records and dispatches a prompt to a session.
func (s *Service) Send(ctx context.Context, req SendRequest) (Result, error) {
	sp, err := sendSpec(req)
	if err != nil {
		return Result{}, err
	}
	return s.run(ctx, sp)
}

func sendSpec(req SendRequest) (spec, error) {
	if strings.TrimSpace(req.Text) == "" {
		return spec{}, &InvalidError{Msg: "Message text must not be blank"}
	}
	sum := sha256.Sum256([]byte(req.Text))
	request := map[string]any{}
	if req.Options.Mode != "" {
		request["mode"] = req.Options.Mode
	}
	if req.Options.Model != nil {
		request["model"] = req.Options.Model
	}
	if req.Options.Reasoning != "" {
		request["reasoning"] = req.Options.Reasoning
	}
	if req.Options.Agent != "" {
		request["agent"] = req.Options.Agent
	}
	for k, v := range req.Extra {
		request[k] = v
	}
	return spec{
		provider: req.Provider, nativeID: req.NativeID, key: req.IdempotencyKey, op: OpSend,
		textSHA: hex.EncodeToString(sum[:]), request: request,
		dispatch: func(ctx context.Context, a providers.Adapter, op Operation) (providers.Receipt, error) {
			opts := req.Options
			opts.CorrelationID = op.ID
			return a.Send(ctx, req.NativeID, req.Text, opts)
		},
	}, nil
}

// CancelRequest is one cancel_session.
type CancelRequest struct {
	Provider       string
	NativeID       string
	IdempotencyKey string
}

// Cancel records and dispatches a cancel of the session's running work.
func (s *Service) Cancel(ctx context.Context, req CancelRequest) (Result, error) {
	return s.run(ctx, spec{
		provider: req.Provider, nativeID: req.NativeID, key: req.IdempotencyKey, op: OpCancel,
		dispatch: func(ctx context.Context, a providers.Adapter, _ Operation) (providers.Receipt, error) {
			return a.Cancel(ctx, req.NativeID)
		},
	})
}

// PermissionResponse is one respond_to_permission.
type PermissionResponse struct {
	Provider       string
	NativeID       string
	RequestID      string
	Decision       string
	IdempotencyKey string
}

// RespondPermission records and dispatches the answer to a held request.
func (s *Service) RespondPermission(ctx context.Context, req PermissionResponse) (Result, error) {
	if strings.TrimSpace(req.RequestID) == "" || strings.TrimSpace(req.Decision) == "" {
		return Result{}, &InvalidError{Msg: "requestId and decision are required"}
	}
	return s.run(ctx, spec{
		provider: req.Provider, nativeID: req.NativeID, key: req.IdempotencyKey, op: OpPermission,
		request: map[string]any{"requestId": req.RequestID, "decision": req.Decision},
		dispatch: func(ctx context.Context, a providers.Adapter, _ Operation) (providers.Receipt, error) {
			return a.RespondPermission(ctx, req.NativeID, req.RequestID, req.Decision)
		},
	})
}

type spec struct {
	provider, nativeID, key, op string
	textSHA                     string
	request                     map[string]any
	dispatch                    func(ctx context.Context, a providers.Adapter, op Operation) (providers.Receipt, error)
}

// detail is the JSON stored in an operation's detail column.
type detail struct {
	Request        map[string]any  `json:"request,omitempty"`
	Receipt        any             `json:"receipt,omitempty"`
	Reason         string          `json:"reason,omitempty"`
	Classification string          `json:"classification,omitempty"`
	Outcome        *outcomeDetail  `json:"outcome,omitempty"`
	Reconciliation *reconciliation `json:"reconciliation,omitempty"`
	// Imported is the record as another program stored it (see
	// ImportedOwner).
	Imported json.RawMessage `json:"imported,omitempty"`
}

type outcomeDetail struct {
	Status providers.ReceiptStatus `json:"status"`
	Reason string                  `json:"reason,omitempty"`
	At     time.Time               `json:"at"`
}

func (d detail) raw() json.RawMessage {
	b, err := json.Marshal(d)
	if err != nil {
		b, _ = json.Marshal(detail{Reason: d.Reason, Classification: d.Classification, Imported: d.Imported})
	}
	return b
}

func decodeDetail(raw json.RawMessage) detail {
	var d detail
	_ = json.Unmarshal(raw, &d)
	return d
}

func (s *Service) checkKey(k string) (string, error) {
	key := strings.TrimSpace(k)
	if key == "" {
		key = "auto_" + s.opts.NewID()
	}
	if n := utf8.RuneCountInString(key); n > MaxKeyLen {
		return "", &InvalidError{Msg: fmt.Sprintf("idempotencyKey must be at most %d characters; received %d", MaxKeyLen, n)}
	}
	return key, nil
}

func (s *Service) run(ctx context.Context, sp spec) (Result, error) {
	op, rt, replay, err := s.record(ctx, sp)
	switch {
	case err != nil:
		return Result{}, err
	case replay:
		return Replay(op)
	}
	return s.dispatch(ctx, op, rt, sp)
}

// record is the prologue of every write: the key checked (or generated),
// the session resolved (an unknown provider or session is refused before
// anything is recorded), and the operation recorded, queued and owned by
// this process, before anything is sent. A key that already has an
// operation follows KeyRule: the same request (replay true, op the
// recorded operation; nothing is to be sent) or a *DuplicateKeyError.
func (s *Service) record(ctx context.Context, sp spec) (op Operation, rt registry.Route, replay bool, err error) {
	key, err := s.checkKey(sp.key)
	if err != nil {
		return Operation{}, rt, false, err
	}
	if rt, err = s.reg.Resolve(ctx, sp.provider, sp.nativeID); err != nil {
		return Operation{}, rt, false, err
	}
	err = s.st.Tx(ctx, func(tx *ent.Tx) error {
		var err error
		op, err = s.recordTx(ctx, tx, rt.Provider, rt.NativeID, key, sp)
		return err
	})
	if err != nil {
		err = s.recordError(ctx, key, sp.op, err)
		var dup *DuplicateKeyError
		if errors.As(err, &dup) && sameRequest(dup.Existing, rt.Provider, rt.NativeID, sp) {
			return dup.Existing, rt, true, nil
		}
		return Operation{}, rt, false, err
	}
	s.registeredNow()
	return op, rt, false, nil
}

// dispatch calls the adapter for a recorded operation and stores the
// outcome.
func (s *Service) dispatch(ctx context.Context, op Operation, rt registry.Route, sp spec) (Result, error) {
	receipt, derr := s.dispatchSafely(ctx, rt.Adapter, sp, op)
	return s.finish(ctx, op, rt, receipt, derr)
}

// dispatchSafely calls the adapter; a panic is an uncertain outcome.
func (s *Service) dispatchSafely(ctx context.Context, a providers.Adapter, sp spec, op Operation) (r providers.Receipt, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("adapter panicked during %s: %v", sp.op, p)
		}
	}()
	return sp.dispatch(ctx, a, op)
}

// recordTx writes the queued operation, owned by this process, inside tx,
// refusing a reused key.
func (s *Service) recordTx(ctx context.Context, tx *ent.Tx, provider providers.ID, nativeID, key string, sp spec) (Operation, error) {
	if err := s.ensureOwnerTx(ctx, tx); err != nil {
		return Operation{}, err
	}
	existing, err := tx.Operation.Query().Where(operation.IdempotencyKey(key)).Only(ctx)
	if err == nil {
		return Operation{}, &DuplicateKeyError{Key: key, Existing: fromEnt(existing)}
	}
	if !ent.IsNotFound(err) {
		return Operation{}, err
	}
	now := s.opts.Clock.Now().UTC()
	created, err := tx.Operation.Create().
		SetID("op_" + s.opts.NewID()).SetIdempotencyKey(key).SetProvider(string(provider)).SetNativeID(nativeID).
		SetOperation(sp.op).SetTextSha256(sp.textSHA).SetStatus(operation.StatusQueued).
		SetProviderState(stateDispatching).SetDetail(detail{Request: sp.request}.raw()).
		SetOwner(s.self().ID).SetCreatedAt(now).SetUpdatedAt(now).Save(ctx)
	if err != nil {
		return Operation{}, err
	}
	return fromEnt(created), nil
}

// recordError turns a failed record transaction into the error callers
// see: a reused key (also when another process inserted it concurrently)
// is a DuplicateKeyError.
func (s *Service) recordError(ctx context.Context, key, op string, err error) error {
	var dup *DuplicateKeyError
	switch {
	case errors.As(err, &dup):
		return err
	case ent.IsConstraintError(err):
		if o, qerr := s.st.Client().Operation.Query().Where(operation.IdempotencyKey(key)).Only(ctx); qerr == nil {
			return &DuplicateKeyError{Key: key, Existing: fromEnt(o)}
		}
	}
	return fmt.Errorf("record %s operation: %w", op, err)
}

// classify maps a dispatch result onto a stored status.
func classify(got providers.Receipt, err error) (providers.ReceiptStatus, string, string) {
	if err == nil {
		switch {
		case !got.Accepted || got.Status == providers.StatusRejected:
			return providers.StatusRejected, "rejected", "the provider did not accept it"
		case got.Status == providers.StatusCompleted:
			return providers.StatusCompleted, "", ""
		case got.Status == providers.StatusDeliveryUnknown:
			return providers.StatusDeliveryUnknown, "delivery_unknown", "the provider reported an unknown outcome"
		default:
			return providers.StatusQueued, "", ""
		}
	}
	var rj *providers.RejectedError
	var ns *providers.NotSentError
	var un *providers.UnsupportedError
	switch {
	case errors.As(err, &rj):
		return providers.StatusRejected, "rejected", rj.Reason
	case errors.As(err, &ns):
		return providers.StatusRejected, "not_sent", ns.Err.Error()
	case errors.As(err, &un):
		return providers.StatusRejected, "unsupported", un.Error()
	default:
		return providers.StatusDeliveryUnknown, "delivery_unknown", err.Error()
	}
}

// finish stores the dispatch outcome and applies an outcome that was
// reported before the receipt. A queued (transport-accepted) operation
// stays owned by this process, which follows its outcome.
func (s *Service) finish(ctx context.Context, op Operation, rt registry.Route, got providers.Receipt, derr error) (Result, error) {
	status, class, reason := classify(got, derr)
	receipt := got
	receipt.Provider, receipt.NativeID = rt.Provider, rt.NativeID
	if receipt.Operation == "" {
		receipt.Operation = op.Operation
	}
	receipt.Status = status
	receipt.Accepted = status == providers.StatusQueued || status == providers.StatusCompleted
	providerState := got.ProviderState
	if derr != nil {
		providerState = class
	}
	d := decodeDetail(op.Detail)
	d.Receipt = got.Detail
	d.Reason, d.Classification = reason, class
	if derr != nil {
		receipt.Detail = map[string]any{"reason": reason, "classification": class}
		if rj := new(providers.RejectedError); errors.As(derr, &rj) && rj.Detail != nil {
			receipt.Detail.(map[string]any)["detail"] = rj.Detail
		}
	}
	wctx, cancel := clockctx.WithTimeout(context.WithoutCancel(ctx), s.opts.Clock, outcomeWriteTimeout, "delivery", "outcome write")
	defer cancel()
	s.mu.Lock()
	var stored *ent.Operation
	err := s.st.Tx(wctx, func(tx *ent.Tx) error {
		var err error
		stored, err = tx.Operation.UpdateOneID(op.ID).
			Where(operation.StatusEQ(operation.StatusQueued), operation.Owner(s.self().ID)).
			SetStatus(operation.Status(status)).SetProviderState(providerState).SetDetail(d.raw()).
			SetRef(got.Ref).SetNativeTurn(got.NativeTurnID).SetUpdatedAt(s.opts.Clock.Now().UTC()).Save(wctx)
		if !ent.IsNotFound(err) {
			return err
		}
		// Settled meanwhile by another process (which took this one for
		// gone): keep its verdict, add what only this dispatch knows (the
		// ref, so later outcomes still match), and let an observed result
		// resolve a delivery_unknown.
		cur, err := tx.Operation.Get(wctx, op.ID)
		if err != nil {
			return err
		}
		upd := cur.Update()
		if cur.Ref == "" && got.Ref != "" {
			upd.SetRef(got.Ref)
		}
		if cur.NativeTurn == "" && got.NativeTurnID != "" {
			upd.SetNativeTurn(got.NativeTurnID)
		}
		if cur.Status == operation.StatusDeliveryUnknown && (status == providers.StatusCompleted || status == providers.StatusRejected) {
			cd := decodeDetail(cur.Detail)
			cd.Outcome = &outcomeDetail{Status: status, Reason: reason, At: s.opts.Clock.Now().UTC()}
			cd.Reason, cd.Classification = reason, class
			upd.SetStatus(operation.Status(status)).SetProviderState(providerState).SetDetail(cd.raw()).SetUpdatedAt(s.opts.Clock.Now().UTC())
		}
		stored, err = upd.Save(wctx)
		return err
	})
	var early []earlyOutcome
	if err == nil && got.Ref != "" && status == providers.StatusQueued {
		k := refKey{rt.Provider, rt.NativeID, got.Ref}
		early = s.early[k]
		delete(s.early, k)
	}
	s.mu.Unlock()
	if err != nil {
		return Result{Operation: op}, &OutcomeWriteError{OperationID: op.ID, Status: status, Err: err}
	}
	res := Result{Operation: fromEnt(stored), Receipt: receipt}
	for _, e := range early {
		s.mu.Lock()
		_, changed := s.apply(wctx, refKey{rt.Provider, rt.NativeID, got.Ref}, e.status, e.reason, e.turn, e.at)
		s.mu.Unlock()
		s.notify(changed...)
		if o, err := s.st.Client().Operation.Get(wctx, op.ID); err == nil {
			res.Operation = fromEnt(o)
		}
	}
	if res.Operation.Status != receipt.Status { // an early outcome, or a settlement elsewhere
		res.Receipt.Status = res.Operation.Status
		res.Receipt.Accepted = res.Operation.Status == providers.StatusQueued || res.Operation.Status == providers.StatusCompleted
	}
	if status == providers.StatusDeliveryUnknown {
		return res, &DeliveryUnknownError{Result: res, Reason: reason, Err: derr}
	}
	return res, nil
}

// Get returns one operation by id.
func (s *Service) Get(ctx context.Context, id string) (Operation, error) {
	o, err := s.st.Client().Operation.Get(ctx, id)
	if ent.IsNotFound(err) {
		return Operation{}, fmt.Errorf("Unknown operation %s", id)
	}
	if err != nil {
		return Operation{}, fmt.Errorf("read operation %s: %w", id, err)
	}
	return fromEnt(o), nil
}

// ByKey returns the operation recorded under an idempotency key.
func (s *Service) ByKey(ctx context.Context, key string) (Operation, error) {
	o, err := s.st.Client().Operation.Query().Where(operation.IdempotencyKey(key)).Only(ctx)
	if ent.IsNotFound(err) {
		return Operation{}, fmt.Errorf("No operation has idempotency key '%s'", key)
	}
	if err != nil {
		return Operation{}, fmt.Errorf("read operation with key %s: %w", key, err)
	}
	return fromEnt(o), nil
}

// Liveness returns what the runtime knows now of the session an operation
// went to.
func (s *Service) Liveness(provider providers.ID, nativeID string) providers.Liveness {
	return s.reg.Liveness(provider, nativeID)
}
