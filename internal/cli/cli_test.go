package cli

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agent-interop/runtime/internal/version"
)

func run(t *testing.T, env map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	code = Do(context.Background(), args, lookup, IO{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb})
	return code, out.String(), errb.String()
}

// TestHelpListsEveryCommand: help, -h and --help print every command of
// the table with its line of help, on stdout, exit 0.
func TestHelpListsEveryCommand(t *testing.T) {
	for _, args := range [][]string{{"help"}, {"-h"}, {"--help"}} {
		code, out, errOut := run(t, nil, args...)
		if code != 0 || errOut != "" {
			t.Fatalf("%v: exit %d, stderr %q", args, code, errOut)
		}
		for _, c := range commands() {
			if !strings.Contains(out, "  "+c.name+" ") || !strings.Contains(flat(out), c.help) {
				t.Errorf("%v lacks %q: %q", args, c.name, c.help)
			}
		}
		for _, line := range strings.Split(out, "\n") {
			if strings.Count(line, "serve MCP over stdio") > 1 {
				t.Errorf("a command spans more than one line: %q", line)
			}
		}
	}
}

// TestEveryCommandHasHelp: '<command> --help' and 'help <command>' print
// the command's synopsis on stdout and exit 0 without doing anything else
// (no store is opened: HOME points nowhere usable).
func TestEveryCommandHasHelp(t *testing.T) {
	env := map[string]string{"HOME": filepath.Join(t.TempDir(), "missing", "home"), "INTEROP_DB": "/nonexistent/dir/x.db"}
	for _, c := range commands() {
		for _, args := range [][]string{{c.name, "--help"}, {c.name, "-h"}, {"help", c.name}} {
			code, out, errOut := run(t, env, args...)
			if c.name == "help" {
				if code != 0 || !strings.Contains(out, "commands:") {
					t.Errorf("%v: exit %d %q", args, code, out)
				}
				continue
			}
			synopsis := strings.TrimSpace("usage: interop-runtime " + c.name + " " + c.args)
			first, _, _ := strings.Cut(out, "\n\n")
			if code != 0 || flat(first) != flat(synopsis) || !strings.Contains(flat(out), c.help) {
				t.Errorf("%v: exit %d\nstdout %q\nstderr %q", args, code, out, errOut)
			}
		}
	}
}

// flat is s with every run of white space one space: help text wrapped
// to the terminal compares with its one-line source.
func flat(s string) string { return strings.Join(strings.Fields(s), " ") }

// TestEveryHelpLineFitsTheTerminal: every line that help, each command's
// --help and each subcommand's --help prints fits 100 columns.
func TestEveryHelpLineFitsTheTerminal(t *testing.T) {
	env := map[string]string{"HOME": filepath.Join(t.TempDir(), "missing", "home"), "INTEROP_DB": "/nonexistent/dir/x.db"}
	runs := [][]string{{"help"}, {"--help"},
		{"work", "list", "--help"}, {"work", "show", "--help"}, {"work", "graph", "--help"},
		{"migrate", "import-state", "--help"}, {"setup", "codex", "--help"}, {"setup", "claude", "--help"},
		{"setup", "opencode", "--help"}, {"setup", "cursor", "--help"}}
	for _, c := range commands() {
		runs = append(runs, []string{c.name, "--help"}, []string{"help", c.name})
	}
	for _, args := range runs {
		code, out, errOut := run(t, env, args...)
		if code != 0 {
			t.Errorf("%v: exit %d %q", args, code, errOut)
			continue
		}
		for _, line := range strings.Split(out, "\n") {
			// A tab moves to the next multiple of 8, as a terminal shows it.
			col := 0
			for _, r := range line {
				if r == '\t' {
					col += 8 - col%8
				} else {
					col++
				}
			}
			if col > 100 {
				t.Errorf("%v prints a line of %d columns (more than 100):\n%s", args, col, line)
			}
		}
	}
}

func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}} {
		if code, out, _ := run(t, nil, args...); code != 0 || out != version.Version+"\n" {
			t.Errorf("%v: exit %d %q", args, code, out)
		}
	}
}

// TestMainRunsTheCommandLine: Main, as the binary calls it, runs a
// command with its signal handlers installed and removes them after.
func TestMainRunsTheCommandLine(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := Main([]string{"version"}, func(string) (string, bool) { return "", false }, IO{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errOut}); code != 0 || out.String() != version.Version+"\n" {
		t.Fatalf("Main(version): exit %d stdout %q stderr %q", code, out.String(), errOut.String())
	}
}

// TestUnknownCommand: 0.3.x's usage line (with this binary's commands)
// and exit 2.
func TestUnknownCommand(t *testing.T) {
	code, out, errOut := run(t, nil, "frobnicate")
	var names []string
	for _, c := range commands() {
		names = append(names, c.name)
	}
	want := "usage: interop-runtime [" + strings.Join(names, "|") + "]"
	if code != 2 || out != "" || !strings.Contains(errOut, `unknown command "frobnicate"`) || !strings.Contains(errOut, want+"\n") {
		t.Fatalf("exit %d stdout %q stderr %q, want 2 and %q", code, out, errOut, want)
	}
	if code, _, errOut := run(t, nil, "help", "frobnicate"); code != 2 || !strings.Contains(errOut, want) {
		t.Fatalf("help frobnicate: exit %d %q", code, errOut)
	}
}

// TestServeFlagErrors: bad flags exit 2 with a message naming the flag,
// variable or rule, before anything is opened or bound.
func TestServeFlagErrors(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"unknown flag", nil, []string{"serve", "--bogus"}, "flag provided but not defined: -bogus"},
		{"HTTP flag without --http", nil, []string{"serve", "--port", "9000"}, "--port applies to HTTP mode"},
		{"unexpected argument", nil, []string{"serve-http", "extra"}, `unexpected argument "extra"`},
		{"unknown profile", nil, []string{"serve-http", "--profile", "nope"}, "Unknown toolset profile 'nope'"},
		{"bad port variable", map[string]string{"AGENT_INTEROP_HTTP_PORT": "http"}, []string{"serve-http"}, `AGENT_INTEROP_HTTP_PORT: must be a port number from 0 to 65535, not "http"`},
		{"bad port alias", map[string]string{"FREEBUFF_MCP_PORT": "70000"}, []string{"serve", "--http"}, "FREEBUFF_MCP_PORT: must be a port number"},
		{"bad port flag", nil, []string{"serve-http", "--port", "-1"}, "--port must be a port number from 0 to 65535, not -1"},
		{"bad origin", map[string]string{"AGENT_INTEROP_HTTP_ALLOWED_ORIGINS": "http://ok, ftp://x"}, []string{"serve-http"}, `AGENT_INTEROP_HTTP_ALLOWED_ORIGINS: "ftp://x" is not an origin`},
		{"bad rate limit", map[string]string{"AGENT_INTEROP_HTTP_RATE_LIMIT": "-5"}, []string{"serve-http"}, "AGENT_INTEROP_HTTP_RATE_LIMIT: must be a whole number"},
		{"remote host", nil, []string{"serve-http", "--host", "0.0.0.0"}, "Refusing non-loopback HTTP host; set AGENT_INTEROP_HTTP_ALLOW_REMOTE=1 only behind trusted HTTPS and authentication.\n"},
		{"remote host from the alias", map[string]string{"FREEBUFF_MCP_HOST": "192.0.2.1"}, []string{"serve", "--http"}, "Refusing non-loopback HTTP host"},
		{"allow-remote must be exactly 1", map[string]string{"AGENT_INTEROP_HTTP_HOST": "0.0.0.0", "AGENT_INTEROP_HTTP_ALLOW_REMOTE": "true"}, []string{"serve-http"}, "Refusing non-loopback HTTP host"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, errOut := run(t, tt.env, tt.args...)
			if code != 2 || !strings.Contains(errOut, tt.want) {
				t.Fatalf("exit %d stderr %q, want 2 and %q", code, errOut, tt.want)
			}
		})
	}
}
