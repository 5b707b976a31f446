package delivery

// Owner marks let an idle runtime process skip the store on a settlement
// pass. Beside a SQLite store (<store>.owners/) every runtime process that
// may own open operations keeps one small file named by its owner id,
// written before its first operation is recorded and renewed with each
// heartbeat; it holds the process's host, boot id and pid, and says when
// the process closed with operations still open. A pass that finds no
// mark of another process that may be gone (and a directory that a pass
// which read the store has swept before) has nothing to settle and reads
// nothing: an unused runtime then never pages SQLite in. Whenever a mark
// says its process may be gone, the pass reads the store as before, and
// afterwards sweeps: it removes the marks of gone processes that own no
// open operation, and marks on their behalf the live owners of open
// operations that left none (runtimes of an earlier version). A process
// that has recorded or settled operations itself reads the store on every
// pass, so it also finds what an unmarked writer left. A team store
// (PostgreSQL) has no marks: several hosts share it, and every pass reads
// it.

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// marksSuffix names the directory of owner marks beside a SQLite store.
const marksSuffix = ".owners"

// sweptName is the file a pass that read the store leaves in the marks
// directory: until it exists, runtimes that did not mark (an earlier
// version) may have left operations open, and every pass reads the store.
const sweptName = ".swept"

// maxMarkBytes bounds how much of a mark file is read.
const maxMarkBytes = 4096

// maxMarkID bounds the length of an owner id that names a mark file.
const maxMarkID = 128

// marks is the directory of owner marks of one SQLite store.
type marks struct{ dir string }

// mark is one owner's file as read back.
type mark struct {
	ID      string
	Host    string `json:"host"`
	Boot    string `json:"boot,omitempty"`
	PID     int    `json:"pid"`
	Stopped bool   `json:"stopped,omitempty"` // closed with operations open
	Renewed time.Time
}

// validMarkID says whether an owner id can name a mark file: the runtime's
// ids ("rt_<uuid>") and tests' plain ids can; anything that could leave the
// directory or hide cannot.
func validMarkID(id string) bool {
	if id == "" || len(id) > maxMarkID || id[0] == '.' {
		return false
	}
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

// put writes p's mark (stopped when it closed with operations open) and
// dates it at.
func (m *marks) put(p Process, stopped bool, at time.Time) error {
	if !validMarkID(p.ID) {
		return fmt.Errorf("owner mark: owner id %q cannot name a file", p.ID)
	}
	if err := os.MkdirAll(m.dir, 0o700); err != nil {
		return fmt.Errorf("owner mark: create %s: %w", m.dir, err)
	}
	data, err := json.Marshal(mark{Host: p.Host, Boot: p.Boot, PID: p.PID, Stopped: stopped})
	if err != nil {
		return fmt.Errorf("owner mark: encode: %w", err)
	}
	// Written aside and renamed, so a reader never sees half a mark.
	tmp, err := os.CreateTemp(m.dir, ".tmp-")
	if err != nil {
		return fmt.Errorf("owner mark: %w", err)
	}
	_, werr := tmp.Write(data)
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("owner mark: write %s: %w", tmp.Name(), err)
	}
	if err := os.Chtimes(tmp.Name(), at, at); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("owner mark: date %s: %w", tmp.Name(), err)
	}
	if err := os.Rename(tmp.Name(), m.path(p.ID)); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("owner mark: %w", err)
	}
	return nil
}

// renew dates id's mark at (a heartbeat); fs.ErrNotExist when it is gone.
func (m *marks) renew(id string, at time.Time) error {
	return os.Chtimes(m.path(id), at, at)
}

// remove deletes id's mark; a missing mark is not an error.
func (m *marks) remove(id string) error {
	if err := os.Remove(m.path(id)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("owner mark: %w", err)
	}
	return nil
}

func (m *marks) path(id string) string { return filepath.Join(m.dir, id) }

// swept says whether a pass that read the store has swept the directory.
func (m *marks) swept() bool {
	_, err := os.Lstat(filepath.Join(m.dir, sweptName))
	return err == nil
}

// setSwept records that a pass read the store and swept the directory.
func (m *marks) setSwept() error {
	if err := os.MkdirAll(m.dir, 0o700); err != nil {
		return fmt.Errorf("owner marks: create %s: %w", m.dir, err)
	}
	f, err := os.OpenFile(filepath.Join(m.dir, sweptName), os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("owner marks: %w", err)
	}
	return f.Close()
}

// list reads every mark but self's. A file that is not a regular file, or
// whose name is not an owner id, is not a mark; a mark that cannot be read
// back is returned with only its id and date, so it is judged by its date.
// (The names are read without os.ReadDir, whose sorting grows a fresh
// goroutine's stack: an idle pass should touch as little as it can.)
func (m *marks) list(self string) ([]mark, error) {
	d, err := os.Open(m.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("owner marks: %w", err)
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return nil, fmt.Errorf("owner marks: %w", err)
	}
	var out []mark
	for _, name := range names {
		if name == self || !validMarkID(name) {
			continue
		}
		info, err := os.Lstat(m.path(name))
		if errors.Is(err, fs.ErrNotExist) {
			continue // removed meanwhile
		}
		if err != nil {
			return nil, fmt.Errorf("owner marks: %w", err)
		}
		if !info.Mode().IsRegular() {
			continue
		}
		out = append(out, readMark(m.path(name), name, info.ModTime()))
	}
	return out, nil
}

func readMark(path, id string, renewed time.Time) mark {
	k := mark{ID: id, Renewed: renewed}
	f, err := os.Open(path)
	if err != nil {
		return k
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxMarkBytes+1))
	var body mark
	if err != nil || len(data) > maxMarkBytes || json.Unmarshal(data, &body) != nil {
		return k
	}
	body.ID, body.Renewed = id, renewed
	return body
}
