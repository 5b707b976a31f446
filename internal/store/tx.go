package store

import (
	"context"
	"fmt"

	"github.com/agent-interop/runtime/ent"
)

// Tx runs fn in one write transaction (BEGIN IMMEDIATE on SQLite): it
// commits when fn returns nil and rolls back on an error or a panic, so a
// rejected call leaves the store unchanged. fn must not start another
// transaction on the same Store.
func (s *Store) Tx(ctx context.Context, fn func(tx *ent.Tx) error) (err error) {
	select {
	case s.writeSlot <- struct{}{}:
	case <-ctx.Done():
		return fmt.Errorf("wait for store write slot: %w", ctx.Err())
	}
	defer func() { <-s.writeSlot }()
	tx, err := s.client.BeginTx(ctx, writeTxOptions())
	if err != nil {
		return fmt.Errorf("begin write transaction: %w", s.corruptionHint(err))
	}
	defer func() {
		if p := recover(); p != nil {
			_ = tx.Rollback()
			panic(p)
		}
	}()
	if err := fn(tx); err != nil {
		if rerr := tx.Rollback(); rerr != nil {
			return fmt.Errorf("%w (rollback: %v)", err, rerr)
		}
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit write transaction: %w", s.corruptionHint(err))
	}
	s.markDirty()
	return nil
}

// Read runs fn in one read transaction, so every query inside it sees the
// same snapshot (WAL readers never block writers). fn must not write.
func (s *Store) Read(ctx context.Context, fn func(tx *ent.Tx) error) error {
	tx, err := s.client.BeginTx(ctx, readTxOptions())
	if err != nil {
		return fmt.Errorf("begin read transaction: %w", s.corruptionHint(err))
	}
	defer func() { _ = tx.Rollback() }()
	return fn(tx)
}
