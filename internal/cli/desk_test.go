package cli

import (
	"strings"
	"testing"
)

// TestDeskFlagErrors: the desk refuses a host that is not loopback and bad
// numbers with exit 2, before it opens the store or binds.
func TestDeskFlagErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"remote host", []string{"desk", "--host", "0.0.0.0"}, `--host must be a loopback address (127.0.0.1, localhost or ::1), not "0.0.0.0"`},
		{"a name", []string{"desk", "--host", "example.com"}, "--host must be a loopback address"},
		{"bad port", []string{"desk", "--port", "70000"}, "--port must be a port number from 0 to 65535, not 70000"},
		{"bad rate", []string{"desk", "--rate-limit", "-1"}, "--rate-limit must be 0 (no limit) or more, not -1"},
		{"short stream lifetime", []string{"desk", "--stream-lifetime", "10ms"}, "--stream-lifetime must be at least 1s, not 10ms"},
		{"argument", []string{"desk", "extra"}, `unexpected argument "extra"`},
		{"unknown flag", []string{"desk", "--token", "x"}, "flag provided but not defined: -token"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, errOut := run(t, map[string]string{"HOME": t.TempDir()}, tt.args...)
			if code != 2 || !strings.Contains(errOut, tt.want) {
				t.Fatalf("exit %d stderr %q, want 2 and %q", code, errOut, tt.want)
			}
		})
	}
	code, out, _ := run(t, nil, "desk", "--help")
	if code != 0 || !strings.Contains(out, "traffic desk") || !strings.Contains(out, "-token-file") {
		t.Fatalf("desk --help: %d %q", code, out)
	}
}
