package delivery

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

	entsql "entgo.io/ent/dialect/sql"

	"github.com/agent-interop/runtime/ent"
	"github.com/agent-interop/runtime/ent/operation"
	"github.com/agent-interop/runtime/ent/runtimeowner"
	"github.com/agent-interop/runtime/internal/clockctx"
	"github.com/agent-interop/runtime/internal/growstack"
)

// Process identifies a runtime process as the owner of open operations.
type Process struct {
	ID   string // "rt_<uuid>", fresh per process
	Host string
	Boot string // the host's boot id, when the OS has one
	PID  int
}

// thisProcess describes the running process (ID is set by Service.self).
func thisProcess() Process {
	host, _ := os.Hostname()
	return Process{Host: host, Boot: bootID(), PID: os.Getpid()}
}

// bootID is Linux's per-boot random id ("" elsewhere).
func bootID() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// ensureOwnerTx records this process as an owner inside tx, the first time
// it owns something.
func (s *Service) ensureOwnerTx(ctx context.Context, tx *ent.Tx) error {
	s.ownerMu.Lock()
	done := s.registered
	s.ownerMu.Unlock()
	if done {
		return nil
	}
	now := s.opts.Clock.Now().UTC()
	me := s.self()
	// The mark goes first: once an operation of ours can be read, an idle
	// process must find a reason to read the store should we die.
	if s.marks != nil && !s.marked.Load() {
		if err := s.marks.put(*me, false, now); err != nil {
			return fmt.Errorf("record runtime owner: %w", err)
		}
		s.marked.Store(true)
	}
	err := tx.RuntimeOwner.Create().SetID(me.ID).SetHost(me.Host).SetBoot(me.Boot).SetPid(me.PID).
		SetStartedAt(now).SetHeartbeatAt(now).
		OnConflict(entsql.ConflictColumns(runtimeowner.FieldID), entsql.ResolveWith(func(u *entsql.UpdateSet) {
			u.SetExcluded(runtimeowner.FieldHeartbeatAt)
		})).Exec(ctx)
	if err != nil {
		return fmt.Errorf("record runtime owner: %w", err)
	}
	return nil
}

// registeredNow notes that the owner row was committed and starts the
// heartbeat (once).
func (s *Service) registeredNow() {
	s.ownerMu.Lock()
	defer s.ownerMu.Unlock()
	if s.registered {
		return
	}
	select {
	case <-s.stop:
		return
	default:
	}
	s.registered = true
	s.bg.Add(1)
	go s.heartbeat()
}

// ensureOwner records this process as an owner in its own transaction.
func (s *Service) ensureOwner(ctx context.Context) error {
	err := s.st.Tx(ctx, func(tx *ent.Tx) error { return s.ensureOwnerTx(ctx, tx) })
	if err == nil {
		s.registeredNow()
	}
	return err
}

// heartbeat renews this process's owner row until Close.
func (s *Service) heartbeat() {
	defer s.bg.Done()
	growstack.Grow() // every beat writes the store
	t := s.opts.Clock.NewTicker(s.opts.HeartbeatEvery, "delivery", "heartbeat")
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			ctx, cancel := clockctx.WithTimeout(context.Background(), s.opts.Clock, s.opts.HeartbeatEvery*3, "delivery", "heartbeat write")
			err := s.st.Tx(ctx, func(tx *ent.Tx) error {
				return tx.RuntimeOwner.UpdateOneID(s.self().ID).SetHeartbeatAt(s.opts.Clock.Now().UTC()).Exec(ctx)
			})
			cancel()
			if err != nil {
				s.opts.Logf("delivery: renew owner heartbeat: %v", err)
				continue
			}
			s.renewMark()
		}
	}
}

// renewMark dates this process's owner mark now (with each heartbeat), or
// writes it again when a sweep removed it as stale.
func (s *Service) renewMark() {
	if s.marks == nil {
		return
	}
	now := s.opts.Clock.Now().UTC()
	err := s.marks.renew(s.self().ID, now)
	if errors.Is(err, fs.ErrNotExist) {
		err = s.marks.put(*s.self(), false, now)
	}
	if err != nil {
		s.opts.Logf("delivery: renew owner mark: %v", err)
	}
}

// release marks this process's ownership as ended (Close). Its owner mark
// goes when it owns no open operation; otherwise the mark says it stopped,
// so the next pass of any process reads the store and settles them.
func (s *Service) release() error {
	s.ownerMu.Lock()
	registered := s.registered
	s.ownerMu.Unlock()
	if !registered {
		if s.marked.Load() { // marked, but nothing recorded was committed
			return s.marks.remove(s.self().ID)
		}
		return nil
	}
	ctx, cancel := clockctx.WithTimeout(context.Background(), s.opts.Clock, outcomeWriteTimeout, "delivery", "release")
	defer cancel()
	err := s.st.Tx(ctx, func(tx *ent.Tx) error {
		return tx.RuntimeOwner.UpdateOneID(s.self().ID).SetStoppedAt(s.opts.Clock.Now().UTC()).Exec(ctx)
	})
	if err != nil {
		return fmt.Errorf("release operation ownership: %w", err)
	}
	if s.marks == nil {
		return nil
	}
	open, err := s.st.Client().Operation.Query().
		Where(operation.StatusEQ(operation.StatusQueued), operation.Owner(s.self().ID)).Exist(ctx)
	if err == nil && !open {
		return s.marks.remove(s.self().ID)
	}
	if perr := s.marks.put(*s.self(), true, s.opts.Clock.Now().UTC()); perr != nil {
		return errors.Join(err, perr)
	}
	if err != nil {
		return fmt.Errorf("release operation ownership: read open operations: %w", err)
	}
	return nil
}

// gone says whether the owner of an open operation can no longer follow
// it, and why. o is nil when no owner row exists.
func (s *Service) gone(id string, o *ent.RuntimeOwner) (bool, string) {
	if id == s.self().ID {
		return false, ""
	}
	return OwnerGone(id, o, *s.self(), s.opts.Clock.Now(), s.opts.OwnerTimeout, s.opts.Alive)
}

// CurrentProcess describes the running process as an observer of owners
// (its ID is empty: a process that owns nothing, such as the traffic desk).
func CurrentProcess() Process { return thisProcess() }

// ProcessRunning reports whether a process with pid runs on this host.
func ProcessRunning(pid int) bool { return pidAlive(pid) }

// OwnerGone says whether the runtime process id (owner row o, nil when no
// row exists) can no longer follow the operations it owns, as observer, a
// process on some host, judges it at now: the row says it stopped, it ran
// before the observer's host restarted, its pid on the observer's host is
// not running (or is the observer's own), or it sent no heartbeat for
// longer than timeout. alive asks the OS about a pid. Settlement and the
// traffic desk judge owners by it.
func OwnerGone(id string, o *ent.RuntimeOwner, observer Process, now time.Time, timeout time.Duration, alive func(pid int) bool) (bool, string) {
	switch {
	case id == "" || o == nil:
		return true, "no runtime process owns it"
	case o.StoppedAt != nil:
		return true, fmt.Sprintf("runtime process %s (pid %d) stopped at %s", o.ID, o.Pid, o.StoppedAt.UTC().Format(time.RFC3339))
	}
	sameHost := o.Host != "" && o.Host == observer.Host
	switch {
	case sameHost && o.Boot != "" && observer.Boot != "" && o.Boot != observer.Boot:
		return true, fmt.Sprintf("runtime process %s (pid %d) ran before this host restarted", o.ID, o.Pid)
	case sameHost && o.Pid == observer.PID:
		return true, fmt.Sprintf("runtime process %s had pid %d, which is now this process", o.ID, o.Pid)
	case sameHost && !alive(o.Pid):
		return true, fmt.Sprintf("runtime process %s (pid %d) is no longer running", o.ID, o.Pid)
	}
	if age := now.Sub(o.HeartbeatAt); age > timeout {
		return true, fmt.Sprintf("runtime process %s (pid %d on %s) sent no heartbeat for %s", o.ID, o.Pid, o.Host, age.Round(time.Second))
	}
	return false, ""
}
