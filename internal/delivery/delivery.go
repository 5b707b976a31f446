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
	"time"

	"github.com/google/uuid"

	"github.com/agent-interop/runtime/ent"
	"github.com/agent-interop/runtime/ent/operation"
	"github.com/agent-interop/runtime/internal/providers"
	"github.com/agent-interop/runtime/internal/providers/registry"
	"github.com/agent-interop/runtime/internal/store"
)

// Defaults.
const (
	DefaultLease      = 120 * time.Second
	DefaultRenewEvery = 30 * time.Second
	// MaxKeyLen bounds an idempotency key.
	MaxKeyLen = 200
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

// Options configure a Service.
type Options struct {
	// Now is the clock (default time.Now); leases are computed with it.
	Now func() time.Time
	// Lease is the in-flight lease (default 120 s).
	Lease time.Duration
	// RenewEvery is how often an in-flight lease is renewed (default 30 s).
	RenewEvery time.Duration
	// NewID returns a fresh unique suffix (default: a UUID).
	NewID func() string
	// Logf receives diagnostics (default: discarded).
	Logf func(format string, args ...any)
}

// Service records and dispatches operations. It implements providers.Host.
type Service struct {
	st   *store.Store
	reg  *registry.Registry
	opts Options

	mu        sync.Mutex // orders receipt recording against outcome handling
	early     map[refKey][]earlyOutcome
	listeners []func(Operation)

	queue  chan outcomeReport
	stop   chan struct{}
	done   chan struct{}
	closed sync.Once
}

type refKey struct {
	provider providers.ID
	nativeID string
	ref      string
}

type earlyOutcome struct {
	status providers.ReceiptStatus
	reason string
	at     time.Time
}

type outcomeReport struct {
	k      refKey
	status providers.ReceiptStatus
	reason string
	at     time.Time
	ack    chan struct{}
}

// New returns a Service; call Close to stop its outcome worker.
func New(st *store.Store, reg *registry.Registry, opts Options) *Service {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Lease <= 0 {
		opts.Lease = DefaultLease
	}
	if opts.RenewEvery <= 0 {
		opts.RenewEvery = DefaultRenewEvery
	}
	if opts.NewID == nil {
		opts.NewID = func() string { return uuid.NewString() }
	}
	if opts.Logf == nil {
		opts.Logf = func(string, ...any) {}
	}
	s := &Service{
		st: st, reg: reg, opts: opts,
		early: map[refKey][]earlyOutcome{},
		queue: make(chan outcomeReport, 1024),
		stop:  make(chan struct{}),
		done:  make(chan struct{}),
	}
	go s.worker()
	return s
}

// Close stops the outcome worker after it handled what was reported.
func (s *Service) Close() error {
	s.closed.Do(func() { close(s.stop) })
	<-s.done
	return nil
}

// OnOutcome registers f to be called after an observed outcome changed an
// operation (for example to mirror it into a conversation message).
func (s *Service) OnOutcome(f func(Operation)) {
	s.mu.Lock()
	s.listeners = append(s.listeners, f)
	s.mu.Unlock()
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
	LeaseExpiresAt *time.Time              `json:"leaseExpiresAt,omitempty"`
	CreatedAt      time.Time               `json:"createdAt"`
	UpdatedAt      time.Time               `json:"updatedAt"`
}

func fromEnt(o *ent.Operation) Operation {
	return Operation{
		ID: o.ID, IdempotencyKey: o.IdempotencyKey, Provider: providers.ID(o.Provider), NativeID: o.NativeID,
		Operation: o.Operation, TextSHA256: o.TextSha256, Status: providers.ReceiptStatus(o.Status),
		ProviderState: o.ProviderState, Detail: o.Detail, Ref: o.Ref, LeaseExpiresAt: o.LeaseExpiresAt,
		CreatedAt: o.CreatedAt, UpdatedAt: o.UpdatedAt,
	}
}

// Result is the answer of a dispatched operation.
type Result struct {
	Operation Operation         `json:"operation"`
	Receipt   providers.Receipt `json:"receipt"`
}

// DuplicateKeyError refuses a reused idempotency key.
type DuplicateKeyError struct {
	Key       string
	Existing  Operation
	Operation string
}

func (e *DuplicateKeyError) Error() string {
	return fmt.Sprintf("Idempotency key '%s' already has an operation (%s, %s %s:%s, status %s). Inspect the existing record instead of resending.",
		e.Key, e.Existing.ID, e.Existing.Operation, e.Existing.Provider, e.Existing.NativeID, e.Existing.Status)
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
// not be stored; the record keeps its lease, which expires, and the next
// start marks it delivery_unknown. It is uncertain by nature.
type OutcomeWriteError struct {
	OperationID string
	Status      providers.ReceiptStatus
	Err         error
}

func (e *OutcomeWriteError) Error() string {
	return fmt.Sprintf("record %s outcome of operation %s: %v (it was dispatched; its lease will expire and the next start marks it delivery_unknown)",
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
}

// Send records and dispatches a prompt to a session.
func (s *Service) Send(ctx context.Context, req SendRequest) (Result, error) {
	return s.send(ctx, req, nil)
}

func (s *Service) send(ctx context.Context, req SendRequest, extra map[string]any) (Result, error) {
	if strings.TrimSpace(req.Text) == "" {
		return Result{}, &InvalidError{Msg: "Message text must not be blank"}
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
	for k, v := range extra {
		request[k] = v
	}
	return s.run(ctx, spec{
		provider: req.Provider, nativeID: req.NativeID, key: req.IdempotencyKey, op: OpSend,
		textSHA: hex.EncodeToString(sum[:]), request: request,
		dispatch: func(ctx context.Context, a providers.Adapter) (providers.Receipt, error) {
			return a.Send(ctx, req.NativeID, req.Text, req.Options)
		},
	})
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
		dispatch: func(ctx context.Context, a providers.Adapter) (providers.Receipt, error) {
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
		dispatch: func(ctx context.Context, a providers.Adapter) (providers.Receipt, error) {
			return a.RespondPermission(ctx, req.NativeID, req.RequestID, req.Decision)
		},
	})
}

type spec struct {
	provider, nativeID, key, op string
	textSHA                     string
	request                     map[string]any
	dispatch                    func(ctx context.Context, a providers.Adapter) (providers.Receipt, error)
}

// detail is the JSON stored in an operation's detail column.
type detail struct {
	Request        map[string]any `json:"request,omitempty"`
	Receipt        any            `json:"receipt,omitempty"`
	Reason         string         `json:"reason,omitempty"`
	Classification string         `json:"classification,omitempty"`
	Outcome        *outcomeDetail `json:"outcome,omitempty"`
}

type outcomeDetail struct {
	Status providers.ReceiptStatus `json:"status"`
	Reason string                  `json:"reason,omitempty"`
	At     time.Time               `json:"at"`
}

func (d detail) raw() json.RawMessage {
	b, err := json.Marshal(d)
	if err != nil {
		b, _ = json.Marshal(detail{Reason: d.Reason, Classification: d.Classification})
	}
	return b
}

func (s *Service) run(ctx context.Context, sp spec) (Result, error) {
	key := strings.TrimSpace(sp.key)
	if key == "" {
		key = "auto_" + s.opts.NewID()
	}
	if len(key) > MaxKeyLen {
		return Result{}, &InvalidError{Msg: fmt.Sprintf("idempotencyKey must be at most %d characters; received %d", MaxKeyLen, len(key))}
	}
	// Unknown provider or session: refused before anything is recorded.
	rt, err := s.reg.Resolve(ctx, sp.provider, sp.nativeID)
	if err != nil {
		return Result{}, err
	}
	op, err := s.record(ctx, rt, key, sp)
	if err != nil {
		return Result{}, err
	}
	stop := s.renew(op.ID)
	receipt, derr := s.dispatchSafely(ctx, rt.Adapter, sp)
	stop()
	return s.finish(ctx, op, rt, receipt, derr)
}

// dispatchSafely calls the adapter; a panic is an uncertain outcome.
func (s *Service) dispatchSafely(ctx context.Context, a providers.Adapter, sp spec) (r providers.Receipt, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("adapter panicked during %s: %v", sp.op, p)
		}
	}()
	return sp.dispatch(ctx, a)
}

// record writes the queued, leased operation in one write transaction,
// refusing a reused key.
func (s *Service) record(ctx context.Context, rt registry.Route, key string, sp spec) (Operation, error) {
	now := s.opts.Now().UTC()
	lease := now.Add(s.opts.Lease)
	id := "op_" + s.opts.NewID()
	var created *ent.Operation
	err := s.st.Tx(ctx, func(tx *ent.Tx) error {
		existing, err := tx.Operation.Query().Where(operation.IdempotencyKey(key)).Only(ctx)
		if err == nil {
			return &DuplicateKeyError{Key: key, Existing: fromEnt(existing)}
		}
		if !ent.IsNotFound(err) {
			return err
		}
		created, err = tx.Operation.Create().
			SetID(id).SetIdempotencyKey(key).SetProvider(string(rt.Provider)).SetNativeID(rt.NativeID).
			SetOperation(sp.op).SetTextSha256(sp.textSHA).SetStatus(operation.StatusQueued).
			SetProviderState("dispatching").SetDetail(detail{Request: sp.request}.raw()).
			SetLeaseExpiresAt(lease).SetCreatedAt(now).SetUpdatedAt(now).Save(ctx)
		return err
	})
	var dup *DuplicateKeyError
	switch {
	case errors.As(err, &dup):
		return Operation{}, err
	case ent.IsConstraintError(err):
		// Another process inserted the key between our read and write.
		if o, qerr := s.st.Client().Operation.Query().Where(operation.IdempotencyKey(key)).Only(ctx); qerr == nil {
			return Operation{}, &DuplicateKeyError{Key: key, Existing: fromEnt(o)}
		}
		return Operation{}, fmt.Errorf("record %s operation: %w", sp.op, err)
	case err != nil:
		return Operation{}, fmt.Errorf("record %s operation: %w", sp.op, err)
	}
	return fromEnt(created), nil
}

// renew keeps the lease of an in-flight operation alive until stop.
func (s *Service) renew(id string) (stop func()) {
	quit := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(s.opts.RenewEvery)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-t.C:
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				now := s.opts.Now().UTC()
				err := s.st.Tx(ctx, func(tx *ent.Tx) error {
					return tx.Operation.Update().
						Where(operation.ID(id), operation.StatusEQ(operation.StatusQueued), operation.LeaseExpiresAtNotNil()).
						SetLeaseExpiresAt(now.Add(s.opts.Lease)).SetUpdatedAt(now).Exec(ctx)
				})
				cancel()
				if err != nil {
					s.opts.Logf("delivery: renew lease of %s: %v", id, err)
				}
			}
		}
	}()
	return func() { close(quit); wg.Wait() }
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

// finish stores the dispatch outcome (clearing the lease) and applies an
// outcome that was reported before the receipt.
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
	var d detail
	_ = json.Unmarshal(op.Detail, &d)
	d.Receipt = got.Detail
	d.Reason, d.Classification = reason, class
	if derr != nil {
		receipt.Detail = map[string]any{"reason": reason, "classification": class}
		if rj := new(providers.RejectedError); errors.As(derr, &rj) && rj.Detail != nil {
			receipt.Detail.(map[string]any)["detail"] = rj.Detail
		}
	}
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), outcomeWriteTimeout)
	defer cancel()
	s.mu.Lock()
	var stored *ent.Operation
	err := s.st.Tx(wctx, func(tx *ent.Tx) error {
		upd := tx.Operation.UpdateOneID(op.ID).
			Where(operation.StatusIn(operation.StatusQueued, operation.StatusDeliveryUnknown)).
			SetStatus(operation.Status(status)).SetProviderState(providerState).SetDetail(d.raw()).
			SetRef(got.Ref).ClearLeaseExpiresAt().SetUpdatedAt(s.opts.Now().UTC())
		var err error
		stored, err = upd.Save(wctx)
		if ent.IsNotFound(err) { // already finalised elsewhere: report what is stored
			stored, err = tx.Operation.Get(wctx, op.ID)
		}
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
		s.apply(wctx, refKey{rt.Provider, rt.NativeID, got.Ref}, e.status, e.reason, e.at)
		if o, err := s.st.Client().Operation.Get(wctx, op.ID); err == nil {
			res.Operation = fromEnt(o)
		}
	}
	if res.Operation.Status != receipt.Status && len(early) > 0 {
		res.Receipt.Status = res.Operation.Status
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

// Recover marks every queued operation whose lease expired as
// delivery_unknown: its runtime stopped mid-dispatch, so it may or may not
// have reached the provider. It is never sent again. Returns the operations
// changed. Run it once at start-up (it is idempotent).
func (s *Service) Recover(ctx context.Context) ([]Operation, error) {
	now := s.opts.Now().UTC()
	var changed []Operation
	err := s.st.Tx(ctx, func(tx *ent.Tx) error {
		stale, err := tx.Operation.Query().
			Where(operation.StatusEQ(operation.StatusQueued), operation.LeaseExpiresAtNotNil(), operation.LeaseExpiresAtLT(now)).
			All(ctx)
		if err != nil {
			return err
		}
		changed = changed[:0]
		for _, o := range stale {
			var d detail
			_ = json.Unmarshal(o.Detail, &d)
			d.Classification = "delivery_unknown"
			d.Reason = fmt.Sprintf("the runtime stopped while dispatching (lease expired at %s); it may have reached the provider and is not resent",
				o.LeaseExpiresAt.UTC().Format(time.RFC3339))
			u, err := tx.Operation.UpdateOneID(o.ID).
				Where(operation.StatusEQ(operation.StatusQueued)).
				SetStatus(operation.StatusDeliveryUnknown).SetProviderState("lease_expired").
				SetDetail(d.raw()).ClearLeaseExpiresAt().SetUpdatedAt(now).Save(ctx)
			if err != nil {
				return err
			}
			changed = append(changed, fromEnt(u))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("recover interrupted operations: %w", err)
	}
	return changed, nil
}
