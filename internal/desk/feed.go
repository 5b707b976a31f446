package desk

import (
	"context"
	"database/sql"
	"sync"
	"time"

	entdialect "entgo.io/ent/dialect"
	"github.com/coder/quartz"
)

// DefaultPollEvery is how often the change feed looks at the store's
// change counter.
const DefaultPollEvery = 100 * time.Millisecond

// feed tells the desk's live streams that the store changed. It polls a
// change counter of the database on one dedicated connection, a statement
// that touches no table, so an idle store costs one tiny query per poll:
//
//   - SQLite: PRAGMA data_version, which changes whenever another
//     connection (of this process or any other) commits;
//   - PostgreSQL (a team store): the current transaction snapshot
//     (pg_current_snapshot()), which changes whenever a writing
//     transaction of the cluster starts or ends. A change seen by the
//     poll is visible to every read that starts after it (a commit
//     becomes part of the snapshot exactly when it becomes visible), so
//     no write is missed; a write elsewhere in the cluster only costs the
//     streams a re-read of their first page.
//
// A database that answers neither gets a change signal on every poll,
// which only costs the streams re-reads. The feed runs while at least one
// stream listens, and stops when the last one leaves.
type feed struct {
	db    *sql.DB
	clock quartz.Clock
	every time.Duration
	probe string // the change counter's query

	mu       sync.Mutex
	changed  chan struct{} // closed and replaced on every change
	version  uint64        // counts changes seen
	watchers int
	closed   bool
	stop     context.CancelFunc
	done     chan struct{}
}

// Change counters by ent dialect name.
const (
	sqliteChanges   = "PRAGMA data_version"
	postgresChanges = "SELECT pg_current_snapshot()::text"
)

func newFeed(db *sql.DB, dialect string, clock quartz.Clock, every time.Duration) *feed {
	if every <= 0 {
		every = DefaultPollEvery
	}
	probe := sqliteChanges
	if dialect == entdialect.Postgres {
		probe = postgresChanges
	}
	return &feed{db: db, clock: clock, every: every, probe: probe, changed: make(chan struct{})}
}

// watch registers a listener and returns the channel closed at the next
// change, and a function that ends the registration.
func (f *feed) watch() (next func() (<-chan struct{}, uint64), leave func()) {
	f.mu.Lock()
	f.watchers++
	if f.stop == nil && !f.closed {
		ctx, cancel := context.WithCancel(context.Background())
		f.stop, f.done = cancel, make(chan struct{})
		go f.run(ctx, f.done)
	}
	f.mu.Unlock()
	var once sync.Once
	return f.current, func() {
		once.Do(func() {
			f.mu.Lock()
			f.watchers--
			var stop context.CancelFunc
			var done chan struct{}
			if f.watchers == 0 && f.stop != nil {
				stop, done = f.stop, f.done
				f.stop, f.done = nil, nil
			}
			f.mu.Unlock()
			if stop != nil {
				stop()
				<-done
			}
		})
	}
}

// current returns the channel of the next change and the change count.
func (f *feed) current() (<-chan struct{}, uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.changed, f.version
}

// notify wakes every listener.
func (f *feed) notify() {
	f.mu.Lock()
	close(f.changed)
	f.changed = make(chan struct{})
	f.version++
	f.mu.Unlock()
}

// close stops the poller if it runs.
func (f *feed) close() {
	f.mu.Lock()
	stop, done := f.stop, f.done
	f.stop, f.done, f.closed = nil, nil, true
	f.mu.Unlock()
	if stop != nil {
		stop()
		<-done
	}
}

func (f *feed) run(ctx context.Context, done chan struct{}) {
	defer close(done)
	tick := f.clock.NewTicker(f.every, "desk", "feed")
	defer tick.Stop()
	var conn *sql.Conn
	defer func() {
		if conn != nil {
			conn.Close()
		}
	}()
	last, known := "", false
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if conn == nil {
			c, err := f.db.Conn(ctx)
			if err != nil {
				continue // the next poll tries again
			}
			conn = c
			known = false
		}
		var v string
		if err := conn.QueryRowContext(ctx, f.probe).Scan(&v); err != nil {
			if ctx.Err() != nil {
				return
			}
			// No counter (or a broken connection): signal every poll and
			// reconnect next time.
			conn.Close()
			conn = nil
			f.notify()
			continue
		}
		// The first reading after (re)connecting is a baseline taken after
		// listeners may have read the store: wake them once, so a commit
		// that landed between their read and the baseline is not missed.
		if !known || v != last {
			f.notify()
		}
		last, known = v, true
	}
}
