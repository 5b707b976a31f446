package importstate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/coder/quartz"

	"github.com/agent-interop/runtime/internal/store"
)

// Default locations of the 0.3.x files, below the home directory; 0.3.x
// also read these variables to move them.
const (
	EnvStateFile         = "INTEROP_STATE_FILE"
	EnvConversationsFile = "INTEROP_CONVERSATIONS_FILE"
	defaultDir           = ".agent-interop-runtime"
	defaultState         = "state.json"
	defaultConversations = "conversations.json"
)

// maxFileBytes bounds an input file.
const maxFileBytes = 512 << 20

// Config is one run of migrate import-state.
type Config struct {
	// StateFile and ConversationsFile are the files to read; empty means
	// the 0.3.x default (INTEROP_STATE_FILE / INTEROP_CONVERSATIONS_FILE,
	// else ~/.agent-interop-runtime/state.json and conversations.json). A
	// default file that does not exist is skipped; a named one must exist.
	StateFile         string
	ConversationsFile string
	// Lookup reads the environment (HOME, USERPROFILE, the variables above).
	Lookup func(string) (string, bool)
	// Store is the store location (store.ResolvePath).
	Store  string
	DryRun bool
	Clock  quartz.Clock
}

// Run reads the files, checks them, and imports them into the store in one
// transaction (or, with DryRun, reports what it would do and writes
// nothing). Malformed input is refused before the store is opened. A dry
// run against a store that does not exist yet leaves it missing: it runs
// against an empty temporary store instead.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if cfg.Clock == nil {
		cfg.Clock = quartz.NewReal()
	}
	state, err := cfg.input(cfg.StateFile, EnvStateFile, defaultState)
	if err != nil {
		return nil, err
	}
	convs, err := cfg.input(cfg.ConversationsFile, EnvConversationsFile, defaultConversations)
	if err != nil {
		return nil, err
	}
	if state.file == nil && convs.file == nil {
		return nil, fmt.Errorf("nothing to import: neither %s nor %s exists (name the files with --state and --conversations)", state.path, convs.path)
	}
	now := cfg.Clock.Now().UTC()
	snap, err := Parse(state.file, convs.file, now)
	if err != nil {
		return nil, err
	}
	// Both files in order, the skipped default one too.
	found := snap.Files
	snap.Files = nil
	for _, in := range []input{state, convs} {
		sum := FileSummary{Role: in.role, Path: in.path}
		for _, f := range found {
			if f.Role == in.role {
				sum = f
			}
		}
		snap.Files = append(snap.Files, sum)
	}
	location := cfg.Store
	missing := cfg.DryRun && storeMissing(location)
	if missing {
		dir, err := os.MkdirTemp("", "interop-import-dry-run")
		if err != nil {
			return nil, fmt.Errorf("dry run: create an empty store: %w", err)
		}
		defer os.RemoveAll(dir)
		location = filepath.Join(dir, "interop.db")
	}
	st, err := store.Open(ctx, location)
	if err != nil {
		return nil, fmt.Errorf("open the state store: %w", err)
	}
	rep, err := Import(ctx, st, snap, Options{DryRun: cfg.DryRun, At: now})
	if cerr := st.Close(); cerr != nil && err == nil {
		err = fmt.Errorf("close the state store: %w", cerr)
	}
	if rep != nil {
		rep.Store, rep.StoreMissing = cfg.Store, missing
	}
	return rep, err
}

// input is one resolved input file.
type input struct {
	role string
	path string
	file *File // nil: a default file that does not exist
}

func (cfg Config) input(given, env, base string) (input, error) {
	role := strings.TrimSuffix(base, ".json")
	in := input{role: role, path: given}
	if given == "" {
		p, err := cfg.defaultPath(env, base)
		if err != nil {
			return in, err
		}
		in.path = p
	}
	// Look before opening: a FIFO would block the open (or the read)
	// forever, a device such as /dev/zero never ends, a directory is no
	// file; the size is checked before a byte is read.
	fi, err := os.Stat(in.path)
	if errors.Is(err, fs.ErrNotExist) && given == "" {
		return in, nil
	}
	if err != nil {
		return in, fmt.Errorf("read the 0.3.x %s file: %w", role, err)
	}
	if err := regularInput(in.path, role, fi); err != nil {
		return in, err
	}
	f, err := openNonBlocking(in.path)
	if err != nil {
		return in, fmt.Errorf("read the 0.3.x %s file: %w", role, err)
	}
	defer f.Close()
	// The file may have been replaced between Stat and open: check what
	// was opened.
	if fi, err = f.Stat(); err != nil {
		return in, fmt.Errorf("read %s: %w", in.path, err)
	}
	if err := regularInput(in.path, role, fi); err != nil {
		return in, err
	}
	data, err := io.ReadAll(io.LimitReader(f, maxFileBytes+1))
	if err != nil {
		return in, fmt.Errorf("read %s: %w", in.path, err)
	}
	if len(data) > maxFileBytes {
		return in, fmt.Errorf("%s is larger than %d MiB; it is not a 0.3.x %s file this command reads", in.path, maxFileBytes>>20, role)
	}
	in.file = &File{Path: in.path, Data: data}
	return in, nil
}

// regularInput refuses anything but a regular file of at most
// maxFileBytes, naming the file, what it is, and the rule.
func regularInput(path, role string, fi fs.FileInfo) error {
	mode := fi.Mode()
	switch {
	case mode.IsDir():
		return fmt.Errorf("%s is a directory; the 0.3.x %s file must be a regular file", path, role)
	case mode&fs.ModeNamedPipe != 0:
		return fmt.Errorf("%s is a FIFO (named pipe); the 0.3.x %s file must be a regular file", path, role)
	case mode&fs.ModeDevice != 0:
		return fmt.Errorf("%s is a device; the 0.3.x %s file must be a regular file", path, role)
	case !mode.IsRegular():
		return fmt.Errorf("%s is not a regular file (mode %s); the 0.3.x %s file must be one", path, mode.Type(), role)
	case fi.Size() > maxFileBytes:
		return fmt.Errorf("%s is larger than %d MiB (%d bytes); it is not a 0.3.x %s file this command reads", path, maxFileBytes>>20, fi.Size(), role)
	}
	return nil
}

func (cfg Config) defaultPath(env, base string) (string, error) {
	lookup := cfg.Lookup
	if lookup == nil {
		lookup = os.LookupEnv
	}
	if v, ok := lookup(env); ok && strings.TrimSpace(v) != "" {
		return filepath.Abs(strings.TrimSpace(v))
	}
	for _, key := range []string{"HOME", "USERPROFILE"} {
		if home, ok := lookup(key); ok && home != "" {
			return filepath.Join(home, defaultDir, base), nil
		}
	}
	return "", fmt.Errorf("cannot locate the 0.3.x %s: neither %s nor HOME is set (name it with --%s)", base, env, strings.TrimSuffix(base, ".json"))
}

// storeMissing reports whether a store file does not exist yet (a URL, a
// shared store, always exists).
func storeMissing(location string) bool {
	if strings.Contains(location, "://") {
		return false
	}
	_, err := os.Stat(location)
	return errors.Is(err, fs.ErrNotExist)
}
