package cursorentry_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agent-interop/runtime/internal/providers"
	"github.com/agent-interop/runtime/internal/providers/acp"
)

// TestStartModeAfterNewSession: an entry with the claude-default-mode
// quirk switches a new session to mode "default" through session/set_mode
// right after session/new, when the session offers that mode, is in
// another one and no user settings name a mode; a failed switch fails the
// creation. The simulator plays claude-agent-acp 0.101.0's modes
// (FAKECURSOR_MODES, starting in the first).
func TestStartModeAfterNewSession(t *testing.T) {
	const claudeModes = "FAKECURSOR_MODES=auto,default,acceptEdits,plan"
	cases := []struct {
		name     string
		quirk    bool
		env      []string
		home     string // $HOME/.claude/settings.json, "" for none
		project  string // ws/.claude/settings.json, "" for none
		wantSet  bool   // session/set_mode {modeId: default} is sent
		wantMode string // the session's mode afterwards
		wantErr  string // creation fails with this
	}{
		{name: "auto start is switched", quirk: true, env: []string{claudeModes}, wantSet: true, wantMode: "default"},
		{name: "no quirk keeps auto", env: []string{claudeModes}, wantMode: "auto"},
		{name: "user settings name a mode", quirk: true, env: []string{claudeModes},
			home: `{"permissions":{"defaultMode":"auto"}}`, wantMode: "auto"},
		{name: "committed escalation does not count", quirk: true, env: []string{claudeModes},
			project: `{"permissions":{"defaultMode":"acceptEdits"}}`, wantSet: true, wantMode: "default"},
		{name: "already in default", quirk: true, env: []string{"FAKECURSOR_MODES=default,auto"}, wantMode: "default"},
		{name: "default not offered", quirk: true, wantMode: "agent"},
		{name: "failed switch fails creation", quirk: true, env: []string{claudeModes, "FAKECURSOR_SET_MODE=fail"},
			wantSet: true, wantErr: `could not be switched to "default"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newSim(t)
			s.env = append(s.env, c.env...)
			for path, body := range map[string]string{
				filepath.Join(s.home, ".claude", "settings.json"): c.home,
				filepath.Join(s.ws, ".claude", "settings.json"):   c.project,
			} {
				if body == "" {
					continue
				}
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			s.close(t)
			sp := cursorSpec()
			if c.quirk {
				sp.Quirks = append(slices.Clone(sp.Quirks), providers.QuirkClaudeDefaultMode)
			}
			a := acp.NewAgent(acp.AgentConfig{Spec: sp, Env: s.env, DefaultCWD: s.ws, Host: s.h,
				LookupEnv: func(string) (string, bool) { return "", false },
				LookPath:  func(string) (string, error) { return simBinary, nil },
				Trace:     func(d acp.Direction, line []byte) { s.rec.Record(string(d), line) }})
			t.Cleanup(func() { _ = a.Close() })
			sess, err := a.CreateSession(ctxT(t), providers.CreateOptions{CWD: s.ws})
			switch {
			case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
				t.Fatalf("create: %v, want an error with %q", err, c.wantErr)
			case c.wantErr == "" && err != nil:
				t.Fatalf("create: %v", err)
			}
			sent := s.rec.Methods(string(acp.ToAgent))
			newAt := slices.Index(sent, "session/new")
			setAt := slices.Index(sent, "session/set_mode")
			if got := setAt >= 0; got != c.wantSet || (got && setAt != newAt+1) {
				t.Fatalf("client requests %q: set_mode sent = %v right after session/new, want %v", sent, got, c.wantSet)
			}
			if c.wantSet && !strings.Contains(s.setModeParams(), `"modeId":"default"`) {
				t.Fatalf("set_mode params %s", s.setModeParams())
			}
			if c.wantErr != "" {
				return
			}
			if got := a.Capabilities(ctxT(t)); got.SendMessage.State != providers.Available {
				t.Fatalf("send capability %+v", got.SendMessage)
			}
			if mode := sessionMode(t, a, sess.NativeID); mode != c.wantMode {
				t.Fatalf("session mode %q, want %q", mode, c.wantMode)
			}
		})
	}
}

// setModeParams are the params of the first session/set_mode sent.
func (s *sim) setModeParams() string {
	for _, e := range s.rec.Entries() {
		var m struct {
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		if e.Dir == string(acp.ToAgent) && json.Unmarshal(e.Msg, &m) == nil && m.Method == "session/set_mode" {
			return string(m.Params)
		}
	}
	return ""
}

// sessionMode is the current mode the adapter's client holds for sid.
func sessionMode(t *testing.T, a *acp.Adapter, sid string) string {
	t.Helper()
	c, err := a.Client(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	v, ok := c.Session(sid)
	if !ok || v.Modes == nil {
		t.Fatalf("session %s: open %v, modes %+v", sid, ok, v.Modes)
	}
	return v.Modes.CurrentModeID
}

// TestStartModeAfterReopen: claude-agent-acp 0.101.0 reopens a session
// (session/load, session/resume) in the mode of its last user message,
// so one created (and switched to default) and reopened before its first
// prompt is back in auto. The claude-default-mode quirk switches it to
// default again right after the load, on the same rule as after
// session/new, when the mode it reopened in asks less than default; a
// more careful one (plan) is left alone, and so is a session whose user
// settings name a mode. A failed switch fails the reopen and the session
// is not used: a send to it does not run in auto. The simulator reopens
// sessions in FAKECURSOR_LOAD_MODE.
func TestStartModeAfterReopen(t *testing.T) {
	cases := []struct {
		name     string
		env      []string
		home     string // $HOME/.claude/settings.json
		wantSet  bool   // session/set_mode {modeId: default} follows session/load
		wantMode string
		wantErr  string
	}{
		{name: "reopened in auto is switched", env: []string{"FAKECURSOR_MODES=auto,default,acceptEdits,plan", "FAKECURSOR_LOAD_MODE=auto"},
			wantSet: true, wantMode: "default"},
		{name: "reopened in acceptEdits is switched", env: []string{"FAKECURSOR_MODES=default,acceptEdits,plan", "FAKECURSOR_LOAD_MODE=acceptEdits"},
			wantSet: true, wantMode: "default"},
		{name: "reopened in plan is left alone", env: []string{"FAKECURSOR_MODES=auto,default,plan", "FAKECURSOR_LOAD_MODE=plan"}, wantMode: "plan"},
		{name: "reopened in default", env: []string{"FAKECURSOR_MODES=auto,default,plan"}, wantMode: "default"},
		{name: "user settings name a mode", env: []string{"FAKECURSOR_MODES=auto,default,plan", "FAKECURSOR_LOAD_MODE=auto"},
			home: `{"permissions":{"defaultMode":"auto"}}`, wantMode: "auto"},
		{name: "failed switch fails the reopen", env: []string{"FAKECURSOR_MODES=default,auto", "FAKECURSOR_LOAD_MODE=auto", "FAKECURSOR_SET_MODE=fail"},
			wantSet: true, wantErr: `reopened in mode "auto" and could not be switched to "default"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newSim(t)
			s.env = append(s.env, c.env...)
			if c.home != "" {
				path := filepath.Join(s.home, ".claude", "settings.json")
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(c.home), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			s.close(t)
			sp := cursorSpec()
			sp.Quirks = append(slices.Clone(sp.Quirks), providers.QuirkClaudeDefaultMode)
			open := func() *acp.Adapter {
				a := acp.NewAgent(acp.AgentConfig{Spec: sp, Env: s.env, DefaultCWD: s.ws, Host: s.h,
					LookupEnv: func(string) (string, bool) { return "", false },
					LookPath:  func(string) (string, error) { return simBinary, nil },
					Trace:     func(d acp.Direction, line []byte) { s.rec.Record(string(d), line) }})
				t.Cleanup(func() { _ = a.Close() })
				return a
			}
			first := open()
			sess, err := first.CreateSession(ctxT(t), providers.CreateOptions{CWD: s.ws})
			if err != nil {
				t.Fatal(err)
			}
			if err := first.Close(); err != nil {
				t.Fatal(err)
			}
			a := open() // a new agent process: the session is reopened
			a.KnowWorkspace(sess.NativeID, s.ws)
			before := len(s.rec.Methods(string(acp.ToAgent)))
			_, err = a.ResumeSession(ctxT(t), sess.NativeID)
			sent := s.rec.Methods(string(acp.ToAgent))[before:]
			loadAt, setAt := slices.Index(sent, "session/load"), slices.Index(sent, "session/set_mode")
			if got := setAt >= 0; got != c.wantSet || (got && setAt != loadAt+1) {
				t.Fatalf("client requests after the restart %q: set_mode sent = %v right after session/load, want %v", sent, got, c.wantSet)
			}
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("resume: %v, want an error with %q", err, c.wantErr)
				}
				// The session was not kept open in auto: a send reopens it
				// and fails the same way, before any prompt is written.
				_, err := a.Send(ctxT(t), sess.NativeID, "hello", providers.SendOptions{})
				if err == nil || providers.IsUncertain(err) || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("send after a failed reopen switch: %v", err)
				}
				if slices.Contains(s.rec.Methods(string(acp.ToAgent))[before:], "session/prompt") {
					t.Fatal("a prompt was sent to a session left in auto")
				}
				return
			}
			if err != nil {
				t.Fatalf("resume: %v", err)
			}
			if mode := sessionMode(t, a, sess.NativeID); mode != c.wantMode {
				t.Fatalf("session mode %q, want %q", mode, c.wantMode)
			}
		})
	}
}
