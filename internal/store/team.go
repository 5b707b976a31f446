package store

import (
	"fmt"
	"os"
	"strings"
)

// EnvHost names this machine on a team store (default: the hostname).
const EnvHost = "INTEROP_HOST"

// WithoutCredentials is environ without a team store's credentials: INTEROP_DB
// when its URL carries a password, and PGPASSWORD. The provider programs
// run agents that read their environment; a password file (PGPASSFILE)
// stays usable by a runtime such an agent starts.
func WithoutCredentials(environ []string) []string {
	out := make([]string, 0, len(environ))
	for _, kv := range environ {
		name, value, _ := strings.Cut(kv, "=")
		switch {
		case name == "PGPASSWORD":
			continue
		case name == EnvDB && IsPostgres(value) && HasPassword(value):
			continue
		}
		out = append(out, kv)
	}
	return out
}

// MachineName is this machine's name on a team store: INTEROP_HOST, else
// the hostname.
func MachineName(env LookupEnv) (string, error) {
	if v, ok := env(EnvHost); ok && strings.TrimSpace(v) != "" {
		return strings.TrimSpace(v), nil
	}
	h, err := os.Hostname()
	if err != nil || strings.TrimSpace(h) == "" {
		return "", fmt.Errorf("a team store needs this machine's name and the hostname is unknown (%v); set %s", err, EnvHost)
	}
	return h, nil
}
