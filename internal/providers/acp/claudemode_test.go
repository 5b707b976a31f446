package acp_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/agent-interop/runtime/internal/providers/acp"
)

// TestClaudeStartMode: the claude-default-mode quirk switches a new
// session to "default" unless a settings file the user controls names a
// mode; an escalating mode in the workspace's committed settings does not
// count, the winning file is the last in Claude Code's precedence (user,
// project, local, managed), and nothing is written.
func TestClaudeStartMode(t *testing.T) {
	const (
		user    = "user"    // $HOME/.claude/settings.json
		cfgDir  = "cfgdir"  // $CLAUDE_CONFIG_DIR/settings.json
		project = "project" // ws/.claude/settings.json
		local   = "local"   // ws/.claude/settings.local.json
		managed = "managed" // the managed settings file
		dropA   = "dropA"   // managed-settings.d/10-a.json
		dropB   = "dropB"   // managed-settings.d/20-b.json
		hidden  = "hidden"  // managed-settings.d/.hidden.json
		flagged = "flagged" // flag.json, named by --settings flag.json (relative to the agent's directory)
	)
	mode := func(m string) string { return `{"permissions":{"defaultMode":"` + m + `"}}` }
	cases := []struct {
		name   string
		files  map[string]string
		config bool   // CLAUDE_CONFIG_DIR is set
		flag   string // --settings value ("file" names flag.json)
		want   string
	}{
		{name: "no settings", want: "default"},
		{name: "user names default", files: map[string]string{user: mode("default")}, want: ""},
		{name: "user names auto", files: map[string]string{user: mode("auto")}, want: ""},
		{name: "user settings without a mode", files: map[string]string{user: `{"permissions":{"allow":["Read"]}}`}, want: "default"},
		{name: "user settings not JSON", files: map[string]string{user: `{"permissions":`}, want: "default"},
		{name: "user empty mode", files: map[string]string{user: mode(" ")}, want: "default"},
		{name: "CLAUDE_CONFIG_DIR names a mode", config: true, files: map[string]string{cfgDir: mode("acceptEdits")}, want: ""},
		{name: "CLAUDE_CONFIG_DIR hides ~/.claude", config: true, files: map[string]string{user: mode("plan")}, want: "default"},
		{name: "project escalates to auto", files: map[string]string{project: mode("auto")}, want: "default"},
		{name: "project escalates to acceptEdits", files: map[string]string{project: mode("AcceptEdits")}, want: "default"},
		{name: "project escalates to bypass", files: map[string]string{project: mode("bypass")}, want: "default"},
		{name: "project names plan", files: map[string]string{project: mode("plan")}, want: ""},
		{name: "project escalation overrides user default", files: map[string]string{user: mode("default"), project: mode("acceptEdits")}, want: "default"},
		{name: "local names auto", files: map[string]string{local: mode("auto")}, want: ""},
		{name: "local overrides project escalation", files: map[string]string{project: mode("auto"), local: mode("plan")}, want: ""},
		{name: "managed names a mode", files: map[string]string{managed: mode("default")}, want: ""},
		{name: "managed overrides project escalation", files: map[string]string{project: mode("bypassPermissions"), managed: mode("auto")}, want: ""},

		{name: "a managed drop-in names a mode", files: map[string]string{dropA: mode("auto")}, want: ""},
		{name: "a managed drop-in overrides project escalation", files: map[string]string{project: mode("auto"), dropB: mode("acceptEdits")}, want: ""},
		{name: "drop-ins without a mode", files: map[string]string{dropA: `{"permissions":{"deny":["Bash"]}}`, dropB: `{}`}, want: "default"},
		{name: "a hidden drop-in is ignored", files: map[string]string{hidden: mode("auto")}, want: "default"},
		{name: "--settings JSON names a mode", flag: `{"permissions":{"defaultMode":"plan"}}`, want: "plan"},
		{name: "--settings file names a mode", flag: "file", files: map[string]string{flagged: mode("acceptEdits")}, want: "acceptEdits"},
		{name: "--settings overrides local", flag: `{"permissions":{"defaultMode":"default"}}`, files: map[string]string{local: mode("auto")}, want: "default"},
		{name: "--settings without a mode", flag: `{"model":"opus"}`, files: map[string]string{project: mode("auto")}, want: "default"},
		{name: "managed overrides --settings", flag: `{"permissions":{"defaultMode":"plan"}}`, files: map[string]string{dropB: mode("auto")}, want: ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			home, ws, conf := filepath.Join(root, "home"), filepath.Join(root, "ws"), filepath.Join(root, "conf")
			paths := map[string]string{
				user:    filepath.Join(home, ".claude", "settings.json"),
				cfgDir:  filepath.Join(conf, "settings.json"),
				project: filepath.Join(ws, ".claude", "settings.json"),
				local:   filepath.Join(ws, ".claude", "settings.local.json"),
				managed: filepath.Join(root, "etc", "managed-settings.json"),
				dropA:   filepath.Join(root, "etc", "managed-settings.d", "10-a.json"),
				dropB:   filepath.Join(root, "etc", "managed-settings.d", "20-b.json"),
				hidden:  filepath.Join(root, "etc", "managed-settings.d", ".hidden.json"),
				flagged: filepath.Join(root, "flag.json"),
			}
			if err := os.MkdirAll(ws, 0o755); err != nil {
				t.Fatal(err)
			}
			for k, body := range c.files {
				if err := os.MkdirAll(filepath.Dir(paths[k]), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(paths[k], []byte(body), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			env := []string{"HOME=" + home, "PATH=/usr/bin"}
			if c.config {
				env = append(env, "CLAUDE_CONFIG_DIR="+conf)
			}
			before := tree(t, root)
			cs := acp.ClaudeSettingsFor(env)
			cs.Managed = paths[managed]
			cs.Flag, cs.FlagDir = c.flag, root
			if c.flag == "file" {
				cs.Flag = "flag.json"
			}
			if got := cs.StartMode(ws); got != c.want {
				t.Errorf("StartMode = %q, want %q", got, c.want)
			}
			if after := tree(t, root); !slices.Equal(before, after) {
				t.Errorf("files changed: %q -> %q", before, after)
			}
		})
	}
}

// TestClaudeSettingsFlag: --settings of an agent's arguments, in both
// spellings; the last one wins.
func TestClaudeSettingsFlag(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, ""},
		{[]string{"--acp"}, ""},
		{[]string{"--settings", "/etc/s.json"}, "/etc/s.json"},
		{[]string{"--settings={\"a\":1}", "--verbose"}, `{"a":1}`},
		{[]string{"--settings", "a.json", "--settings=b.json"}, "b.json"},
		{[]string{"--settings"}, ""},
	} {
		if got := acp.ClaudeSettingsFlag(c.args); got != c.want {
			t.Errorf("ClaudeSettingsFlag(%q) = %q, want %q", c.args, got, c.want)
		}
	}
}

// TestClaudeSettingsFor: the user's settings directory is
// CLAUDE_CONFIG_DIR, else ~/.claude of the agent's HOME (the last
// assignment of the environment wins); managed settings are the platform's.
func TestClaudeSettingsFor(t *testing.T) {
	cases := []struct {
		env  []string
		want string
	}{
		{[]string{"HOME=/h"}, filepath.Join("/h", ".claude")},
		{[]string{"HOME=/h", "CLAUDE_CONFIG_DIR=/c"}, "/c"},
		{[]string{"HOME=/old", "HOME=/new"}, filepath.Join("/new", ".claude")},
		{[]string{"PATH=/bin"}, ""},
	}
	for _, c := range cases {
		cs := acp.ClaudeSettingsFor(c.env)
		if cs.ConfigDir != c.want || cs.Managed == "" {
			t.Errorf("env %q: config dir %q (want %q), managed %q", c.env, cs.ConfigDir, c.want, cs.Managed)
		}
	}
}

// tree lists the files under root with their contents.
func tree(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		out = append(out, p+"="+string(b))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
