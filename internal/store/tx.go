package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/agent-interop/runtime/ent"
)

// Retries of a write transaction that PostgreSQL aborted for a
// serialization failure or a deadlock (never for anything else).
const (
	maxTxAttempts = 24
	retryBase     = 2 * time.Millisecond
	retryCap      = 250 * time.Millisecond
)

// Tx runs fn in one write transaction: it commits when fn returns nil and
// rolls back on an error or a panic, so a rejected call leaves the store
// unchanged. fn must not start another transaction on the same Store.
//
// The dialect seam: on SQLite the transaction is BEGIN IMMEDIATE (so two
// runtime processes on the same file queue behind each other); on
// PostgreSQL it is SERIALIZABLE, and a transaction the server aborts for a
// serialization failure or a deadlock is run again (fn may run more than
// once, so it must not have effects outside the transaction). A lost
// connection fails with *ConnLostError (nothing written) and a commit whose
// connection broke with *CommitUnknownError (maybe written; never retried).
func (s *Store) Tx(ctx context.Context, fn func(tx *ent.Tx) error) (err error) {
	if s.writeSlot != nil {
		select {
		case s.writeSlot <- struct{}{}:
		case <-ctx.Done():
			return fmt.Errorf("wait for store write slot: %w", ctx.Err())
		}
		defer func() { <-s.writeSlot }()
	}
	uniqueRetried := false
	for attempt := 1; ; attempt++ {
		err := s.txOnce(ctx, fn)
		if err == nil {
			s.markDirty()
			return nil
		}
		if s.pg == nil {
			return err
		}
		// A unique violation can be a concurrent writer's row committed
		// after this transaction looked for it (an idempotency key): run
		// once more, and fn finds that row. A second one is a real
		// duplicate.
		unique := pgUniqueViolation(err) && !pgRetryable(err)
		if !pgRetryable(err) && !(unique && !uniqueRetried) {
			return err
		}
		if unique {
			uniqueRetried = true
		}
		if attempt >= maxTxAttempts {
			return &BusyError{Attempts: attempt, Err: err}
		}
		s.retries.Add(1)
		// Exponential backoff with full jitter, on the store's clock:
		// concurrent losers spread out instead of colliding again.
		wait := time.Duration(rand.Int64N(int64(min(retryCap, retryBase<<attempt)))) + time.Millisecond
		t := s.clock.NewTimer(wait, "store", "retry")
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return err
		}
	}
}

func (s *Store) txOnce(ctx context.Context, fn func(tx *ent.Tx) error) error {
	tx, err := s.Client().BeginTx(ctx, s.writeTxOptions())
	if err != nil {
		return fmt.Errorf("begin write transaction: %w", s.hint(err))
	}
	defer func() {
		if p := recover(); p != nil {
			_ = tx.Rollback()
			panic(p)
		}
	}()
	if err := fn(tx); err != nil {
		if rerr := tx.Rollback(); rerr != nil && !pgConnLost(rerr) {
			return fmt.Errorf("%w (rollback: %v)", s.explain(err), rerr)
		}
		return s.explain(err)
	}
	if err := tx.Commit(); err != nil {
		var aborted *abortedTxError
		if errors.As(err, &aborted) {
			// A statement had failed (and fn went on): the commit rolled
			// back, so this is that statement's error, never an unknown
			// commit.
			return aborted.Err
		}
		if s.pg != nil && pgConnLost(err) {
			return &CommitUnknownError{Location: s.location, Err: err}
		}
		return fmt.Errorf("commit write transaction: %w", s.hint(err))
	}
	return nil
}

// Read runs fn in one read transaction, so every query inside it sees the
// same snapshot (SQLite: a WAL snapshot, which never blocks writers;
// PostgreSQL: REPEATABLE READ, READ ONLY). fn must not write.
func (s *Store) Read(ctx context.Context, fn func(tx *ent.Tx) error) error {
	tx, err := s.Client().BeginTx(ctx, s.readTxOptions())
	if err != nil {
		return fmt.Errorf("begin read transaction: %w", s.hint(err))
	}
	defer func() { _ = tx.Rollback() }()
	return s.explain(fn(tx))
}

// hint explains an error of the store's dialect: corruption on SQLite, a
// lost connection on PostgreSQL.
func (s *Store) hint(err error) error {
	if s.pg != nil {
		return s.explain(err)
	}
	return s.corruptionHint(err)
}

// writeTxOptions are the options for a write transaction. On SQLite the
// DSN's _txlock=immediate already makes every non-read-only BEGIN an
// immediate one; PostgreSQL runs writers SERIALIZABLE.
func (s *Store) writeTxOptions() *sql.TxOptions {
	if s.pg != nil {
		return &sql.TxOptions{Isolation: sql.LevelSerializable}
	}
	return nil
}

// readTxOptions are the options for a snapshot read: modernc issues a plain
// (deferred) BEGIN for read-only transactions; PostgreSQL needs REPEATABLE
// READ for one snapshot across statements.
func (s *Store) readTxOptions() *sql.TxOptions {
	if s.pg != nil {
		return &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true}
	}
	return &sql.TxOptions{ReadOnly: true}
}
