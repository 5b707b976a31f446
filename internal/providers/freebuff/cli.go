package freebuff

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
	"strings"
	"sync"

	"github.com/agent-interop/runtime/internal/providers"
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

// cliBackend drives the freebuff terminal UI in managed PTYs.
type cliBackend struct {
	cfg      Config
	root     string
	exe      string
	exeErr   error
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

func newCLI(cfg Config) *cliBackend {
	b := &cliBackend{cfg: cfg, sessions: map[string]*ptySession{}, probe: cfg.PTYProbe}
	if b.probe == nil {
		b.probe = probePTY
	}
	b.root = cfg.env(EnvProjectRoot)
	if b.root == "" {
		b.root = cfg.WorkDir
	}
	if abs, err := filepath.Abs(b.root); err == nil {
		b.root = abs
	}
	if p := cfg.env(EnvReadyPattern); p != "" {
		re, err := regexp.Compile("(?i)" + p)
		if err != nil {
			b.readyErr = fmt.Errorf("%s is not a valid regular expression: %w", EnvReadyPattern, err)
		} else {
			b.readyRe = re
		}
	}
	b.takeover = cfg.env(EnvTakeover) == "1"
	b.exe, b.exeErr = findCLI(cfg)
	return b
}

// findCLI locates the freebuff executable: FREEBUFF_CLI_PATH, then
// ~/.config/manicode/freebuff, then PATH.
func findCLI(cfg Config) (string, error) {
	if p := cfg.env(EnvCLIPath); p != "" {
		if isExecutable(p) {
			return p, nil
		}
		return "", fmt.Errorf("%s=%s is not an executable file", EnvCLIPath, p)
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

// chatsDir is the history directory of the project root.
func (b *cliBackend) chatsDir() string {
	return filepath.Join(manicodeDir(b.cfg.HomeDir), "projects", projectKey(b.cfg.env(EnvProjectKey), b.root), "chats")
}

// writesErr says why CLI writes cannot be attempted, or nil. The PTY
// start-up probe runs once.
func (b *cliBackend) writesErr() error {
	if b.exeErr != nil {
		return &ReadOnlyError{Reason: "Freebuff CLI writes are unavailable: " + b.exeErr.Error()}
	}
	if b.readyErr != nil {
		return &ReadOnlyError{Reason: "Freebuff CLI writes are unavailable: " + b.readyErr.Error()}
	}
	b.probeOnce.Do(func() { b.probeErr = b.probe() })
	if b.probeErr != nil {
		return &ReadOnlyError{Reason: "Freebuff CLI writes are unavailable: the PTY start-up probe failed: " + b.probeErr.Error()}
	}
	return nil
}

func (b *cliBackend) classify(text string) string { return classifyScreen(text, b.readyRe) }

// --- sessions ----------------------------------------------------------------

// start launches a managed CLI (resuming chatID exactly when set) and waits
// for its ready screen.
func (b *cliBackend) start(ctx context.Context, dir, chatID string) (*ptySession, error) {
	if err := b.writesErr(); err != nil {
		return nil, err
	}
	before := map[string]struct{}{}
	if chats, err := listChats(b.chatsDir()); err == nil {
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
	s, err := startPTY(b.cfg.Clock, key, b.exe, args, dir, env)
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
func (b *cliBackend) awaitReady(ctx context.Context, s *ptySession) error {
	timer := b.cfg.Clock.NewTimer(b.cfg.ReadyTimeout)
	defer timer.Stop()
	pickerPressed, takeoverPressed := false, false
	for {
		screen, _, exited, changed := s.state(b.classify)
		switch screen {
		case screenReady:
			return nil
		case screenLogin:
			return &ScreenError{Screen: screenLogin, Msg: "Freebuff CLI is not signed in: it shows its login screen (\"Press ENTER to login\"). Run `freebuff login` in a terminal, then retry."}
		case screenLock:
			if !b.takeover {
				return &ScreenError{Screen: screenLock, Msg: "Freebuff is already running: only one freebuff instance is allowed at a time. Close the other instance, or set FREEBUFF_CLI_TAKEOVER=1 to take it over."}
			}
			if !takeoverPressed {
				takeoverPressed = true
				if _, err := s.write(keyEnter); err != nil {
					return fmt.Errorf("answer the Freebuff takeover dialog: %w", err)
				}
			}
		case screenPicker:
			if !pickerPressed {
				pickerPressed = true
				if _, err := s.write(keyEnter); err != nil {
					return fmt.Errorf("start a Freebuff session on the picker: %w", err)
				}
			}
		case screenExpired:
			return &ScreenError{Screen: screenExpired, Msg: "Freebuff CLI session ended before it was ready (\"Session ended\")"}
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
func (b *cliBackend) bindChat(s *ptySession) string {
	s.mu.Lock()
	id := s.chatID
	s.mu.Unlock()
	if id != "" {
		return id
	}
	chats, err := listChats(b.chatsDir())
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
func (b *cliBackend) live(id string) *ptySession {
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
func (b *cliBackend) liveSessions() []*ptySession {
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

// screenState maps a session screen to a thread state.
func (b *cliBackend) threadState(s *ptySession) string {
	screen, _, _, _ := s.state(b.classify)
	switch screen {
	case screenWorking:
		return "running"
	case screenReady:
		return "idle"
	case "":
		return "starting"
	}
	return screen
}

// --- reads -----------------------------------------------------------------

func (b *cliBackend) project() Project {
	return Project{ID: b.root, Path: b.root, Name: filepath.Base(b.root), Metadata: map[string]any{"historyKey": projectKey(b.cfg.env(EnvProjectKey), b.root)}}
}

func (b *cliBackend) listProjects(context.Context) ([]Project, error) {
	return []Project{b.project()}, nil
}

func (b *cliBackend) projectRoot(_ context.Context, projectID string) (string, error) {
	if projectID != b.root && projectID != filepath.Base(b.root) {
		return "", &NotFoundError{Kind: "project", ID: projectID}
	}
	return b.root, nil
}

func (b *cliBackend) summary(c chat) ThreadSummary {
	t := ThreadSummary{ID: c.ID, ProjectID: b.root, Title: c.FirstPrompt, State: "idle",
		Metadata: map[string]any{"messageCount": c.MessageCount, "conversationId": c.ID, "updatedAt": isoTime(c.UpdatedAt), "live": false}}
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

func (b *cliBackend) listThreads(ctx context.Context, projectID string) ([]ThreadSummary, error) {
	if projectID != "" {
		if _, err := b.projectRoot(ctx, projectID); err != nil {
			return nil, err
		}
	}
	chats, err := listChats(b.chatsDir())
	if err != nil {
		return nil, err
	}
	out := make([]ThreadSummary, 0, len(chats))
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
		out = append(out, ThreadSummary{ID: s.key, ProjectID: b.root, Title: "New Freebuff CLI session", State: b.threadState(s),
			Metadata: map[string]any{"live": true, "pid": s.pid, "messageCount": 0}})
	}
	return out, nil
}

func (b *cliBackend) getThread(_ context.Context, id string) (ThreadDetail, error) {
	c, err := readChat(b.chatsDir(), id, true)
	if err == nil {
		return ThreadDetail{ThreadSummary: b.summary(c), Messages: c.Messages}, nil
	}
	var nf *NotFoundError
	if !errors.As(err, &nf) {
		return ThreadDetail{}, err
	}
	if s := b.live(id); s != nil {
		if chatID := b.bindChat(s); chatID != "" && chatID != id {
			return b.getThread(context.Background(), chatID)
		}
		return ThreadDetail{ThreadSummary: ThreadSummary{ID: s.key, ProjectID: b.root, Title: "New Freebuff CLI session", State: b.threadState(s),
			Metadata: map[string]any{"live": true, "pid": s.pid, "messageCount": 0}}, Messages: []any{}}, nil
	}
	return ThreadDetail{}, &NotFoundError{Kind: "thread", ID: id}
}

// cliProgress is the 0.3.x CLI-mode progress answer: no live stream.
func cliProgress(id string) ProgressSnapshot {
	return ProgressSnapshot{ThreadID: id, Events: []ProgressEvent{}, Connected: false, Stale: true}
}

func (b *cliBackend) activeWork(ctx context.Context, id string) ([]ActiveThread, error) {
	threads, err := b.listThreads(ctx, "")
	if err != nil {
		return nil, err
	}
	out := []ActiveThread{}
	for _, t := range threads {
		if (id == "" || t.ID == id) && t.State != "" && t.State != "idle" {
			live := cliProgress(t.ID)
			out = append(out, ActiveThread{ThreadSummary: t, Live: &live})
		}
	}
	return out, nil
}

func (b *cliBackend) listModels(context.Context) (ModelList, error) {
	return ModelList{
		Note:   "The Freebuff CLI has no model catalog: the model is picked on its start screen ('Start coding for free'), and " + ReasonCLIModel + ".",
		Models: []string{},
	}, nil
}

// signedIn reports whether the CLI's credentials file holds a token (the
// token itself is never kept).
func (b *cliBackend) signedIn() any {
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

func (b *cliBackend) status(context.Context) Status {
	st := Status{Product: "cli", SignedIn: b.signedIn(), Endpoints: []string{"managed PTY"}, Notes: []string{}}
	if err := b.writesErr(); err != nil {
		st.ReadOnly, st.ReadOnlyReason = true, err.Error()
		st.Notes = append(st.Notes, err.Error())
	} else {
		st.Endpoint = b.exe
		st.Notes = append(st.Notes, fmt.Sprintf("Freebuff CLI at %s driven in managed PTYs for project %s; history in %s.", b.exe, b.root, b.chatsDir()))
	}
	st.Notes = append(st.Notes, "Live Desktop progress is unavailable in CLI mode; model and reasoning changes are unsupported on the CLI.")
	return st
}

// --- writes ----------------------------------------------------------------

// sessionFor returns the live session of a thread, or resumes the exact
// conversation with --continue <id>. It never substitutes another one.
func (b *cliBackend) sessionFor(ctx context.Context, id string) (*ptySession, error) {
	if s := b.live(id); s != nil {
		return s, nil
	}
	if _, err := readChat(b.chatsDir(), id, false); err != nil {
		return nil, err
	}
	return b.start(ctx, b.root, id)
}

// sanitizePaste removes control characters that could end the bracketed
// paste early or inject keys; line breaks and tabs are kept.
func sanitizePaste(text string) string {
	text = strings.ReplaceAll(text, "\r\n", "\n")
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\t' {
			return r
		}
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f) {
			return -1
		}
		return r
	}, text)
}

func (b *cliBackend) receipt(op, id string, status providers.ReceiptStatus, detail map[string]any) providers.Receipt {
	return providers.Receipt{Provider: providers.Freebuff, NativeID: id, Operation: op, Accepted: true, Status: status, ProviderState: "managed PTY", Detail: detail}
}

// usable refuses a session whose screen cannot take a prompt.
func (b *cliBackend) usable(s *ptySession) error {
	screen, _, exited, _ := s.state(b.classify)
	switch {
	case exited:
		return errors.New("the Freebuff CLI process has exited")
	case screen == screenExpired:
		return &ScreenError{Screen: screenExpired, Msg: "Freebuff CLI session ended (\"Session ended\"); resume_thread starts it again with --continue"}
	case screen == screenLogin:
		return &ScreenError{Screen: screenLogin, Msg: "Freebuff CLI is not signed in: run `freebuff login` in a terminal"}
	case screen == screenLock:
		return &ScreenError{Screen: screenLock, Msg: "Freebuff is already running: only one freebuff instance is allowed at a time"}
	}
	return nil
}

func (b *cliBackend) send(ctx context.Context, id, text string) (providers.Receipt, error) {
	if err := b.writesErr(); err != nil {
		return providers.Receipt{}, notSent(err)
	}
	s, err := b.sessionFor(ctx, id)
	if err != nil {
		return providers.Receipt{}, notSent(err)
	}
	if err := b.usable(s); err != nil {
		return providers.Receipt{}, notSent(err)
	}
	chatID := b.bindChat(s)
	baseline := 0
	if chatID != "" {
		if c, err := readChat(b.chatsDir(), chatID, false); err == nil {
			baseline = c.Finished
		}
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	n, err := s.write(keyClearLine + pasteStart + sanitizePaste(text) + pasteEnd)
	if err != nil {
		if n == 0 {
			return providers.Receipt{}, notSent(fmt.Errorf("write to the Freebuff CLI: %w", err))
		}
		return providers.Receipt{}, fmt.Errorf("Freebuff CLI send outcome unknown (the paste was cut after %d bytes): %w", n, err)
	}
	if _, err := s.write(keyEnter); err != nil {
		return providers.Receipt{}, fmt.Errorf("Freebuff CLI send outcome unknown (Enter was not delivered after the paste): %w", err)
	}
	r := b.receipt("send", id, providers.StatusQueued, map[string]any{"pid": s.pid, "session": s.key})
	if chatID != "" {
		r.Detail.(map[string]any)["conversationId"] = chatID
	}
	r.Ref = "cli:" + s.key + ":" + strconv.Itoa(baseline)
	return r, nil
}

func (b *cliBackend) stop(_ context.Context, id string) (providers.Receipt, error) {
	if err := b.writesErr(); err != nil {
		return providers.Receipt{}, notSent(err)
	}
	s := b.live(id)
	if s == nil {
		if _, err := readChat(b.chatsDir(), id, false); err != nil {
			return providers.Receipt{}, notSent(err)
		}
		return providers.Receipt{}, notSent(fmt.Errorf("no managed Freebuff CLI session is running thread %s; there is nothing to stop", id))
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if _, err := s.write(keyEsc); err != nil {
		return providers.Receipt{}, notSent(fmt.Errorf("send Esc to the Freebuff CLI: %w", err))
	}
	return b.receipt("stop", id, providers.StatusQueued, map[string]any{"pid": s.pid, "key": "Esc"}), nil
}

func (b *cliBackend) resume(ctx context.Context, id string) (providers.Receipt, error) {
	if err := b.writesErr(); err != nil {
		return providers.Receipt{}, notSent(err)
	}
	if s := b.live(id); s != nil {
		if err := b.usable(s); err == nil {
			return b.receipt("resume", id, providers.StatusCompleted, map[string]any{"pid": s.pid, "alreadyRunning": true}), nil
		}
		// An ended session is replaced by a fresh process on the same
		// conversation.
		b.mu.Lock()
		delete(b.sessions, s.key)
		b.mu.Unlock()
		s.kill()
	}
	if _, err := readChat(b.chatsDir(), id, false); err != nil {
		return providers.Receipt{}, notSent(err)
	}
	s, err := b.start(ctx, b.root, id)
	if err != nil {
		var se *ScreenError
		if errors.As(err, &se) {
			return providers.Receipt{}, &providers.RejectedError{Reason: se.Msg}
		}
		return providers.Receipt{}, notSent(err)
	}
	return b.receipt("resume", id, providers.StatusCompleted, map[string]any{"pid": s.pid, "conversationId": id, "args": "--continue " + id}), nil
}

func (b *cliBackend) createThread(ctx context.Context, opts CreateThreadOptions) (ThreadSummary, error) {
	dir := b.root
	if opts.ProjectPath != "" {
		if !filepath.IsAbs(opts.ProjectPath) {
			return ThreadSummary{}, notSent(&InputError{Field: "cwd", Msg: "The Freebuff CLI working directory must be an absolute path"})
		}
		if st, err := os.Stat(opts.ProjectPath); err != nil || !st.IsDir() {
			return ThreadSummary{}, notSent(&InputError{Field: "cwd", Msg: "The Freebuff CLI working directory does not exist: " + opts.ProjectPath})
		}
		if gitRoot(opts.ProjectPath) != gitRoot(b.root) {
			return ThreadSummary{}, notSent(&InputError{Field: "cwd", Msg: "The Freebuff CLI is managed for project " + b.root + "; set FREEBUFF_PROJECT_ROOT to use another"})
		}
		dir = opts.ProjectPath
	}
	s, err := b.start(ctx, dir, "")
	if err != nil {
		return ThreadSummary{}, notSent(err)
	}
	return ThreadSummary{ID: s.key, ProjectID: b.root, Title: "New Freebuff CLI session", State: b.threadState(s),
		Metadata: map[string]any{"live": true, "pid": s.pid}}, nil
}

// finishedTurns returns the bound conversation and its finished-turn count
// for a managed session key (outcome tracking).
func (b *cliBackend) finishedTurns(key string) (string, int, bool) {
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
	c, err := readChat(b.chatsDir(), id, false)
	if err != nil {
		return id, 0, !s.isExited()
	}
	return id, c.Finished, !s.isExited()
}

func (b *cliBackend) close() error {
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
