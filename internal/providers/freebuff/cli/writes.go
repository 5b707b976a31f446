package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/agent-interop/runtime/internal/providers"
	"github.com/agent-interop/runtime/internal/providers/freebuff/core"
)

// sessionFor returns the live session of a thread, or resumes the exact
// conversation with --continue <id>. It never substitutes another one.
func (b *Backend) sessionFor(ctx context.Context, id string) (*ptySession, error) {
	if s := b.live(id); s != nil {
		return s, nil
	}
	if _, err := readChat(b.ChatsDir(), id, false); err != nil {
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

func (b *Backend) receipt(op, id string, status providers.ReceiptStatus, detail map[string]any) providers.Receipt {
	return providers.Receipt{Provider: providers.Freebuff, NativeID: id, Operation: op, Accepted: true, Status: status, ProviderState: "managed PTY", Detail: detail}
}

// usable refuses a session whose screen cannot take a prompt.
func (b *Backend) usable(s *ptySession) error {
	screen, _, exited, _ := s.state(b.classify)
	switch {
	case exited:
		return errors.New("the Freebuff CLI process has exited")
	case screen == ScreenExpired:
		return &ScreenError{Screen: ScreenExpired, Msg: "Freebuff CLI session ended (\"Session ended\"); resume_thread starts it again with --continue"}
	case screen == ScreenLogin:
		return &ScreenError{Screen: ScreenLogin, Msg: "Freebuff CLI is not signed in: run `freebuff login` in a terminal"}
	case screen == ScreenLock:
		return &ScreenError{Screen: ScreenLock, Msg: "Freebuff is already running: only one freebuff instance is allowed at a time"}
	}
	return nil
}

// Send pastes a prompt into the thread's managed session (resuming the
// exact conversation first when none runs) and presses Enter.
func (b *Backend) Send(ctx context.Context, id, text string) (providers.Receipt, error) {
	if err := b.writesErr(); err != nil {
		return providers.Receipt{}, core.NotSent(err)
	}
	s, err := b.sessionFor(ctx, id)
	if err != nil {
		return providers.Receipt{}, core.NotSent(err)
	}
	if err := b.usable(s); err != nil {
		return providers.Receipt{}, core.NotSent(err)
	}
	chatID := b.bindChat(s)
	baseline := 0
	if chatID != "" {
		if c, err := readChat(b.ChatsDir(), chatID, false); err == nil {
			baseline = c.Finished
		}
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	n, err := s.write(keyClearLine + pasteStart + sanitizePaste(text) + pasteEnd)
	if err != nil {
		if n == 0 {
			return providers.Receipt{}, core.NotSent(fmt.Errorf("write to the Freebuff CLI: %w", err))
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

// Stop presses Esc in the thread's managed session.
func (b *Backend) Stop(_ context.Context, id string) (providers.Receipt, error) {
	if err := b.writesErr(); err != nil {
		return providers.Receipt{}, core.NotSent(err)
	}
	s := b.live(id)
	if s == nil {
		if _, err := readChat(b.ChatsDir(), id, false); err != nil {
			return providers.Receipt{}, core.NotSent(err)
		}
		return providers.Receipt{}, core.NotSent(fmt.Errorf("no managed Freebuff CLI session is running thread %s; there is nothing to stop", id))
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if _, err := s.write(keyEsc); err != nil {
		return providers.Receipt{}, core.NotSent(fmt.Errorf("send Esc to the Freebuff CLI: %w", err))
	}
	return b.receipt("stop", id, providers.StatusQueued, map[string]any{"pid": s.pid, "key": "Esc"}), nil
}

// Resume starts the conversation again with --continue <id> (completed
// at once when a usable session already runs it).
func (b *Backend) Resume(ctx context.Context, id string) (providers.Receipt, error) {
	if err := b.writesErr(); err != nil {
		return providers.Receipt{}, core.NotSent(err)
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
	if _, err := readChat(b.ChatsDir(), id, false); err != nil {
		return providers.Receipt{}, core.NotSent(err)
	}
	s, err := b.start(ctx, b.root, id)
	if err != nil {
		var se *ScreenError
		if errors.As(err, &se) {
			return providers.Receipt{}, &providers.RejectedError{Reason: se.Msg}
		}
		return providers.Receipt{}, core.NotSent(err)
	}
	return b.receipt("resume", id, providers.StatusCompleted, map[string]any{"pid": s.pid, "conversationId": id, "args": "--continue " + id}), nil
}

// CreateThread starts a new managed session.
func (b *Backend) CreateThread(ctx context.Context, opts core.CreateThreadOptions) (core.ThreadSummary, error) {
	dir := b.root
	if opts.ProjectPath != "" {
		if !filepath.IsAbs(opts.ProjectPath) {
			return core.ThreadSummary{}, core.NotSent(&core.InputError{Field: "cwd", Msg: "The Freebuff CLI working directory must be an absolute path"})
		}
		if st, err := os.Stat(opts.ProjectPath); err != nil || !st.IsDir() {
			return core.ThreadSummary{}, core.NotSent(&core.InputError{Field: "cwd", Msg: "The Freebuff CLI working directory does not exist: " + opts.ProjectPath})
		}
		if gitRoot(opts.ProjectPath) != gitRoot(b.root) {
			return core.ThreadSummary{}, core.NotSent(&core.InputError{Field: "cwd", Msg: "The Freebuff CLI is managed for project " + b.root + "; set FREEBUFF_PROJECT_ROOT to use another"})
		}
		dir = opts.ProjectPath
	}
	s, err := b.start(ctx, dir, "")
	if err != nil {
		return core.ThreadSummary{}, core.NotSent(err)
	}
	return core.ThreadSummary{ID: s.key, ProjectID: b.root, Title: "New Freebuff CLI session", State: b.threadState(s),
		Metadata: map[string]any{"live": true, "pid": s.pid}}, nil
}
