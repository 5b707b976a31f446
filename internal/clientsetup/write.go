package clientsetup

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Result says what Write did.
type Result struct {
	// File is the file written (a symlink's target).
	File string
	// Backup holds the previous content ("" when there was none).
	Backup string
	// Unchanged: the file already held exactly this entry.
	Unchanged bool
	// Changes are the keys of our entry the write added, changed or
	// removed; every other key of the entry was kept.
	Changes []Change
}

// Snippet is the exact text to add to t.File for e: the client's whole
// minimal document (JSON clients) or the TOML table (Codex).
func Snippet(t Target, e Entry) ([]byte, error) {
	if t.Client == Codex {
		return []byte(codexEntry(t.Name, e)), nil
	}
	return jsonSnippet(t, e)
}

// Merge returns old with the entry put in (old empty: a new file). An
// existing entry keeps every key we do not own.
func Merge(t Target, e Entry, old []byte) ([]byte, error) {
	out, _, err := merge(t, e, old)
	return out, err
}

// merge is Merge that also lists the keys of the entry it changed.
func merge(t Target, e Entry, old []byte) ([]byte, []Change, error) {
	if t.Client == Codex {
		return mergeCodex(t, e, old)
	}
	return mergeJSON(t, e, old)
}

// Write puts the entry into t.File. The file is read and validated first;
// when anything is wrong (malformed, read-only, unwritable directory) it
// is left byte-identical and the error says why.
func Write(t Target, e Entry) (Result, error) {
	file := t.File
	if fi, err := os.Lstat(file); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		target, err := filepath.EvalSymlinks(file)
		if err != nil {
			return Result{}, fmt.Errorf("%s is a symlink whose target cannot be resolved: %w", file, err)
		}
		file = target
	}
	// Checked before it is read: a FIFO or a device in the client file's
	// place would block the read, or never end it.
	var old []byte
	fi, err := os.Stat(file)
	if err == nil && !fi.Mode().IsRegular() {
		return Result{}, fmt.Errorf("%s is not a regular file (%s); not changed", file, fi.Mode().Type())
	}
	if err == nil {
		old, err = os.ReadFile(file)
	}
	exists := err == nil
	mode := fs.FileMode(0o600)
	switch {
	case exists:
		mode = fi.Mode().Perm()
		if mode&0o200 == 0 {
			return Result{}, fmt.Errorf("%s is read-only (mode %04o); not changed — make it writable or add the entry by hand", file, mode)
		}
	case errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
			return Result{}, fmt.Errorf("creating %s: %w", filepath.Dir(file), err)
		}
	default:
		return Result{}, fmt.Errorf("reading %s: %w", file, err)
	}
	tt := t
	tt.File = file
	merged, chg, err := merge(tt, e, old)
	if err != nil {
		return Result{}, err
	}
	res := Result{File: file, Changes: chg}
	if exists && bytes.Equal(old, merged) {
		res.Unchanged = true
		res.Changes = nil
		return res, nil
	}
	// The new content goes to a temporary file beside the target first, so
	// an unwritable directory fails before anything else is touched.
	tmp, err := os.CreateTemp(filepath.Dir(file), "."+filepath.Base(file)+".*.tmp")
	if err != nil {
		return Result{}, fmt.Errorf("writing beside %s: %w", file, err)
	}
	defer os.Remove(tmp.Name()) // a no-op after the rename
	if err := writeSynced(tmp, merged, mode); err != nil {
		return Result{}, fmt.Errorf("writing %s: %w", tmp.Name(), err)
	}
	if exists {
		res.Backup = file + ".bak"
		if err := writeBackup(res.Backup, old, mode); err != nil {
			return Result{}, err
		}
	}
	if err := os.Rename(tmp.Name(), file); err != nil {
		return Result{}, fmt.Errorf("replacing %s: %w", file, err)
	}
	syncDir(filepath.Dir(file))
	return res, nil
}

func writeSynced(f *os.File, b []byte, mode fs.FileMode) error {
	defer f.Close()
	if _, err := f.Write(b); err != nil {
		return err
	}
	if err := f.Chmod(mode); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	return f.Close()
}

// writeBackup keeps exactly one backup: <file>.bak holds the content
// before the latest write (also written atomically).
func writeBackup(path string, b []byte, mode fs.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("backing up to %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if err := writeSynced(tmp, b, mode); err != nil {
		return fmt.Errorf("backing up to %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("backing up to %s: %w", path, err)
	}
	return nil
}

func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
}
