package desk

import (
	"context"
	"database/sql"
	"sync"
	"time"
)

// DefaultPollEvery is how often the change feed looks at the store's
// change counter.
const DefaultPollEvery = 100 * time.Millisecond

// feed tells the desk's live streams that the store changed. It polls
// SQLite's PRAGMA data_version on one dedicated connection: the value
// changes whenever another connection (of this process or any other)
// commits, and reading it touches no table, so an idle store costs one
// tiny statement per poll. A database that does not answer the pragma
// (another dialect) gets a change signal on every poll instead, which
// only costs the streams a re-read of their first page.
//
// The feed runs while at least one stream listens, and stops when the
// last one leaves.
type feed struct {
	db    *sql.DB
	every time.Duration

	mu       sync.Mutex
	changed  chan struct{} // closed and replaced on every change
	version  uint64        // counts changes seen
	watchers int
	closed   bool
	stop     context.CancelFunc
	done     chan struct{}
}

func newFeed(db *sql.DB, every time.Duration) *feed {
	if every <= 0 {
		every = DefaultPollEvery
	}
	return &feed{db: db, every: every, changed: make(chan struct{})}
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
	tick := time.NewTicker(f.every)
	defer tick.Stop()
	var conn *sql.Conn
	defer func() {
		if conn != nil {
			conn.Close()
		}
	}()
	last, known := int64(0), false
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
		var v int64
		if err := conn.QueryRowContext(ctx, "PRAGMA data_version").Scan(&v); err != nil {
			if ctx.Err() != nil {
				return
			}
			// No pragma (or a broken connection): signal every poll and
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
