package store

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
)

// EnvDB is the environment variable that overrides the store location.
const EnvDB = "INTEROP_DB"

// DefaultDir and DefaultFile name the default location below the home
// directory: ~/.agent-interop-runtime/interop.db.
const (
	DefaultDir  = ".agent-interop-runtime"
	DefaultFile = "interop.db"
)

// LookupEnv has the signature of os.LookupEnv; tests pass a map-backed fake.
type LookupEnv func(key string) (string, bool)

// ResolvePath returns the store location: INTEROP_DB when set and not
// blank, otherwise ~/.agent-interop-runtime/interop.db, where the home
// directory comes from HOME (or USERPROFILE on Windows-like environments).
// A PostgreSQL URL (see [IsPostgres]) is returned as it is; a relative file
// path is made absolute against the process directory.
func ResolvePath(lookup LookupEnv) (string, error) {
	if v, ok := lookup(EnvDB); ok && v != "" {
		if IsPostgres(v) {
			return strings.TrimSpace(v), nil
		}
		abs, err := filepath.Abs(v)
		if err != nil {
			return "", fmt.Errorf("resolve %s=%q: %w", EnvDB, v, err)
		}
		return abs, nil
	}
	for _, key := range []string{"HOME", "USERPROFILE"} {
		if home, ok := lookup(key); ok && home != "" {
			return filepath.Join(home, DefaultDir, DefaultFile), nil
		}
	}
	return "", errors.New("cannot locate the store: neither INTEROP_DB nor HOME is set")
}
