package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"sync"

	"github.com/agent-interop/runtime/internal/providers/freebuff/core"
	"github.com/agent-interop/runtime/internal/security"
)

// Reasons the CLI path refuses model and reasoning changes.
const (
	ReasonCLIModel     = "the Freebuff CLI has no model-change command: its /model (alias of /end-session) ends the session and ignores the argument; pick the model on the CLI's start screen"
	ReasonCLIReasoning = "the Freebuff CLI has no /reasoning command"
)

// ScreenError reports a CLI screen that blocks driving it: the login
// screen, the single-instance lock, an ended session, or no ready screen in
// time.
type ScreenError struct {
	Screen string
	Msg    string
}

func (e *ScreenError) Error() string { return e.Msg }

// Backend drives the freebuff terminal UI in managed PTYs. It is safe for
// concurrent use.
type Backend struct {
	cfg      core.Config
	root     string
	exe      func() (string, error) // the executable found, or why none (first use)
	readyRe  *regexp.Regexp
	readyErr error
	takeover bool
	probe    func() error

	probeOnce sync.Once
	probeErr  error

	mu       sync.Mutex
	sessions map[string]*ptySession // by managed key
	nextKey  int
	closed   bool
}

// New returns a Backend for cfg (with its defaults filled in). It starts
// nothing; the freebuff executable is looked for on first use.
func New(cfg core.Config) *Backend {
	cfg = cfg.WithDefaults()
	b := &Backend{cfg: cfg, sessions: map[string]*ptySession{}, probe: cfg.PTYProbe}
	if b.probe == nil {
		b.probe = probePTY
	}
	b.root = cfg.Env(core.EnvProjectRoot)
	if b.root == "" {
		b.root = cfg.WorkDir
	}
	if abs, err := filepath.Abs(b.root); err == nil {
		b.root = abs
	}
	if p := cfg.Env(core.EnvReadyPattern); p != "" {
		re, err := regexp.Compile("(?i)" + p)
		if err != nil {
			b.readyErr = fmt.Errorf("%s is not a valid regular expression: %w", core.EnvReadyPattern, err)
		} else {
			b.readyRe = re
		}
	}
	b.takeover = cfg.Env(core.EnvTakeover) == "1"
	// The executable is looked for on first use (a stat per PATH entry),
	// not when the backend is built: serving starts without it.
	b.exe = sync.OnceValues(func() (string, error) { return findCLI(cfg) })
	return b
}

// Found reports why no freebuff executable can be used, or nil.
func (b *Backend) Found() error {
	_, err := b.exe()
	return err
}

// Program returns the freebuff executable found ("" when none was).
func (b *Backend) Program() string {
	p, _ := b.exe()
	return p
}

// Session is what can be observed of one managed session.
type Session struct {
	// Key is the managed key ("pty-N"), the thread id until the session
	// has written a conversation.
	Key string
	PID int
	// Conversation is the CLI conversation the session writes, "" until
	// it has written one.
	Conversation string
	// Screen is the recognised screen (ScreenReady, ScreenWorking, …; ""
	// when none is), Text the normalized visible text.
	Screen, Text string
	Exited       bool
	// Changed is closed on the session's next output or exit.
	Changed <-chan struct{}
}

// Observe returns the running managed session of a thread id (a managed
// key or a bound conversation id).
func (b *Backend) Observe(id string) (Session, bool) {
	s := b.live(id)
	if s == nil {
		return Session{}, false
	}
	screen, text, exited, changed := s.state(b.classify)
	conv := b.bindChat(s) // after the screen: a conversation shown is written
	return Session{Key: s.key, PID: s.pid, Conversation: conv, Screen: screen, Text: text, Exited: exited, Changed: changed}, true
}

// Running returns how many managed sessions run.
func (b *Backend) Running() int { return len(b.liveSessions()) }

// findCLI locates the freebuff executable: FREEBUFF_CLI_PATH, then
// ~/.config/manicode/freebuff, then PATH.
func findCLI(cfg core.Config) (string, error) {
	if p := cfg.Env(core.EnvCLIPath); p != "" {
		if isExecutable(p) {
			return p, nil
		}
		return "", fmt.Errorf("%s=%s is not an executable file", core.EnvCLIPath, p)
	}
	if p := filepath.Join(manicodeDir(cfg.HomeDir), "freebuff"); cfg.HomeDir != "" && isExecutable(p) {
		return p, nil
	}
	pathList, _ := cfg.LookupEnv("PATH")
	for _, dir := range filepath.SplitList(pathList) {
		if dir == "" {
			continue
		}
		if p := filepath.Join(dir, "freebuff"); isExecutable(p) {
			return p, nil
		}
	}
	return "", errors.New("no freebuff executable was found (set FREEBUFF_CLI_PATH, or install it into ~/.config/manicode or PATH)")
}

func isExecutable(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular() && st.Mode().Perm()&0o111 != 0
}

// ChatsDir is the history directory of the project root.
func (b *Backend) ChatsDir() string {
	return filepath.Join(manicodeDir(b.cfg.HomeDir), "projects", projectKey(b.cfg.Env(core.EnvProjectKey), b.root), "chats")
}

// writesErr says why CLI writes cannot be attempted, or nil. The PTY
// start-up probe runs once.
func (b *Backend) writesErr() error {
	if _, err := b.exe(); err != nil {
		return &core.ReadOnlyError{Reason: "Freebuff CLI writes are unavailable: " + err.Error()}
	}
	if b.readyErr != nil {
		return &core.ReadOnlyError{Reason: "Freebuff CLI writes are unavailable: " + b.readyErr.Error()}
	}
	b.probeOnce.Do(func() { b.probeErr = b.probe() })
	if b.probeErr != nil {
		return &core.ReadOnlyError{Reason: "Freebuff CLI writes are unavailable: the PTY start-up probe failed: " + b.probeErr.Error()}
	}
	return nil
}

func (b *Backend) classify(text string) string { return classifyScreen(text, b.readyRe) }

// --- sessions ----------------------------------------------------------------

// start launches a managed CLI (resuming chatID exactly when set) and waits
// for its ready screen.
func (b *Backend) start(ctx context.Context, dir, chatID string) (*ptySession, error) {
	if err := b.writesErr(); err != nil {
		return nil, err
	}
	before := map[string]struct{}{}
	if chats, err := listChats(b.ChatsDir()); err == nil {
		for _, c := range chats {
			before[c.ID] = struct{}{}
		}
	}
	args := []string{"--cwd", dir}
	if chatID != "" {
		args = append(args, "--continue", chatID)
	}
	env := append(append([]string(nil), b.cfg.Environ()...), "TERM=xterm-256color", "COLUMNS="+strconv.Itoa(ptyCols), "LINES="+strconv.Itoa(ptyRows))
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil, errors.New("the Freebuff service is closed")
	}
	b.nextKey++
	key := "pty-" + strconv.Itoa(b.nextKey)
	b.mu.Unlock()
	s, err := startPTY(b.cfg.Clock, key, b.Program(), args, dir, env)
	if err != nil {
		return nil, err
	}
	s.before, s.continued, s.chatID = before, chatID, chatID
	if err := b.awaitReady(ctx, s); err != nil {
		s.kill()
		return nil, err
	}
	b.mu.Lock()
	b.sessions[key] = s
	b.mu.Unlock()
	return s, nil
}

// awaitReady drives the start-up screens: presses Enter once on the model
// picker (which starts the session) and, with FREEBUFF_CLI_TAKEOVER=1, once
// on the single-instance lock; login, lock and expiry screens are reported.
func (b *Backend) awaitReady(ctx context.Context, s *ptySession) error {
	timer := b.cfg.Clock.NewTimer(b.cfg.ReadyTimeout)
	defer timer.Stop()
	pickerPressed, takeoverPressed := false, false
	for {
		screen, _, exited, changed := s.state(b.classify)
		switch screen {
		case ScreenReady:
			return nil
		case ScreenLogin:
			return &ScreenError{Screen: ScreenLogin, Msg: "Freebuff CLI is not signed in: it shows its login screen (\"Press ENTER to login\"). Run `freebuff login` in a terminal, then retry."}
		case ScreenLock:
			if !b.takeover {
				return &ScreenError{Screen: ScreenLock, Msg: "Freebuff is already running: only one freebuff instance is allowed at a time. Close the other instance, or set FREEBUFF_CLI_TAKEOVER=1 to take it over."}
			}
			if !takeoverPressed {
				takeoverPressed = true
				if _, err := s.write(keyEnter); err != nil {
					return fmt.Errorf("answer the Freebuff takeover dialog: %w", err)
				}
			}
		case ScreenPicker:
			if !pickerPressed {
				pickerPressed = true
				if _, err := s.write(keyEnter); err != nil {
					return fmt.Errorf("start a Freebuff session on the picker: %w", err)
				}
			}
		case ScreenExpired:
			return &ScreenError{Screen: ScreenExpired, Msg: "Freebuff CLI session ended before it was ready (\"Session ended\")"}
		}
		if exited {
			return &ScreenError{Screen: "exited", Msg: "Freebuff CLI exited before it was ready; last output: " + security.RedactString(s.tail(300))}
		}
		if err := s.waitChange(ctx, changed, timer); err != nil {
			if errors.Is(err, errTimeout) {
				return &ScreenError{Screen: "timeout", Msg: fmt.Sprintf("Freebuff CLI did not show its ready screen within %s; last output: %s", b.cfg.ReadyTimeout, security.RedactString(s.tail(300)))}
			}
			return err
		}
	}
}

// bindChat finds the conversation a new session created: the oldest chat
// folder that did not exist when the session started.
func (b *Backend) bindChat(s *ptySession) string {
	s.mu.Lock()
	id := s.chatID
	s.mu.Unlock()
	if id != "" {
		return id
	}
	chats, err := listChats(b.ChatsDir())
	if err != nil {
		return ""
	}
	var fresh []string
	for _, c := range chats {
		if _, old := s.before[c.ID]; !old {
			fresh = append(fresh, c.ID)
		}
	}
	if len(fresh) == 0 {
		return ""
	}
	sort.Strings(fresh)
	s.mu.Lock()
	s.chatID = fresh[0]
	s.mu.Unlock()
	return fresh[0]
}

// live returns the running managed session for a thread id (a managed key
// or a bound conversation id).
func (b *Backend) live(id string) *ptySession {
	b.mu.Lock()
	sessions := make([]*ptySession, 0, len(b.sessions))
	var gone []*ptySession
	for k, s := range b.sessions {
		if s.isExited() {
			delete(b.sessions, k)
			gone = append(gone, s)
			continue
		}
		sessions = append(sessions, s)
	}
	b.mu.Unlock()
	for _, s := range gone {
		s.kill() // reap what is left of the group and close the terminal
	}
	for _, s := range sessions {
		if s.key == id {
			return s
		}
	}
	for _, s := range sessions {
		if b.bindChat(s) == id {
			return s
		}
	}
	return nil
}

// liveSessions returns every running managed session.
func (b *Backend) liveSessions() []*ptySession {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]*ptySession, 0, len(b.sessions))
	for _, s := range b.sessions {
		if !s.isExited() {
			out = append(out, s)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].key < out[j].key })
	return out
}

// threadState maps a session screen to a thread state.
func (b *Backend) threadState(s *ptySession) string {
	screen, _, _, _ := s.state(b.classify)
	switch screen {
	case ScreenWorking:
		return "running"
	case ScreenReady:
		return "idle"
	case "":
		return "starting"
	}
	return screen
}

// --- reads -----------------------------------------------------------------

func (b *Backend) project() core.Project {
	return core.Project{ID: b.root, Path: b.root, Name: filepath.Base(b.root), Metadata: map[string]any{"historyKey": projectKey(b.cfg.Env(core.EnvProjectKey), b.root)}}
}

// ListProjects lists the one project the CLI is managed for.
func (b *Backend) ListProjects(context.Context) ([]core.Project, error) {
	return []core.Project{b.project()}, nil
}

// ProjectRoot returns the project root when projectID names it (its
// path or base name).
func (b *Backend) ProjectRoot(_ context.Context, projectID string) (string, error) {
	if projectID != b.root && projectID != filepath.Base(b.root) {
		return "", &core.NotFoundError{Kind: "project", ID: projectID}
	}
	return b.root, nil
}

func (b *Backend) summary(c chat) core.ThreadSummary {
	t := core.ThreadSummary{ID: c.ID, ProjectID: b.root, Title: c.FirstPrompt, State: "idle",
		Metadata: map[string]any{"messageCount": c.MessageCount, "conversationId": c.ID, "updatedAt": core.ISOTime(c.UpdatedAt), "live": false}}
	if t.Title == "" {
		t.Title = "Freebuff CLI conversation"
	}
	if s := b.live(c.ID); s != nil {
		t.State = b.threadState(s)
		t.Metadata["live"] = true
		t.Metadata["pid"] = s.pid
	}
	return t
}

// ListThreads lists the history's conversations and the managed sessions
// that have not written one yet.
func (b *Backend) ListThreads(ctx context.Context, projectID string) ([]core.ThreadSummary, error) {
	if projectID != "" {
		if _, err := b.ProjectRoot(ctx, projectID); err != nil {
			return nil, err
		}
	}
	chats, err := listChats(b.ChatsDir())
	if err != nil {
		return nil, err
	}
	out := make([]core.ThreadSummary, 0, len(chats))
	bound := map[string]struct{}{}
	for _, c := range chats {
		out = append(out, b.summary(c))
		bound[c.ID] = struct{}{}
	}
	// Managed sessions that have not written a conversation yet.
	for _, s := range b.liveSessions() {
		if id := b.bindChat(s); id != "" {
			if _, ok := bound[id]; ok {
				continue
			}
		}
		out = append(out, core.ThreadSummary{ID: s.key, ProjectID: b.root, Title: "New Freebuff CLI session", State: b.threadState(s),
			Metadata: map[string]any{"live": true, "pid": s.pid, "messageCount": 0}})
	}
	return out, nil
}

// GetThread returns a conversation with its sanitized messages, or a live
// managed session that has none yet.
func (b *Backend) GetThread(_ context.Context, id string) (core.ThreadDetail, error) {
	c, err := readChat(b.ChatsDir(), id, true)
	if err == nil {
		return core.ThreadDetail{ThreadSummary: b.summary(c), Messages: c.Messages}, nil
	}
	var nf *core.NotFoundError
	if !errors.As(err, &nf) {
		return core.ThreadDetail{}, err
	}
	if s := b.live(id); s != nil {
		if chatID := b.bindChat(s); chatID != "" && chatID != id {
			return b.GetThread(context.Background(), chatID)
		}
		return core.ThreadDetail{ThreadSummary: core.ThreadSummary{ID: s.key, ProjectID: b.root, Title: "New Freebuff CLI session", State: b.threadState(s),
			Metadata: map[string]any{"live": true, "pid": s.pid, "messageCount": 0}}, Messages: []any{}}, nil
	}
	return core.ThreadDetail{}, &core.NotFoundError{Kind: "thread", ID: id}
}

// Progress is the 0.3.x CLI-mode progress answer: no live stream.
func Progress(id string) core.ProgressSnapshot {
	return core.ProgressSnapshot{ThreadID: id, Events: []core.ProgressEvent{}, Connected: false, Stale: true}
}

// ActiveWork returns the threads that are not idle (only id when set).
func (b *Backend) ActiveWork(ctx context.Context, id string) ([]core.ActiveThread, error) {
	threads, err := b.ListThreads(ctx, "")
	if err != nil {
		return nil, err
	}
	out := []core.ActiveThread{}
	for _, t := range threads {
		if (id == "" || t.ID == id) && t.State != "" && t.State != "idle" {
			live := Progress(t.ID)
			out = append(out, core.ActiveThread{ThreadSummary: t, Live: &live})
		}
	}
	return out, nil
}

// ListModels explains that the CLI has no model catalog.
func (b *Backend) ListModels(context.Context) (core.ModelList, error) {
	return core.ModelList{
		Note:   "The Freebuff CLI has no model catalog: the model is picked on its start screen ('Start coding for free'), and " + ReasonCLIModel + ".",
		Models: []string{},
	}, nil
}

// signedIn reports whether the CLI's credentials file holds a token (the
// token itself is never kept).
func (b *Backend) signedIn() any {
	data, err := os.ReadFile(filepath.Join(manicodeDir(b.cfg.HomeDir), "credentials.json"))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return false
		}
		return "unknown"
	}
	var creds struct {
		Default struct {
			AuthToken string `json:"authToken"`
		} `json:"default"`
		AuthToken string `json:"authToken"`
	}
	if json.Unmarshal(data, &creds) != nil {
		return "unknown"
	}
	return creds.Default.AuthToken != "" || creds.AuthToken != ""
}

// Status reports the CLI found, whether it is signed in and whether it
// can be driven.
func (b *Backend) Status(context.Context) core.Status {
	st := core.Status{Product: "cli", SignedIn: b.signedIn(), Endpoints: []string{"managed PTY"}, Notes: []string{}}
	if err := b.writesErr(); err != nil {
		st.ReadOnly, st.ReadOnlyReason = true, err.Error()
		st.Notes = append(st.Notes, err.Error())
	} else {
		st.Endpoint = b.Program()
		st.Notes = append(st.Notes, fmt.Sprintf("Freebuff CLI at %s driven in managed PTYs for project %s; history in %s.", st.Endpoint, b.root, b.ChatsDir()))
	}
	st.Notes = append(st.Notes, "Live Desktop progress is unavailable in CLI mode; model and reasoning changes are unsupported on the CLI.")
	return st
}

// FinishedTurns returns the bound conversation and its finished-turn count
// for a managed session key (outcome tracking).
func (b *Backend) FinishedTurns(key string) (string, int, bool) {
	b.mu.Lock()
	s := b.sessions[key]
	b.mu.Unlock()
	if s == nil {
		return "", 0, false
	}
	id := b.bindChat(s)
	if id == "" {
		return "", 0, !s.isExited()
	}
	c, err := readChat(b.ChatsDir(), id, false)
	if err != nil {
		return id, 0, !s.isExited()
	}
	return id, c.Finished, !s.isExited()
}

// Close kills every managed session's process group.
func (b *Backend) Close() error {
	b.mu.Lock()
	b.closed = true
	sessions := make([]*ptySession, 0, len(b.sessions))
	for _, s := range b.sessions {
		sessions = append(sessions, s)
	}
	b.sessions = map[string]*ptySession{}
	b.mu.Unlock()
	var wg sync.WaitGroup
	for _, s := range sessions {
		wg.Add(1)
		go func() { defer wg.Done(); s.kill() }()
	}
	wg.Wait()
	return nil
}
