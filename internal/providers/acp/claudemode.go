package acp

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// ClaudeDefaultMode is the permission mode the claude-default-mode quirk
// starts a new session in: every edit and command asks.
const ClaudeDefaultMode = "default"

// ClaudeSettings says where Claude Code's settings files are, as the agent
// program sees them. Only files are read; nothing is written.
type ClaudeSettings struct {
	// ConfigDir is CLAUDE_CONFIG_DIR, else ~/.claude of the agent's HOME.
	ConfigDir string
	// Managed is the managed (policy) settings file of the platform.
	Managed string
	// ReadFile reads a file (default os.ReadFile).
	ReadFile func(string) ([]byte, error)
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
	name string // user, project, local, managed
	path string
}

// escalating are the modes (lower-cased, aliases included) that ask less
// than "default"; Claude Code (its SDK's filterEscalatingDefaultMode)
// ignores them in the workspace's committed .claude/settings.json.
// dontAsk denies what is not allowed beforehand: it does not escalate.
var escalating = map[string]bool{"acceptedits": true, "auto": true, "bypasspermissions": true, "bypass": true}

// StartMode is the mode the claude-default-mode quirk sets on a new
// session in workspace cwd: "default" unless a settings file the user
// controls names permissions.defaultMode — the user's settings.json in
// ConfigDir, the workspace's .claude/settings.local.json, managed settings
// — or the workspace's committed .claude/settings.json names a mode that
// does not escalate (an escalating one there is ignored, as by Claude Code
// itself). Then it is "" and the agent's own choice stands. A file that is
// missing, unreadable or not JSON names nothing.
func (cs ClaudeSettings) StartMode(cwd string) string {
	read := cs.ReadFile
	if read == nil {
		read = os.ReadFile
	}
	var sources []claudeSource
	if cs.ConfigDir != "" {
		sources = append(sources, claudeSource{"user", filepath.Join(cs.ConfigDir, "settings.json")})
	}
	if cwd != "" {
		sources = append(sources,
			claudeSource{"project", filepath.Join(cwd, ".claude", "settings.json")},
			claudeSource{"local", filepath.Join(cwd, ".claude", "settings.local.json")})
	}
	if cs.Managed != "" {
		sources = append(sources, claudeSource{"managed", cs.Managed})
	}
	// The source that decides is the last one naming a mode.
	winner, mode := "", ""
	for _, s := range sources {
		if m, ok := claudeDefaultMode(read, s.path); ok {
			winner, mode = s.name, m
		}
	}
	switch {
	case winner == "":
		return ClaudeDefaultMode
	case winner == "project" && escalating[strings.ToLower(strings.TrimSpace(mode))]:
		return ClaudeDefaultMode
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

// startMode applies AdapterConfig.StartMode to the new session sid: the
// mode it names is set through session/set_mode when the session offers it
// and is in another mode. A failed switch closes the session (when the
// agent can) and fails its creation: a session must never run in a mode
// the runtime meant to leave.
func (a *Adapter) startMode(ctx context.Context, c *Client, sid string) error {
	if a.cfg.StartMode == nil {
		return nil
	}
	v, ok := c.Session(sid)
	if !ok || v.Modes == nil {
		return nil
	}
	a.mu.Lock()
	env := a.launch.Env
	a.mu.Unlock()
	mode := a.cfg.StartMode(env, v.CWD)
	if mode == "" || v.Modes.CurrentModeID == mode {
		return nil
	}
	offered := false
	for _, m := range v.Modes.AvailableModes {
		offered = offered || m.ID == mode
	}
	if !offered {
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
