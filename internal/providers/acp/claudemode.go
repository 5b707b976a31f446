package acp

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/agent-interop/runtime/internal/lazy"
)

// ClaudeDefaultMode is the permission mode the claude-default-mode quirk
// starts a new session in: every edit and command asks.
const ClaudeDefaultMode = "default"

// ClaudeSettings says where Claude Code's settings files are, as the agent
// program sees them. Only files are read; nothing is written.
type ClaudeSettings struct {
	// ConfigDir is CLAUDE_CONFIG_DIR, else ~/.claude of the agent's HOME.
	ConfigDir string
	// Managed is the managed (policy) settings file of the platform; the
	// *.json files of managed-settings.d beside it (hidden ones left out)
	// are merged after it in lexical order.
	Managed string
	// Flag is the value of --settings in the agent's command (a file, or
	// JSON when it starts with "{"; "" when none): Claude Code's command
	// line settings, above the workspace's and below managed ones. A
	// relative file is relative to FlagDir (default: our working
	// directory), where the agent runs.
	Flag, FlagDir string
	// ReadFile reads a file (default os.ReadFile).
	ReadFile func(string) ([]byte, error)
	// ReadDir lists a directory (default os.ReadDir).
	ReadDir func(string) ([]os.DirEntry, error)
}

// ClaudeSettingsFlag is the value of the last --settings (or
// --settings=<value>) of an agent's arguments ("" when none).
func ClaudeSettingsFlag(args []string) string {
	v := ""
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "--settings" && i+1 < len(args):
			v = args[i+1]
			i++
		case strings.HasPrefix(a, "--settings="):
			v = strings.TrimPrefix(a, "--settings=")
		}
	}
	return strings.TrimSpace(v)
}

// ClaudeSettingsFor locates Claude Code's settings for an agent run with
// environment env (nil: this process's environment).
func ClaudeSettingsFor(env []string) ClaudeSettings {
	look := func(k string) string {
		if env == nil {
			return os.Getenv(k)
		}
		v := ""
		for _, kv := range env { // the last assignment wins, as in exec
			if name, val, ok := strings.Cut(kv, "="); ok && name == k {
				v = val
			}
		}
		return v
	}
	dir := look("CLAUDE_CONFIG_DIR")
	if dir == "" {
		home := look("HOME")
		if home == "" && env == nil {
			home, _ = os.UserHomeDir()
		}
		if home != "" {
			dir = filepath.Join(home, ".claude")
		}
	}
	return ClaudeSettings{ConfigDir: dir, Managed: claudeManagedSettings(runtime.GOOS)}
}

// claudeManagedSettings is where Claude Code reads managed settings on os.
func claudeManagedSettings(goos string) string {
	switch goos {
	case "darwin":
		return "/Library/Application Support/ClaudeCode/managed-settings.json"
	case "windows":
		return `C:\Program Files\ClaudeCode\managed-settings.json`
	default:
		return "/etc/claude-code/managed-settings.json"
	}
}

// claudeSource is one settings file, in Claude Code's order of precedence
// (later wins).
type claudeSource struct {
	name string // user, project, local, flag, managed
	path string
	json []byte // the settings themselves (--settings '{...}'), instead of path
}

// escalating are the modes (lower-cased, aliases included) that ask less
// than "default"; Claude Code (its SDK's filterEscalatingDefaultMode)
// ignores them in the workspace's committed .claude/settings.json.
// dontAsk denies what is not allowed beforehand: it does not escalate.
var escalating = lazy.Value[map[string]bool]{New: func() map[string]bool {
	return map[string]bool{"acceptedits": true, "auto": true, "bypasspermissions": true, "bypass": true}
}}

// StartMode is the mode the claude-default-mode quirk sets on a new
// session in workspace cwd: "default" unless a settings source the user
// controls names permissions.defaultMode — the user's settings.json in
// ConfigDir, the workspace's .claude/settings.local.json, --settings in
// the agent's command, managed settings (managed-settings.json, then
// managed-settings.d/*.json) — or the workspace's committed
// .claude/settings.json names a mode that does not escalate (an
// escalating one there is ignored, as by Claude Code itself). Then it is
// "" and the agent's own choice stands — except when --settings decides:
// then it is the mode the flag names, set by the runtime when the
// session is in another (claude-agent-acp 0.101.0 takes settings from
// its client, not from its arguments, so the flag would otherwise be
// lost). A file that is missing, unreadable or not JSON names nothing.
func (cs ClaudeSettings) StartMode(cwd string) string {
	read := cs.ReadFile
	if read == nil {
		read = os.ReadFile
	}
	readDir := cs.ReadDir
	if readDir == nil {
		readDir = os.ReadDir
	}
	var sources []claudeSource
	if cs.ConfigDir != "" {
		sources = append(sources, claudeSource{name: "user", path: filepath.Join(cs.ConfigDir, "settings.json")})
	}
	if cwd != "" {
		sources = append(sources,
			claudeSource{name: "project", path: filepath.Join(cwd, ".claude", "settings.json")},
			claudeSource{name: "local", path: filepath.Join(cwd, ".claude", "settings.local.json")})
	}
	if f := cs.Flag; f != "" {
		if strings.HasPrefix(f, "{") {
			sources = append(sources, claudeSource{name: "flag", json: []byte(f)})
		} else {
			if !filepath.IsAbs(f) && cs.FlagDir != "" {
				f = filepath.Join(cs.FlagDir, f)
			}
			sources = append(sources, claudeSource{name: "flag", path: f})
		}
	}
	if cs.Managed != "" {
		sources = append(sources, claudeSource{name: "managed", path: cs.Managed})
		dir := filepath.Join(filepath.Dir(cs.Managed), "managed-settings.d")
		if entries, err := readDir(dir); err == nil { // sorted by name
			for _, e := range entries {
				if n := e.Name(); !e.IsDir() && !strings.HasPrefix(n, ".") && strings.HasSuffix(n, ".json") {
					sources = append(sources, claudeSource{name: "managed", path: filepath.Join(dir, n)})
				}
			}
		}
	}
	// The source that decides is the last one naming a mode.
	winner, mode := "", ""
	for _, s := range sources {
		read := read
		if s.json != nil {
			read = func(string) ([]byte, error) { return s.json, nil }
		}
		if m, ok := claudeDefaultMode(read, s.path); ok {
			winner, mode = s.name, m
		}
	}
	switch {
	case winner == "":
		return ClaudeDefaultMode
	case winner == "project" && escalating.Get()[strings.ToLower(strings.TrimSpace(mode))]:
		return ClaudeDefaultMode
	case winner == "flag":
		return strings.TrimSpace(mode)
	default:
		return ""
	}
}

// claudeDefaultMode is permissions.defaultMode of a settings file, when it
// is a non-empty string.
func claudeDefaultMode(read func(string) ([]byte, error), path string) (string, bool) {
	b, err := read(path)
	if err != nil {
		return "", false
	}
	var f struct {
		Permissions struct {
			DefaultMode *string `json:"defaultMode"`
		} `json:"permissions"`
	}
	if json.Unmarshal(b, &f) != nil || f.Permissions.DefaultMode == nil || strings.TrimSpace(*f.Permissions.DefaultMode) == "" {
		return "", false
	}
	return *f.Permissions.DefaultMode, true
}

// targetMode is the mode AdapterConfig.StartMode names for the open
// session sid ("" when none, or when the session offers no such mode).
func (a *Adapter) targetMode(c *Client, sid string) (string, SessionView) {
	v, ok := c.Session(sid)
	if a.cfg.StartMode == nil || !ok || v.Modes == nil {
		return "", v
	}
	a.mu.Lock()
	l := a.launch
	a.mu.Unlock()
	mode := a.cfg.StartMode(l, v.CWD)
	for _, m := range v.Modes.AvailableModes {
		if mode != "" && m.ID == mode {
			return mode, v
		}
	}
	return "", v
}

// startMode applies AdapterConfig.StartMode to the new session sid: the
// mode it names is set through session/set_mode when the session offers it
// and is in another mode. A failed switch closes the session (when the
// agent can) and fails its creation: a session must never run in a mode
// the runtime meant to leave.
func (a *Adapter) startMode(ctx context.Context, c *Client, sid string) error {
	mode, v := a.targetMode(c, sid)
	if mode == "" || v.Modes.CurrentModeID == mode {
		return nil
	}
	err := c.SetModeID(ctx, sid, mode)
	if err == nil {
		return nil
	}
	closed := "it stays open in the agent process, unused"
	if c.Init().AgentCapabilities.Session("close") {
		if cerr := c.CloseSession(ctx, sid); cerr == nil {
			closed = "it was closed"
		}
	}
	return fmt.Errorf("%s create session: new session %s starts in mode %q and could not be switched to %q (session/set_mode), so it is not used (%s); check the agent's log, or set permissions.defaultMode in the agent's user settings: %w",
		a.cfg.Provider, sid, v.Modes.CurrentModeID, mode, closed, err)
}

// reopenMode applies AdapterConfig.StartMode to the session sid just
// loaded or resumed: claude-agent-acp 0.101.0 reopens a session in the
// mode of its last user message, so one reopened before its first prompt
// is back in auto. The switch is made when the session reopened in a mode
// that asks less than default (auto, acceptEdits, bypassPermissions) and
// the named mode is offered; a more careful mode it reopened in (plan, a
// user's choice at the last prompt) is left alone. If the switch fails,
// the session is dropped from the client (the next call reopens it and
// tries again) and the reopen fails: it must not run in the mode the
// runtime meant to leave.
func (a *Adapter) reopenMode(ctx context.Context, c *Client, sid string) error {
	mode, v := a.targetMode(c, sid)
	if mode == "" || v.Modes.CurrentModeID == mode || !escalating.Get()[strings.ToLower(v.Modes.CurrentModeID)] {
		return nil
	}
	err := c.SetModeID(ctx, sid, mode)
	if err == nil {
		return nil
	}
	c.forget(sid)
	return fmt.Errorf("%s reopen session: session %s reopened in mode %q and could not be switched to %q (session/set_mode), so it is not used; check the agent's log, or set permissions.defaultMode in the agent's user settings: %w",
		a.cfg.Provider, sid, v.Modes.CurrentModeID, mode, err)
}
