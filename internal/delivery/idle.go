package delivery

import (
	"context"

	"github.com/agent-interop/runtime/internal/store"
)

// marksOf is the owner marks' directory of st: beside a SQLite file, none
// for a team store.
func marksOf(st *store.Store) *marks {
	if st == nil || st.Shared() || st.Path() == "" {
		return nil
	}
	return &marks{dir: st.Path() + marksSuffix}
}

// WaitForWork stands in for the settlement of a process that has not built
// its ledger yet (serve before its first tool call, which owns nothing).
// Beside a SQLite store it judges the owner marks as a pass of such a
// process would (see Service.StartSettling): now, every SettleEvery, and
// as soon as a watched marked process on this host exits. It returns nil
// once a pass would have to read the store (a mark of a process that may
// be gone, or marks no pass has swept, unless the store was new when this
// process opened it: [store.Store.StartedEmpty]), so the caller builds its ledger
// and starts its settlement; ctx's error if ctx ends first. On a team
// store it returns nil at once. Only Clock, SettleEvery, OwnerTimeout,
// Process, Alive and WatchExit of opts are used.
func WaitForWork(ctx context.Context, st *store.Store, opts Options) error {
	m := marksOf(st)
	if m == nil {
		return nil
	}
	opts = opts.withDefaults()
	var me *Process
	observer := func() *Process {
		if me == nil {
			p := thisProcess()
			if opts.Process != nil {
				p = *opts.Process
			}
			me = &p
		}
		return me
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // ends the watches
	exited := make(chan struct{}, 1)
	watched := map[int]bool{}
	// A store that had no schema when this process opened it holds nothing
	// from before: marks no pass has swept do not call for one. (A runtime
	// of an earlier version, which writes no mark, that starts on it later
	// and dies is settled by the next process that sweeps.)
	fresh := st.StartedEmpty()
	t := opts.Clock.NewTicker(opts.SettleEvery, "delivery", "settle")
	defer t.Stop()
	for {
		quiet, pids := false, []int(nil)
		if fresh || m.swept() {
			quiet, pids = quietMarks(m, "", observer, opts.Clock.Now("delivery", "marks"), opts.OwnerTimeout, opts.Alive)
		}
		if !quiet {
			return nil
		}
		for _, pid := range pids {
			if !watched[pid] && opts.WatchExit != nil && pid > 0 {
				watched[pid] = watchInto(ctx, opts.WatchExit, pid, exited)
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		case <-exited:
		}
	}
}

// watchInto watches pid until ctx ends and signals exited when it exits;
// false when pid cannot be watched.
func watchInto(ctx context.Context, watch func(int) (<-chan struct{}, func()), pid int, exited chan<- struct{}) bool {
	ch, stop := watch(pid)
	if ch == nil {
		return false
	}
	go func() {
		defer stop()
		select {
		case <-ch:
			select {
			case exited <- struct{}{}:
			default: // a wake-up is pending already
			}
		case <-ctx.Done():
		}
	}()
	return true
}
