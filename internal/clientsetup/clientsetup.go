// Package clientsetup writes (or prints) the entry that plugs
// interop-runtime into a coding agent's MCP configuration, in each
// client's own shape:
//
//   - Claude Code: user scope, mcpServers in ~/.claude.json
//     ($CLAUDE_CONFIG_DIR/.claude.json), env in "env";
//   - OpenCode: mcp in $XDG_CONFIG_HOME/opencode/opencode.json, the
//     command as one array, env in "environment" (OpenCode ignores "env");
//   - Codex: [mcp_servers.agent_interop] in $CODEX_HOME/config.toml, env as
//     a TOML table, and default_tools_approval_mode = "approve" so that a
//     session run with approval policy "never" does not refuse every tool
//     annotated destructive or open-world before it reaches the server;
//   - Cursor: mcpServers.agentInterop in ~/.cursor/mcp.json or
//     <project>/.cursor/mcp.json (0.3.x's cursor-setup shape).
//
// In HTTP mode the entry points at the Streamable HTTP endpoint with a
// bearer token taken from AGENT_INTEROP_HTTP_TOKEN when the client runs;
// the token itself is never written into a configuration file.
//
// Writing is careful: the existing file is parsed first and a malformed
// one (or an entry of the wrong type) is refused with its position or key
// and left byte-identical; only the keys of our entry that we own change
// (command, args, url, the bearer header, our INTEROP_READ_ONLY variable,
// the approval mode): every other key of an existing entry — environment
// variables such as INTEROP_DB, timeouts, per-tool settings, enabled — is
// kept, and Write lists the keys it changed. JSON files are patched in
// place (github.com/tailscale/hujson), so OpenCode's JSONC keeps its
// comments and trailing commas; TOML edits are surgical, so comments and
// unrelated tables stay; every format is read in one linear pass;
// the merged result is parsed again and compared; the previous content goes
// to one backup (<file>.bak), and the new file replaces the old atomically
// (through a symlink to its target; a read-only file is refused).
package clientsetup

import (
	"fmt"
	"path/filepath"
	"strings"
)

// Client names a supported MCP client.
type Client string

// The clients setup knows.
const (
	Claude   Client = "claude"
	OpenCode Client = "opencode"
	Codex    Client = "codex"
	Cursor   Client = "cursor"
)

// Clients lists them in the order the help text names them.
var Clients = []Client{Claude, OpenCode, Codex, Cursor}

// TokenEnv is the variable an HTTP client reads the bearer token from
// (upstream-0.3 §4.13's canonical name).
const TokenEnv = "AGENT_INTEROP_HTTP_TOKEN"

// DefaultURL is the HTTP endpoint serve --http listens on by default.
const DefaultURL = "http://127.0.0.1:8788/mcp"

// Entry is what the client should run or reach.
type Entry struct {
	// Command is the interop-runtime executable (absolute path).
	Command string
	// Profile is the tool profile ("" = the server's default).
	Profile string
	// ReadOnly serves the read tools only (INTEROP_READ_ONLY=1 in the
	// client's environment key).
	ReadOnly bool
	// HTTP points the client at URL instead of starting a process.
	HTTP bool
	URL  string
}

// Args are the stdio command's arguments.
func (e Entry) Args() []string {
	args := []string{"serve"}
	if e.Profile != "" {
		args = append(args, "--profile", e.Profile)
	}
	return args
}

// Env is the environment the client passes to the stdio command.
func (e Entry) Env() map[string]string {
	if !e.ReadOnly {
		return nil
	}
	return map[string]string{"INTEROP_READ_ONLY": "1"}
}

func (e Entry) url() string {
	if e.URL != "" {
		return e.URL
	}
	return DefaultURL
}

// Paths are the directories the configuration files are found from.
type Paths struct {
	Home string
	// CodexHome is $CODEX_HOME ("" = Home/.codex).
	CodexHome string
	// XDGConfigHome is $XDG_CONFIG_HOME ("" = Home/.config).
	XDGConfigHome string
	// ClaudeConfigDir is $CLAUDE_CONFIG_DIR ("" = Home).
	ClaudeConfigDir string
	// Project is the project directory for Cursor's --project.
	Project string
}

// Target is one client's configuration file and how the entry sits in it.
type Target struct {
	Client Client
	File   string
	// Name is the entry's key in the client's server table.
	Name string
}

// TargetFor returns where client's entry lives; project selects Cursor's
// project file.
func TargetFor(client Client, p Paths, project bool) (Target, error) {
	if p.Home == "" {
		return Target{}, fmt.Errorf("no home directory (set HOME)")
	}
	switch client {
	case Claude:
		dir := p.ClaudeConfigDir
		if dir == "" {
			dir = p.Home
		}
		return Target{Client: client, File: filepath.Join(dir, ".claude.json"), Name: "agent-interop"}, nil
	case OpenCode:
		dir := p.XDGConfigHome
		if dir == "" {
			dir = filepath.Join(p.Home, ".config")
		}
		return Target{Client: client, File: filepath.Join(dir, "opencode", "opencode.json"), Name: "agent-interop"}, nil
	case Codex:
		dir := p.CodexHome
		if dir == "" {
			dir = filepath.Join(p.Home, ".codex")
		}
		return Target{Client: client, File: filepath.Join(dir, "config.toml"), Name: "agent_interop"}, nil
	case Cursor:
		dir := filepath.Join(p.Home, ".cursor")
		if project {
			if p.Project == "" {
				return Target{}, fmt.Errorf("--project needs a project directory")
			}
			dir = filepath.Join(p.Project, ".cursor")
		}
		return Target{Client: client, File: filepath.Join(dir, "mcp.json"), Name: "agentInterop"}, nil
	}
	return Target{}, fmt.Errorf("unknown client %q (want %s)", client, clientList())
}

func clientList() string {
	var s []string
	for _, c := range Clients {
		s = append(s, string(c))
	}
	return strings.Join(s, ", ")
}

// ParseClient checks a client name.
func ParseClient(s string) (Client, error) {
	for _, c := range Clients {
		if string(c) == s {
			return c, nil
		}
	}
	return "", fmt.Errorf("unknown client %q (want %s)", s, clientList())
}
