package store

import (
	"context"
	"time"
)

// checkpointTags name the checkpoint delay's timer on the store's clock
// (for quartz.Mock.Trap).
var checkpointTags = []string{"store", "checkpoint"}

// WAL checkpoints are kept off the request path: SQLite's automatic
// checkpoint (which runs inside the committing call) is raised to a 32 MiB
// backstop in the DSN, and a background goroutine runs a PASSIVE checkpoint
// shortly after writes committed through Store.Tx (the delay runs on the
// store's clock). A PASSIVE checkpoint never waits for readers or writers.
const (
	checkpointDelay        = 100 * time.Millisecond
	autoCheckpointBackstop = 8192 // pages (4 KiB each)
)

// startCheckpointer starts the checkpointer goroutine, which runs until
// Close. It starts with the first committed write (markDirty), not when the
// store opens: a process that only reads never needs it. Close settles the
// same once, so a store closed before any write starts none.
func (s *Store) startCheckpointer() {
	s.checkpointer.Do(func() { go s.checkpointLoop() })
}

func (s *Store) checkpointLoop() {
	defer close(s.checkpointDone)
	for {
		select {
		case <-s.closing:
			return
		case <-s.dirty:
		}
		delay := s.clock.NewTimer(checkpointDelay, checkpointTags...)
		select {
		case <-s.closing:
			delay.Stop()
			return
		case <-delay.C:
		}
		if s.Checkpoint(context.Background()) == nil {
			s.checkpoints.Add(1)
		}
	}
}

// markDirty tells the checkpointer a write committed (never blocks).
func (s *Store) markDirty() {
	if s.dirty == nil {
		return // PostgreSQL: no checkpointer
	}
	s.startCheckpointer()
	select {
	case s.dirty <- struct{}{}:
	default:
	}
}

// Checkpoint copies committed WAL frames into the database file without
// blocking readers or writers (PRAGMA wal_checkpoint(PASSIVE)).
func (s *Store) Checkpoint(ctx context.Context) error {
	if s.pg != nil {
		return nil // PostgreSQL checkpoints by itself
	}
	_, err := s.handle().ExecContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)")
	return err
}
