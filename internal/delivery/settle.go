package delivery

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agent-interop/runtime/ent"
	"github.com/agent-interop/runtime/ent/operation"
	"github.com/agent-interop/runtime/ent/runtimeowner"
	"github.com/agent-interop/runtime/internal/clockctx"
	"github.com/agent-interop/runtime/internal/growstack"
	"github.com/agent-interop/runtime/internal/providers"
)

// reconciliation is how an operation whose owner was gone was settled; it
// is stored in the operation's detail.
type reconciliation struct {
	By            string    `json:"by"` // the owner id of the settling process
	At            time.Time `json:"at"`
	PreviousOwner string    `json:"previousOwner,omitempty"`
	OwnerGone     string    `json:"ownerGone"`
	Source        string    `json:"source,omitempty"` // what history was read
	Found         bool      `json:"found"`
	Result        string    `json:"result"`
	LookupError   string    `json:"lookupError,omitempty"`
}

// Settle finds the open (queued) operations whose owner is gone (stopped,
// dead, or silent past the owner timeout) and settles each one from the
// provider's native history: completed or rejected only when the history
// shows the turn's result, otherwise delivery_unknown with the reason.
// Nothing is ever sent again. Operations a live process owns are left to
// it, and imported ones (ImportedOwner) are never claimed. It returns the operations it changed and is safe to run from several
// processes at once (each operation is claimed before it is looked up).
func (s *Service) Settle(ctx context.Context) ([]Operation, error) {
	return s.settle(ctx, nil)
}

// SettleOperations is Settle restricted to the given operation ids.
func (s *Service) SettleOperations(ctx context.Context, ids []string) ([]Operation, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	return s.settle(ctx, ids)
}

// orphan is an open operation whose owner is gone.
type orphan struct {
	op   *ent.Operation
	why  string
	prev string
}

func (s *Service) settle(ctx context.Context, only []string) ([]Operation, error) {
	orphans, err := s.orphans(ctx, only)
	if err != nil || len(orphans) == 0 {
		return nil, err
	}
	if err := s.ensureOwner(ctx); err != nil {
		return nil, err
	}
	var changed []Operation
	defer func() { s.notify(changed...) }() // what was settled, even if a later one failed
	for _, o := range orphans {
		if ctx.Err() != nil {
			break
		}
		claimed, err := s.claim(ctx, o)
		if err != nil {
			return changed, err
		}
		if !claimed {
			continue // another process took it, or it was settled meanwhile
		}
		op, err := s.settleOne(ctx, o)
		if err != nil {
			return changed, err
		}
		if op != nil {
			changed = append(changed, *op)
		}
	}
	return changed, ctx.Err()
}

// orphans lists the open operations (of only, when given) whose owner is
// gone.
func (s *Service) orphans(ctx context.Context, only []string) ([]orphan, error) {
	q := s.st.Client().Operation.Query().
		Where(operation.StatusEQ(operation.StatusQueued), operation.OwnerNEQ(s.self().ID), operation.OwnerNEQ(ImportedOwner))
	if only != nil {
		q = q.Where(operation.IDIn(only...))
	}
	open, err := q.Order(ent.Asc(operation.FieldCreatedAt)).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("read open operations: %w", err)
	}
	if len(open) == 0 {
		return nil, nil
	}
	ids := map[string]bool{}
	for _, o := range open {
		ids[o.Owner] = true
	}
	list := make([]string, 0, len(ids))
	for id := range ids {
		list = append(list, id)
	}
	rows, err := s.st.Client().RuntimeOwner.Query().Where(runtimeowner.IDIn(list...)).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("read operation owners: %w", err)
	}
	owners := map[string]*ent.RuntimeOwner{}
	for _, r := range rows {
		owners[r.ID] = r
	}
	var out []orphan
	for _, o := range open {
		if gone, why := s.gone(o.Owner, owners[o.Owner]); gone {
			out = append(out, orphan{op: o, why: why, prev: o.Owner})
		} else if r := owners[o.Owner]; r != nil && r.Host != "" && r.Host == s.self().Host {
			s.watchOwner(r.Pid)
		}
	}
	return out, nil
}

// claim makes this process the operation's owner, unless another process
// claimed or settled it first.
func (s *Service) claim(ctx context.Context, o orphan) (bool, error) {
	var n int
	err := s.st.Tx(ctx, func(tx *ent.Tx) error {
		var err error
		n, err = tx.Operation.Update().
			Where(operation.ID(o.op.ID), operation.StatusEQ(operation.StatusQueued), operation.Owner(o.prev)).
			SetOwner(s.self().ID).SetProviderState(stateReconciling).SetUpdatedAt(s.opts.Clock.Now().UTC()).Save(ctx)
		return err
	})
	if err != nil {
		return false, fmt.Errorf("claim operation %s: %w", o.op.ID, err)
	}
	return n == 1, nil
}

// settleOne looks a claimed operation up and records the result.
func (s *Service) settleOne(ctx context.Context, o orphan) (*Operation, error) {
	op := o.op
	rec := reconciliation{By: s.self().ID, At: s.opts.Clock.Now().UTC(), PreviousOwner: o.prev, OwnerGone: o.why}
	found, lookupErr := s.lookup(ctx, op)
	rec.Source, rec.Found = found.Source, found.Found
	status := providers.StatusDeliveryUnknown
	var reason string
	switch {
	case lookupErr != nil:
		rec.LookupError = lookupErr.Error()
		reason = fmt.Sprintf("%s before its outcome was observed, and %s; it may or may not have reached %s and is not resent",
			o.why, lookupErr.Error(), op.Provider)
	case found.Found && found.Status == providers.StatusCompleted:
		status = providers.StatusCompleted
		reason = "completed, as observed in " + found.Source
		if found.Reason != "" {
			reason += " (" + found.Reason + ")"
		}
	case found.Found && found.Status == providers.StatusRejected:
		status = providers.StatusRejected
		reason = found.Reason
		if reason == "" {
			reason = "the provider's history shows the turn failed"
		}
		reason += " (observed in " + found.Source + ")"
	case found.Found:
		why := found.Reason
		if why == "" {
			why = "its result is not in the history"
		}
		reason = fmt.Sprintf("%s; %s shows it reached %s, but %s; it is not resent", o.why, found.Source, op.Provider, why)
	default:
		reason = fmt.Sprintf("%s while it was in flight, and %s has no record of it; it may or may not have reached %s and is not resent",
			o.why, found.Source, op.Provider)
	}
	if lookupErr == nil && found.Found && found.Following {
		return s.follow(ctx, o, rec, found)
	}
	rec.Result = string(status)
	d := decodeDetail(op.Detail)
	d.Reconciliation = &rec
	d.Reason = reason
	if status == providers.StatusDeliveryUnknown {
		d.Classification = "delivery_unknown"
	} else {
		d.Classification = ""
		d.Outcome = &outcomeDetail{Status: status, Reason: reason, At: rec.At}
	}
	turn := op.NativeTurn
	if found.NativeTurnID != "" {
		turn = found.NativeTurnID
	}
	wctx, cancel := clockctx.WithTimeout(context.WithoutCancel(ctx), s.opts.Clock, outcomeWriteTimeout, "delivery", "outcome write")
	defer cancel()
	var saved *ent.Operation
	err := s.st.Tx(wctx, func(tx *ent.Tx) error {
		var err error
		saved, err = tx.Operation.UpdateOneID(op.ID).
			Where(operation.StatusEQ(operation.StatusQueued), operation.Owner(s.self().ID)).
			SetStatus(operation.Status(status)).SetProviderState(stateReconciled).SetDetail(d.raw()).
			SetNativeTurn(turn).SetUpdatedAt(s.opts.Clock.Now().UTC()).Save(wctx)
		if ent.IsNotFound(err) {
			saved, err = nil, nil // an observed outcome won the race
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("record settlement of operation %s: %w", op.ID, err)
	}
	if saved == nil {
		return nil, nil
	}
	out := fromEnt(saved)
	s.opts.Logf("delivery: settled %s %s %s:%s as %s: %s", out.ID, out.Operation, out.Provider, out.NativeID, out.Status, reason)
	return &out, nil
}

// follow records that the adapter follows a still-running turn for this
// process: the operation stays open, owned here, under the adapter's ref.
func (s *Service) follow(ctx context.Context, o orphan, rec reconciliation, found providers.TurnRecord) (*Operation, error) {
	op := o.op
	rec.Result = "following"
	d := decodeDetail(op.Detail)
	d.Reconciliation = &rec
	ref := op.Ref
	if found.Ref != "" {
		ref = found.Ref
	}
	turn := op.NativeTurn
	if found.NativeTurnID != "" {
		turn = found.NativeTurnID
	}
	var saved *ent.Operation
	err := s.st.Tx(ctx, func(tx *ent.Tx) error {
		var err error
		saved, err = tx.Operation.UpdateOneID(op.ID).
			Where(operation.StatusEQ(operation.StatusQueued), operation.Owner(s.self().ID)).
			SetProviderState("following").SetDetail(d.raw()).SetRef(ref).SetNativeTurn(turn).
			SetUpdatedAt(s.opts.Clock.Now().UTC()).Save(ctx)
		if ent.IsNotFound(err) {
			saved, err = nil, nil
		}
		return err
	})
	if err != nil || saved == nil {
		return nil, err
	}
	out := fromEnt(saved)
	s.opts.Logf("delivery: %s %s:%s is still running; this process follows it (%s)", out.ID, out.Provider, out.NativeID, found.Reason)
	// The adapter may have seen the result before the ref was stored.
	k := refKey{out.Provider, out.NativeID, ref}
	s.mu.Lock()
	early := s.early[k]
	delete(s.early, k)
	var changed []Operation
	for _, e := range early {
		_, c := s.apply(ctx, k, e.status, e.reason, e.turn, e.at)
		changed = append(changed, c...)
	}
	s.mu.Unlock()
	for _, c := range changed {
		if c.ID == out.ID {
			out = c
		}
	}
	return &out, nil
}

// lookup asks the session's adapter for the turn in the provider's native
// history (bounded by the lookup timeout).
func (s *Service) lookup(ctx context.Context, op *ent.Operation) (providers.TurnRecord, error) {
	ctx, cancel := clockctx.WithTimeout(ctx, s.opts.Clock, s.opts.LookupTimeout, "delivery", "lookup")
	defer cancel()
	rt, err := s.reg.Resolve(ctx, op.Provider, op.NativeID)
	if err != nil {
		return providers.TurnRecord{}, fmt.Errorf("its session could not be looked up (%v)", err)
	}
	// A send is found in the history; another write's effect, where the
	// provider shows it, in the session's state.
	sl := rt.Adapter.Roles().State
	if op.Operation != OpSend && sl == nil {
		return providers.TurnRecord{}, fmt.Errorf("a %s has no record in %s's history to look up", op.Operation, op.Provider)
	}
	q := providers.TurnQuery{
		NativeID: op.NativeID, Operation: op.Operation, CorrelationID: op.ID,
		NativeTurnID: op.NativeTurn, Ref: op.Ref, TextSHA256: op.TextSha256, SentAfter: op.CreatedAt,
		Request: decodeDetail(op.Detail).Request,
	}
	var rec providers.TurnRecord
	if op.Operation != OpSend {
		rec, err = sl.LookupState(ctx, q)
	} else {
		tl := rt.Adapter.Roles().History
		if tl == nil {
			return providers.TurnRecord{}, fmt.Errorf("%s keeps no history this runtime can read", op.Provider)
		}
		rec, err = tl.LookupTurn(ctx, q)
	}
	if err != nil {
		var un *providers.UnsupportedError
		if errors.As(err, &un) {
			return rec, fmt.Errorf("%s keeps no history this runtime can read (%s)", op.Provider, un.Reason)
		}
		return rec, fmt.Errorf("looking it up in %s's history failed (%s)", op.Provider, strings.TrimSpace(err.Error()))
	}
	if rec.Source == "" {
		rec.Source = string(op.Provider) + " history"
	}
	return rec, nil
}

// StartSettling settles what gone processes left open now and then every
// SettleEvery (each a pass: see pass) until ctx ends or the service closes (an owner that dies
// while this process runs is caught too, at once when it ran on this host:
// see exitwatch.go). It returns at once; the first pass's result goes to
// report.
func (s *Service) StartSettling(ctx context.Context, report func([]Operation, error)) {
	s.ownerMu.Lock()
	defer s.ownerMu.Unlock()
	select {
	case <-s.stop: // closed: nothing to start
		return
	default:
	}
	s.bg.Add(1)
	go func() {
		defer s.bg.Done()
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		defer context.AfterFunc(s.closing, cancel)() // no goroutine waits for Close
		ops, err := s.pass(ctx)
		if report != nil && ctx.Err() == nil {
			report(ops, err)
		}
		t := s.opts.Clock.NewTicker(s.opts.SettleEvery, "delivery", "settle")
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-s.ownerExited: // a watched owner on this host exited
			case <-t.C:
			}
			if ops, err := s.pass(ctx); err != nil && ctx.Err() == nil {
				s.opts.Logf("delivery: settling open operations: %v", err)
			} else if len(ops) > 0 {
				s.opts.Logf("delivery: settled %d operations left open by gone runtime processes", len(ops))
			}
		}
	}()
}

// pass is one settlement pass: Settle, then a sweep of the owner marks.
// Beside a SQLite store it reads nothing when it can know without the
// store that nothing is to be settled (marks.go): this process has not
// recorded or settled an operation itself, and either no process has
// created the store yet (it was empty when this process opened it, and
// its header still says so), or a pass has swept the marks before and
// every other mark belongs to a process that still runs (its exit is
// watched, as Settle watches live owners).
func (s *Service) pass(ctx context.Context) ([]Operation, error) {
	if s.marks != nil && !s.owning() {
		if s.st.NotCreated() {
			return nil, nil // no process has created the store: nothing is in it, nothing to sweep
		}
		self := "" // no mark of ours unless we wrote one
		if s.marked.Load() {
			self = s.self().ID
		}
		if quiet, watch := s.quiet(self); quiet {
			for _, pid := range watch {
				s.watchOwner(pid)
			}
			return nil, nil
		}
	}
	growstack.Grow() // the pass reads the store
	ops, err := s.Settle(ctx)
	if err != nil || s.marks == nil {
		return ops, err
	}
	if err := s.sweep(ctx); err != nil && ctx.Err() == nil {
		s.opts.Logf("delivery: sweep owner marks: %v", err)
	}
	return ops, nil
}

// owning says whether this process has recorded or settled an operation
// (it is registered as an owner).
func (s *Service) owning() bool {
	s.ownerMu.Lock()
	defer s.ownerMu.Unlock()
	return s.registered
}

// quiet is quietMarks for this process, once a pass has swept the marks.
func (s *Service) quiet(self string) (bool, []int) {
	if !s.marks.swept() {
		return false, nil
	}
	return quietMarks(s.marks, self, s.self, s.opts.Clock.Now(), s.opts.OwnerTimeout, s.opts.Alive)
}

// markLive is markLive for this process as the observer.
func (s *Service) markLive(m mark) bool {
	return markLive(m, *s.self(), s.opts.Clock.Now(), s.opts.OwnerTimeout, s.opts.Alive)
}

// quietMarks says whether a pass of a process that owns nothing has
// nothing to settle, by the marks alone: every mark but self's belongs to
// a process that still runs. The caller has checked that the marks can be
// trusted (a pass has swept them, or the store was new). It also returns
// the pids of those processes on the observer's host, to watch for their
// exit. observer describes the judging process (called only when there
// are marks to judge).
func quietMarks(m *marks, self string, observer func() *Process, now time.Time, timeout time.Duration, alive func(int) bool) (bool, []int) {
	others, err := m.list(self)
	if err != nil {
		return false, nil
	}
	if len(others) == 0 {
		return true, nil
	}
	me := *observer()
	var watch []int
	for _, k := range others {
		if !markLive(k, me, now, timeout, alive) {
			return false, nil
		}
		if k.Host != "" && k.Host == me.Host {
			watch = append(watch, k.PID)
		}
	}
	return true, watch
}

// markLive judges a mark as OwnerGone judges an owner row: a process that
// closed with operations open, ran before the observer's host restarted,
// whose pid no longer runs there (or is the observer's), or whose mark was
// not renewed within the owner timeout may be gone.
func markLive(m mark, observer Process, now time.Time, timeout time.Duration, alive func(int) bool) bool {
	if age := now.Sub(m.Renewed); m.Stopped || age > timeout || age < -timeout {
		return false // a mark dated far ahead is not believed either
	}
	if m.Host != "" && m.Host == observer.Host {
		if m.Boot != "" && observer.Boot != "" && m.Boot != observer.Boot {
			return false
		}
		if m.PID == observer.PID || !alive(m.PID) {
			return false
		}
	}
	return true
}

// sweep runs after a pass that read the store: it removes the marks of
// processes that may be gone and own no open operation (a live one writes
// its mark again at its next heartbeat), marks on their behalf the owners
// of open operations that have no mark (runtimes that do not write marks;
// one that may be gone is marked stopped), and records the sweep.
func (s *Service) sweep(ctx context.Context) error {
	me := s.self()
	others, err := s.marks.list(me.ID)
	if err != nil {
		return err
	}
	owners, err := s.st.Client().Operation.Query().
		Where(operation.StatusEQ(operation.StatusQueued), operation.OwnerNEQ(me.ID), operation.OwnerNEQ(ImportedOwner)).
		Unique(true).Select(operation.FieldOwner).Strings(ctx)
	if err != nil {
		return fmt.Errorf("read owners of open operations: %w", err)
	}
	open := make(map[string]bool, len(owners))
	for _, id := range owners {
		open[id] = true
	}
	marked := make(map[string]bool, len(others))
	var errs []error
	for _, m := range others {
		marked[m.ID] = true
		if !open[m.ID] && !s.markLive(m) {
			errs = append(errs, s.marks.remove(m.ID))
		}
	}
	var unmarked []string
	for _, id := range owners {
		if !marked[id] && validMarkID(id) {
			unmarked = append(unmarked, id)
		}
	}
	if len(unmarked) > 0 {
		rows, err := s.st.Client().RuntimeOwner.Query().Where(runtimeowner.IDIn(unmarked...)).All(ctx)
		if err != nil {
			return errors.Join(append(errs, fmt.Errorf("read owners of open operations: %w", err))...)
		}
		byID := make(map[string]*ent.RuntimeOwner, len(rows))
		for _, r := range rows {
			byID[r.ID] = r
		}
		now := s.opts.Clock.Now().UTC()
		for _, id := range unmarked {
			p, r := Process{ID: id}, byID[id]
			if r != nil {
				p.Host, p.Boot, p.PID = r.Host, r.Boot, r.Pid
			}
			gone, _ := s.gone(id, r)
			errs = append(errs, s.marks.put(p, gone, now))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	return s.marks.setSwept()
}
