package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// Recovery records that the store file was unusable and was moved aside.
// It keeps upstream's stateRecoveryRequired shape; get_runtime_status and
// get_work_graph report it until [Store.AcknowledgeRecovery] clears it.
type Recovery struct {
	Required      bool   `json:"required"`
	File          string `json:"file"`
	PreservedFile string `json:"preservedFile,omitempty"`
	Reason        string `json:"reason"`
	DetectedAt    string `json:"detectedAt,omitempty"`
}

// moveAside renames path (and its -wal/-shm side files) to
// <path>.corrupt-<unixms> and returns the recovery record to persist. The
// data is never deleted.
func moveAside(path, reason string, now time.Time) (*Recovery, error) {
	preserved := path + ".corrupt-" + strconv.FormatInt(now.UnixMilli(), 10)
	for i := 0; ; i++ { // never overwrite an earlier preserved copy
		if _, err := os.Lstat(preserved); os.IsNotExist(err) {
			break
		}
		preserved = path + ".corrupt-" + strconv.FormatInt(now.UnixMilli(), 10) + "-" + strconv.Itoa(i+1)
	}
	if err := os.Rename(path, preserved); err != nil {
		return nil, fmt.Errorf("move corrupt store aside: %w", err)
	}
	for _, suffix := range sideFiles {
		if _, err := os.Lstat(path + suffix); err == nil {
			if err := os.Rename(path+suffix, preserved+suffix); err != nil {
				return nil, fmt.Errorf("move corrupt store side file aside: %w", err)
			}
		}
	}
	return &Recovery{
		Required:      true,
		File:          path,
		PreservedFile: preserved,
		Reason:        reason,
		DetectedAt:    now.UTC().Format(time.RFC3339Nano),
	}, nil
}

func parseRecovery(raw string) (*Recovery, error) {
	if raw == "" {
		return nil, nil
	}
	var r Recovery
	if err := json.Unmarshal([]byte(raw), &r); err != nil {
		return nil, fmt.Errorf("decode store recovery record: %w", err)
	}
	return &r, nil
}

func (s *Store) setRecovery(r *Recovery) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.recovery, s.recoveryLoaded = r, true
}

// recoveryMarkerSuffix names the file beside a SQLite store that says a
// recovery record may be pending in its meta table. It is written and
// synced before the record commits, and removed only after the record is
// deleted, so where it is missing no record is pending: [Store.Recovery]
// then reads nothing from the store. get_runtime_status reports the
// recovery state and nothing else of the store, so a serve process that is
// only asked for its status never opens SQLite (about 1.8 MiB of its
// engine's pages and memory). A marker left by a crash between the two
// steps only costs that read.
const recoveryMarkerSuffix = ".recovery"

// writeRecoveryMarker writes the marker of the store at path, naming the
// preserved file for a person who looks. Whatever is at the marker's name
// is removed first (a link itself, never what it points to), and the
// marker is created new (O_EXCL), so no write goes through a link.
func writeRecoveryMarker(path string, rec *Recovery) error {
	if err := writeNew(path+recoveryMarkerSuffix, fmt.Sprintf(
		"a recovery record is pending in %s: the damaged store was moved aside to %s\n", filepath.Base(path), rec.PreservedFile)); err != nil {
		return fmt.Errorf("write the store's recovery marker: %w", err)
	}
	return nil
}

// writeNew replaces whatever is at name with a new file holding text,
// synced.
func writeNew(name, text string) error {
	if err := os.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fileMode)
	if err != nil {
		return err
	}
	_, err = f.WriteString(text)
	if err == nil {
		err = f.Sync()
	}
	return errors.Join(err, f.Close())
}

// recoveryMarked reports whether the marker of the store at path exists
// (or cannot be looked at: then the record is read, as without markers).
func recoveryMarked(path string) bool {
	_, err := os.Lstat(path + recoveryMarkerSuffix)
	return !errors.Is(err, fs.ErrNotExist)
}

// Recovery returns the pending recovery record, or nil when the store was
// never moved aside (or the recovery was acknowledged). On the fast path the
// record is read from the meta table on the first call, when the store's
// recovery marker says one may be pending, and then cached.
func (s *Store) Recovery(ctx context.Context) (*Recovery, error) {
	if s.pg != nil {
		return nil, nil // a team store is never moved aside
	}
	// s.mu is not held across the read: the first query of a new store
	// creates its schema, which records the recovery under s.mu.
	s.mu.Lock()
	loaded, rec := s.recoveryLoaded, s.recovery
	s.mu.Unlock()
	if !loaded && !recoveryMarked(s.path) {
		s.mu.Lock()
		if !s.recoveryLoaded {
			s.recovery, s.recoveryLoaded = nil, true
		}
		loaded, rec = true, s.recovery
		s.mu.Unlock()
	}
	if !loaded {
		meta, err := readMeta(ctx, s.handle())
		if err != nil {
			return nil, fmt.Errorf("read store recovery record: %w", s.corruptionHint(err))
		}
		read, err := parseRecovery(meta[metaRecovery])
		if err != nil {
			return nil, err
		}
		s.mu.Lock()
		if !s.recoveryLoaded { // an acknowledgement since the read wins
			s.recovery, s.recoveryLoaded = read, true
		}
		rec = s.recovery
		s.mu.Unlock()
	}
	if rec == nil {
		return nil, nil
	}
	r := *rec
	return &r, nil
}

// AcknowledgeRecovery clears the persisted recovery record (after a person
// has looked at the preserved file).
func (s *Store) AcknowledgeRecovery(ctx context.Context) error {
	if s.pg != nil {
		return nil
	}
	if err := deleteMeta(ctx, s.handle(), metaRecovery); err != nil {
		return err
	}
	s.mu.Lock()
	s.recovery, s.recoveryLoaded = nil, true
	s.mu.Unlock()
	// After the record is gone; a marker that outlives it only costs the
	// next process one read of the meta table.
	if err := os.Remove(s.path + recoveryMarkerSuffix); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("the recovery record is cleared; removing its marker: %w", err)
	}
	return nil
}
