package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/agent-interop/runtime/internal/clientsetup"
	"github.com/agent-interop/runtime/internal/httpserve"
)

// setupCommand is `setup claude|opencode|codex|cursor [flags]`: print the
// client's entry, or write it with --write.
func setupCommand(_ context.Context, args []string, env Env, stdio IO) int {
	if len(args) > 0 && isHelpFlag(args[0]) {
		return runSetup("setup", clientsetup.Codex, args, env, stdio)
	}
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		fmt.Fprintln(stdio.Stderr, "usage: interop-runtime setup claude|opencode|codex|cursor [--profile P] [--read-only] [--http] [--url U] [--project] [--command PATH] [--write]")
		return 2
	}
	client, err := clientsetup.ParseClient(args[0])
	if err != nil {
		fmt.Fprintf(stdio.Stderr, "interop-runtime setup: %v\n", err)
		return 2
	}
	return runSetup("setup "+args[0], client, args[1:], env, stdio)
}

// installCommand is 0.3.x's `install [--write]`: the Codex entry.
func installCommand(_ context.Context, args []string, env Env, stdio IO) int {
	return runSetup("install", clientsetup.Codex, args, env, stdio)
}

// cursorSetupCommand is 0.3.x's `cursor-setup [--project] [--read-only] [--write]`.
func cursorSetupCommand(_ context.Context, args []string, env Env, stdio IO) int {
	return runSetup("cursor-setup", clientsetup.Cursor, args, env, stdio)
}

func runSetup(name string, client clientsetup.Client, args []string, env Env, stdio IO) int {
	fs := newFlagSet(strings.Fields(name)[0])
	write := fs.Bool("write", false, "write the entry into the client's configuration (default: print it)")
	profile := fs.String("profile", "", "tool profile the client gets: minimal, core, freebuff, legacy or full")
	readOnly := fs.Bool("read-only", false, "give the client the read tools only (INTEROP_READ_ONLY=1 in its environment)")
	useHTTP := fs.Bool("http", false, "point the client at the HTTP endpoint (serve --http) instead of starting a process")
	url := fs.String("url", "", "the HTTP endpoint (default http://127.0.0.1:8788/mcp, or AGENT_INTEROP_HTTP_HOST/PORT)")
	// --project is Cursor's: install (Codex) does not list it; setup,
	// whose help covers every client, does (and refuses it for others).
	project := new(bool)
	if client == clientsetup.Cursor || strings.HasPrefix(name, "setup") {
		fs.BoolVar(project, "project", false, "Cursor: write <current directory>/.cursor/mcp.json instead of ~/.cursor/mcp.json")
	}
	command := fs.String("command", "", "the interop-runtime executable the client runs (default: this one)")
	if code, ok := parseFlags(fs, args, stdio); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stdio.Stderr, "interop-runtime %s: unexpected argument %q\n", name, fs.Arg(0))
		return 2
	}
	if *profile != "" {
		if _, err := ResolveProfile(*profile, env); err != nil {
			fmt.Fprintln(stdio.Stderr, err)
			return 2
		}
		*profile = strings.ToLower(strings.TrimSpace(*profile))
	}
	if *project && client != clientsetup.Cursor {
		fmt.Fprintf(stdio.Stderr, "interop-runtime %s: --project is for Cursor only\n", name)
		return 2
	}
	if *useHTTP && *readOnly {
		// Over HTTP the server decides; a client-side variable cannot.
		fmt.Fprintf(stdio.Stderr, "interop-runtime %s: --read-only with --http: start the server with serve --http --read-only instead\n", name)
		return 2
	}
	entry := clientsetup.Entry{Profile: *profile, ReadOnly: *readOnly, HTTP: *useHTTP, URL: *url}
	if *useHTTP {
		if *profile != "" {
			fmt.Fprintf(stdio.Stderr, "interop-runtime %s: --profile with --http: start the server with serve --http --profile %s instead\n", name, *profile)
			return 2
		}
		if entry.URL == "" {
			entry.URL = httpURLFromEnv(env)
		}
	} else {
		exe, err := entryExecutable(*command)
		if err != nil {
			fmt.Fprintf(stdio.Stderr, "interop-runtime %s: %v\n", name, err)
			return 1
		}
		entry.Command = exe
	}
	target, err := setupTarget(client, env, *project)
	if err != nil {
		fmt.Fprintf(stdio.Stderr, "interop-runtime %s: %v\n", name, err)
		return 1
	}
	if strings.Contains(entry.Command, string(filepath.Separator)+"go-build") {
		fmt.Fprintf(stdio.Stderr, "warning: %s is a temporary `go run` build; build the binary (go build -o ~/bin/interop-runtime ./cmd/interop-runtime) and pass --command\n", entry.Command)
	}
	if !*write {
		return printSetupEntry(name, target, entry, stdio)
	}
	return writeSetupEntry(name, target, entry, stdio)
}

// setupTarget is the configuration file client's entry goes into, found
// from the environment's home directories (and, for a project entry, the
// current directory).
func setupTarget(client clientsetup.Client, env Env, project bool) (clientsetup.Target, error) {
	paths := clientsetup.Paths{
		Home:            homeDir(env),
		CodexHome:       env.get("CODEX_HOME"),
		XDGConfigHome:   env.get("XDG_CONFIG_HOME"),
		ClaudeConfigDir: env.get("CLAUDE_CONFIG_DIR"),
	}
	if project {
		wd, err := os.Getwd()
		if err != nil {
			return clientsetup.Target{}, err
		}
		paths.Project = wd
	}
	return clientsetup.TargetFor(client, paths, project)
}

// printSetupEntry prints the entry for target to stdout, the file it
// belongs in to stderr.
func printSetupEntry(name string, target clientsetup.Target, entry clientsetup.Entry, stdio IO) int {
	snippet, err := clientsetup.Snippet(target, entry)
	if err != nil {
		fmt.Fprintf(stdio.Stderr, "interop-runtime %s: %v\n", name, err)
		return 1
	}
	fmt.Fprintf(stdio.Stderr, "# add this to %s (or run again with --write):\n", target.File)
	stdio.Stdout.Write(snippet)
	if entry.HTTP {
		httpTokenNote(stdio.Stderr)
	}
	return 0
}

// httpTokenNote says how the client's token pairs with the server's: the
// client sends the value of its own AGENT_INTEROP_HTTP_TOKEN, which must
// be the token serve --http checks.
func httpTokenNote(w io.Writer) {
	fmt.Fprintf(w, "# the client sends $%[1]s (from its own environment) as its bearer token; it must equal the server's:\n"+
		"#   either give serve --http and the client the same %[1]s,\n"+
		"#   or start serve --http without it and, before the client, export %[1]s=\"$(cat ~/.agent-interop-runtime/http-<port>.token)\"\n"+
		"#   (that file is written at each start, mode 0600; --token-file moves it)\n", clientsetup.TokenEnv)
}

// writeSetupEntry writes the entry into target's file and says what
// changed.
func writeSetupEntry(name string, target clientsetup.Target, entry clientsetup.Entry, stdio IO) int {
	res, err := clientsetup.Write(target, entry)
	if err != nil {
		fmt.Fprintf(stdio.Stderr, "interop-runtime %s: %v\n", name, err)
		return 1
	}
	switch {
	case res.Unchanged:
		fmt.Fprintf(stdio.Stdout, "%s already has the %s entry; nothing written\n", res.File, target.Name)
	case res.Backup != "":
		fmt.Fprintf(stdio.Stdout, "wrote the %s entry to %s (previous content in %s)\n", target.Name, res.File, res.Backup)
	default:
		fmt.Fprintf(stdio.Stdout, "wrote the %s entry to %s\n", target.Name, res.File)
	}
	if !res.Unchanged && len(res.Changes) > 0 {
		var keys []string
		for _, c := range res.Changes {
			keys = append(keys, c.String())
		}
		fmt.Fprintf(stdio.Stdout, "  %s; every other key of the entry was kept\n", strings.Join(keys, ", "))
	}
	if entry.HTTP {
		httpTokenNote(stdio.Stderr)
	}
	return 0
}

// entryExecutable is the executable the entry runs: the flag, else this
// program (symlinks resolved).
func entryExecutable(flagValue string) (string, error) {
	exe := flagValue
	if exe == "" {
		var err error
		if exe, err = os.Executable(); err != nil {
			return "", fmt.Errorf("finding this executable (pass --command): %w", err)
		}
	}
	abs, err := filepath.Abs(exe)
	if err != nil {
		return "", err
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	return abs, nil
}

// httpURLFromEnv is the endpoint serve --http would listen on with this
// environment (httpserve's host and port variables, canonical names first).
func httpURLFromEnv(env Env) string {
	c, err := httpserve.ConfigFromEnv(env)
	if err != nil {
		return clientsetup.DefaultURL
	}
	return httpserve.EndpointURL(c.Host, c.Port)
}
