// Command fakefreebuff is a fake of the freebuff terminal UI for tests,
// driven through a real PTY. It follows the screens and the history layout
// of the real CLI (cursor-freebuff-protocols.md §3):
//
//   - flags --cwd <dir>, --continue [id], -v, -h and the login subcommand;
//   - "Connecting", then the model picker "Start coding for free" (Enter
//     starts the session), or the ready screen directly with --continue;
//   - the ready placeholder "Enter a coding task or / for commands"
//     ("Enter a coding task" under 65 columns), drawn with cursor movement
//     and colour sequences, and "working · Ns · ■ Esc" during a turn;
//   - the login gate ("Not authenticated", "Press ENTER to login...") when
//     ~/.config/manicode/credentials.json holds no token, and the
//     single-instance lock ("Freebuff is already running") for a live pid
//     in freebuff-instance-owner.json, taken over with Enter;
//   - bracketed paste, Ctrl-U, Enter, Esc (stops a running turn), /new,
//     /model and /end-session (back to the picker), /exit, and
//     `Command not found: "/x"`;
//   - history in ~/.config/manicode/projects/<basename(git root)>/chats/<id>/
//     with chat-messages.json, chat-meta.json, run-state.json and log.jsonl
//     ending each turn with "Main prompt finished".
//
// Switches: FAKEFREEBUFF_TURN_MS (turn length, default 0),
// FAKEFREEBUFF_EXPIRE_AFTER (turns before "Session ended"),
// FAKEFREEBUFF_NO_GIT_REBIND=1, and FAKEFREEBUFF_CHILD_PIDFILE (start a
// long-lived child process in the same process group and write its pid
// there, as the real CLI's helper processes would be).
//go:build unix

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

const version = "0.0.0-fake"

type chatMessage struct {
	ID        string `json:"id"`
	Variant   string `json:"variant"`
	Content   string `json:"content"`
	Timestamp int64  `json:"timestamp"`
}

type app struct {
	mu         sync.Mutex
	out        *os.File
	home       string
	project    string
	chatsDir   string
	chatID     string
	messages   []chatMessage
	screen     string // picker, ready, working, expired, login, lock
	input      []byte
	turnMs     int
	expire     int
	turns      int
	turnSeq    int
	cancelTurn chan struct{}
	lockOwned  bool
	narrow     bool
	model      string
}

func main() {
	args := os.Args[1:]
	cwd, _ := os.Getwd()
	var cont *string
	for i := 0; i < len(args); i++ {
		switch a := args[i]; a {
		case "-v", "--version":
			fmt.Println(version)
			return
		case "-h", "--help":
			fmt.Println("Usage: freebuff [--cwd <dir>] [--continue [id]] [login]")
			return
		case "--cwd":
			if i+1 < len(args) {
				cwd = args[i+1]
				i++
			}
		case "--continue":
			id := ""
			if i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
				id = args[i+1]
				i++
			}
			cont = &id
		case "login":
			fmt.Println("Press ENTER to login...")
			return
		default:
			fmt.Fprintf(os.Stderr, "unknown argument %s\n", a)
			os.Exit(2)
		}
	}
	if pidfile := os.Getenv("FAKEFREEBUFF_CHILD_PIDFILE"); pidfile != "" {
		// The child ignores SIGHUP, so only a signal to the whole process
		// group ends it when the terminal goes away.
		child := exec.Command("sh", "-c", `trap "" HUP; exec sleep 600`)
		if err := child.Start(); err == nil {
			_ = os.WriteFile(pidfile, []byte(strconv.Itoa(child.Process.Pid)), 0o644)
		}
	}
	home, _ := os.UserHomeDir()
	a := &app{out: os.Stdout, home: home, model: "z-ai/glm-5.3-flash"}
	a.turnMs, _ = strconv.Atoi(os.Getenv("FAKEFREEBUFF_TURN_MS"))
	a.expire, _ = strconv.Atoi(os.Getenv("FAKEFREEBUFF_EXPIRE_AFTER"))
	a.project = cwd
	if os.Getenv("FAKEFREEBUFF_NO_GIT_REBIND") != "1" {
		a.project = gitRoot(cwd)
	}
	a.chatsDir = filepath.Join(home, ".config", "manicode", "projects", filepath.Base(a.project), "chats")
	if ws, err := unix.IoctlGetWinsize(int(os.Stdout.Fd()), unix.TIOCGWINSZ); err == nil && ws.Col > 0 && ws.Col < 65 {
		a.narrow = true
	}
	restore := makeRaw(int(os.Stdin.Fd()))
	defer restore()
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGINT)
	go func() {
		<-sig
		a.exit(restore, 0)
	}()

	a.printf("\x1b[?1049h\x1b[?2004h\x1b[2J\x1b[H\x1b[36mConnecting\x1b[0m…\r\n")
	if !a.signedIn() {
		a.mu.Lock()
		a.screen = "login"
		a.mu.Unlock()
		a.printf("\x1b[2J\x1b[H\x1b[31mNot authenticated\x1b[0m\r\n\x1b[1mPress ENTER to login...\x1b[0m\r\n")
	} else if a.lockedByOther() {
		a.mu.Lock()
		a.screen = "lock"
		a.mu.Unlock()
		a.printf("\x1b[2J\x1b[H\x1b[33mFreebuff is already running\x1b[0m\r\nOnly one freebuff instance is allowed at a time.\r\nPress Enter to take over this instance.\r\n")
	} else {
		a.takeLock()
		a.afterLock(cont, restore)
	}
	a.inputLoop(cont, restore)
}

func (a *app) afterLock(cont *string, restore func()) {
	if cont != nil {
		id := *cont
		if id == "" {
			id = a.newestChat()
		}
		if id == "" || !a.loadChat(id) {
			a.printf("\r\nConversation not found: %s\r\n", id)
			a.exit(restore, 1)
		}
		a.mu.Lock()
		a.drawReadyLocked()
		a.mu.Unlock()
		return
	}
	a.mu.Lock()
	a.drawPickerLocked()
	a.mu.Unlock()
}

func (a *app) printf(format string, args ...any) {
	fmt.Fprintf(a.out, format, args...)
}

func (a *app) exit(restore func(), code int) {
	a.mu.Lock()
	if a.lockOwned {
		_ = os.Remove(a.lockFile())
	}
	a.mu.Unlock()
	a.printf("\x1b[?2004l\x1b[?1049l")
	restore()
	os.Exit(code)
}

// --- screens ---------------------------------------------------------------

func (a *app) drawPickerLocked() {
	a.screen = "picker"
	fmt.Fprint(a.out, "\x1b[2J\x1b[H\x1b[1;32mStart\x1b[0m\x1b[1Ccoding\x1b[1Cfor\x1b[1Cfree\r\n")
	fmt.Fprint(a.out, "  \x1b[7m1 Freebucks/hr\x1b[0m  z-ai/glm-5.3-flash\r\n  2 Freebucks/hr  anthropic/claude-sonnet-4.5\r\n")
}

func (a *app) drawReadyLocked() {
	if a.screen != "ready" && a.screen != "working" {
		fmt.Fprint(a.out, "\x1b[2J") // leaving the picker or another full screen
	}
	a.screen = "ready"
	placeholder := "Enter a coding task or / for commands"
	if a.narrow {
		placeholder = "Enter a coding task"
	}
	fmt.Fprintf(a.out, "\x1b[46;1H\x1b[2K\x1b[2m%s · 1h left · %s\x1b[0m", a.model, filepath.Base(a.project))
	// Draw the placeholder in two pieces with a cursor jump between them.
	half := len(placeholder) / 2
	fmt.Fprintf(a.out, "\x1b[48;3H\x1b[2K\x1b[90m%s\x1b[48;%dH%s\x1b[0m\x1b[48;3H", placeholder[:half], 3+half, placeholder[half:])
}

func (a *app) drawWorkingLocked(secs int) {
	a.screen = "working"
	fmt.Fprintf(a.out, "\x1b[47;1H\x1b[2K\x1b[33mworking · %ds · ■ Esc\x1b[0m", secs)
}

func (a *app) drawExpiredLocked() {
	a.screen = "expired"
	fmt.Fprint(a.out, "\x1b[2J\x1b[HSession ended  ·  3 Freebucks left\r\nPress Enter to continue in a new session\r\n")
}

// --- input -----------------------------------------------------------------

func (a *app) inputLoop(cont *string, restore func()) {
	chunks := make(chan []byte, 64)
	go func() {
		buf := make([]byte, 64*1024)
		for {
			n, err := os.Stdin.Read(buf)
			if n > 0 {
				chunks <- append([]byte(nil), buf[:n]...)
			}
			if err != nil {
				close(chunks)
				return
			}
		}
	}()
	var pending []byte
	inPaste := false
	for {
		chunk, ok := <-chunks
		if !ok {
			a.exit(restore, 0)
		}
		data := append(pending, chunk...)
		pending = nil
		// A trailing ESC may be the start of a sequence split across reads:
		// wait briefly for more before treating it as the Esc key.
		if len(data) > 0 && data[len(data)-1] == 0x1b {
			select {
			case more, ok := <-chunks:
				if ok {
					data = append(data, more...)
				}
			case <-time.After(30 * time.Millisecond):
			}
		}
		for i := 0; i < len(data); i++ {
			c := data[i]
			if c == 0x1b {
				if i+1 >= len(data) {
					if inPaste {
						pending = append(pending, c)
					} else {
						a.escape()
					}
					continue
				}
				if data[i+1] == '[' {
					j := i + 2
					for j < len(data) && !(data[j] >= 0x40 && data[j] <= 0x7e) {
						j++
					}
					if j >= len(data) {
						pending = append(pending, data[i:]...)
						break
					}
					seq := string(data[i+2 : j+1])
					switch seq {
					case "200~":
						inPaste = true
					case "201~":
						inPaste = false
					}
					i = j
					continue
				}
				a.escape()
				continue
			}
			if inPaste {
				a.mu.Lock()
				a.input = append(a.input, c)
				a.mu.Unlock()
				continue
			}
			switch c {
			case 0x03:
				a.exit(restore, 130)
			case 0x15:
				a.mu.Lock()
				a.input = a.input[:0]
				a.mu.Unlock()
			case '\r', '\n':
				a.enter(cont, restore)
			case 0x7f, 0x08:
				a.mu.Lock()
				if len(a.input) > 0 {
					a.input = a.input[:len(a.input)-1]
				}
				a.mu.Unlock()
			default:
				if c >= 0x20 {
					a.mu.Lock()
					a.input = append(a.input, c)
					a.mu.Unlock()
				}
			}
		}
	}
}

func (a *app) escape() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.screen == "working" && a.cancelTurn != nil {
		close(a.cancelTurn)
		a.cancelTurn = nil
	}
}

func (a *app) enter(cont *string, restore func()) {
	a.mu.Lock()
	screen := a.screen
	text := string(a.input)
	a.input = a.input[:0]
	a.mu.Unlock()
	switch screen {
	case "login":
		a.printf("\r\nWaiting for login in your browser…\r\n")
		return
	case "lock":
		a.takeLock()
		a.afterLock(cont, restore)
		return
	case "picker":
		a.mu.Lock()
		a.drawReadyLocked()
		a.mu.Unlock()
		return
	case "expired":
		a.mu.Lock()
		a.turns = 0
		a.chatID, a.messages = "", nil
		a.drawPickerLocked()
		a.mu.Unlock()
		return
	case "working":
		return // the real CLI queues; the fake ignores input during a turn
	}
	if strings.TrimSpace(text) == "" {
		return
	}
	if strings.HasPrefix(text, "/") {
		cmd := strings.Fields(text)[0]
		a.mu.Lock()
		defer a.mu.Unlock()
		switch cmd {
		case "/new", "/n", "/clear", "/c", "/reset":
			a.chatID, a.messages = "", nil
			a.drawReadyLocked()
		case "/model", "/end-session":
			a.chatID, a.messages = "", nil
			a.drawPickerLocked()
		case "/exit":
			a.mu.Unlock()
			a.exit(restore, 0)
		case "/help":
			fmt.Fprint(a.out, "\r\n/new /model /exit /help\r\n")
			a.drawReadyLocked()
		default:
			fmt.Fprintf(a.out, "\x1b[45;1H\x1b[31mCommand not found: %q\x1b[0m", cmd)
			a.drawReadyLocked()
		}
		return
	}
	a.startTurn(text)
}

// --- turns and history -----------------------------------------------------

func (a *app) startTurn(text string) {
	a.mu.Lock()
	if a.chatID == "" {
		a.chatID = strings.ReplaceAll(time.Now().UTC().Format("2006-01-02T15:04:05.000Z"), ":", "-")
		a.messages = nil
	}
	a.turnSeq++
	now := time.Now().UnixMilli()
	a.messages = append(a.messages, chatMessage{ID: fmt.Sprintf("m%d-u", a.turnSeq), Variant: "user", Content: text, Timestamp: now})
	a.writeHistoryLocked()
	a.appendLogLocked(map[string]any{"level": "DEBUG", "msg": "Main prompt started", "data": map[string]any{"prompt": len(text)}})
	a.drawWorkingLocked(0)
	cancel := make(chan struct{})
	a.cancelTurn = cancel
	turnMs := a.turnMs
	a.mu.Unlock()
	finish := func(cancelled bool) {
		a.mu.Lock()
		defer a.mu.Unlock()
		if cancelled {
			a.messages = append(a.messages, chatMessage{ID: fmt.Sprintf("m%d-a", a.turnSeq), Variant: "error", Content: "Stopped.", Timestamp: time.Now().UnixMilli()})
			a.writeHistoryLocked()
			a.appendLogLocked(map[string]any{"level": "INFO", "msg": "Main prompt cancelled"})
		} else {
			a.cancelTurn = nil
			reply := "Echo: " + text
			a.messages = append(a.messages, chatMessage{ID: fmt.Sprintf("m%d-a", a.turnSeq), Variant: "ai", Content: reply, Timestamp: time.Now().UnixMilli()})
			a.writeHistoryLocked()
			a.appendLogLocked(map[string]any{"level": "DEBUG", "msg": "step", "data": map[string]any{"shouldEndTurn": true, "fullResponse": reply}})
			a.appendLogLocked(map[string]any{"level": "INFO", "msg": "Main prompt finished"})
		}
		fmt.Fprint(a.out, "\x1b[47;1H\x1b[2K")
		a.turns++
		if a.expire > 0 && a.turns >= a.expire {
			a.drawExpiredLocked()
			return
		}
		a.drawReadyLocked()
	}
	if turnMs <= 0 {
		finish(false)
		return
	}
	go func() {
		select {
		case <-time.After(time.Duration(turnMs) * time.Millisecond):
			a.mu.Lock()
			stillOurs := a.cancelTurn == cancel
			a.mu.Unlock()
			if stillOurs {
				finish(false)
			}
		case <-cancel:
			finish(true)
		}
	}()
}

func (a *app) chatDir() string { return filepath.Join(a.chatsDir, a.chatID) }

func (a *app) writeHistoryLocked() {
	dir := a.chatDir()
	_ = os.MkdirAll(dir, 0o755)
	msgs, _ := json.Marshal(a.messages)
	msgFile := filepath.Join(dir, "chat-messages.json")
	_ = os.WriteFile(msgFile, msgs, 0o644)
	st, _ := os.Stat(msgFile)
	first := ""
	for _, m := range a.messages {
		if m.Variant == "user" {
			first = m.Content
			if r := []rune(first); len(r) > 100 {
				first = string(r[:100])
			}
			break
		}
	}
	meta := map[string]any{"messageCount": len(a.messages), "firstPrompt": first}
	if st != nil {
		meta["messagesSize"] = st.Size()
		meta["messagesMtimeMs"] = st.ModTime().UnixMilli()
	}
	b, _ := json.Marshal(meta)
	_ = os.WriteFile(filepath.Join(dir, "chat-meta.json"), b, 0o644)
	last := ""
	if n := len(a.messages); n > 0 {
		last = a.messages[n-1].Content
	}
	rs, _ := json.Marshal(map[string]any{
		"sessionState":   map[string]any{"fileContext": map[string]any{"cwd": a.project}, "mainAgentState": map[string]any{"agentType": "base"}},
		"output":         map[string]any{"type": "lastMessage", "value": last},
		"traceSessionId": "trace-" + a.chatID,
	})
	_ = os.WriteFile(filepath.Join(dir, "run-state.json"), rs, 0o644)
}

func (a *app) appendLogLocked(rec map[string]any) {
	rec["timestamp"] = time.Now().UTC().Format(time.RFC3339Nano)
	b, _ := json.Marshal(rec)
	f, err := os.OpenFile(filepath.Join(a.chatDir(), "log.jsonl"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	_, _ = f.Write(append(b, '\n'))
}

func (a *app) loadChat(id string) bool {
	b, err := os.ReadFile(filepath.Join(a.chatsDir, id, "chat-messages.json"))
	if err != nil {
		return false
	}
	var msgs []chatMessage
	if json.Unmarshal(b, &msgs) != nil {
		return false
	}
	a.mu.Lock()
	a.chatID, a.messages = id, msgs
	a.turnSeq = len(msgs)
	a.mu.Unlock()
	return true
}

func (a *app) newestChat() string {
	entries, err := os.ReadDir(a.chatsDir)
	if err != nil {
		return ""
	}
	var ids []string
	for _, e := range entries {
		if e.IsDir() {
			ids = append(ids, e.Name())
		}
	}
	sort.Strings(ids)
	if len(ids) == 0 {
		return ""
	}
	return ids[len(ids)-1]
}

// --- login and lock --------------------------------------------------------

func (a *app) signedIn() bool {
	b, err := os.ReadFile(filepath.Join(a.home, ".config", "manicode", "credentials.json"))
	if err != nil {
		return false
	}
	var c struct {
		Default struct {
			AuthToken string `json:"authToken"`
		} `json:"default"`
	}
	return json.Unmarshal(b, &c) == nil && c.Default.AuthToken != ""
}

func (a *app) lockFile() string {
	return filepath.Join(a.home, ".config", "manicode", "freebuff-instance-owner.json")
}

func (a *app) lockedByOther() bool {
	b, err := os.ReadFile(a.lockFile())
	if err != nil {
		return false
	}
	var l struct {
		PID int `json:"pid"`
	}
	if json.Unmarshal(b, &l) != nil || l.PID <= 0 || l.PID == os.Getpid() {
		return false
	}
	return syscall.Kill(l.PID, 0) == nil
}

func (a *app) takeLock() {
	_ = os.MkdirAll(filepath.Dir(a.lockFile()), 0o755)
	b, _ := json.Marshal(map[string]any{"instanceId": fmt.Sprintf("fake-%d", os.Getpid()), "pid": os.Getpid()})
	_ = os.WriteFile(a.lockFile(), b, 0o644)
	a.mu.Lock()
	a.lockOwned = true
	a.mu.Unlock()
}

func gitRoot(dir string) string {
	d := filepath.Clean(dir)
	for {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		p := filepath.Dir(d)
		if p == d {
			return filepath.Clean(dir)
		}
		d = p
	}
}

// makeRaw puts the terminal in raw mode and returns the restore function.
func makeRaw(fd int) func() {
	old, err := unix.IoctlGetTermios(fd, ioctlGetTermios)
	if err != nil {
		return func() {}
	}
	raw := *old
	raw.Iflag &^= unix.IGNBRK | unix.BRKINT | unix.PARMRK | unix.ISTRIP | unix.INLCR | unix.IGNCR | unix.ICRNL | unix.IXON
	raw.Oflag &^= unix.OPOST
	raw.Lflag &^= unix.ECHO | unix.ECHONL | unix.ICANON | unix.ISIG | unix.IEXTEN
	raw.Cflag &^= unix.CSIZE | unix.PARENB
	raw.Cflag |= unix.CS8
	raw.Cc[unix.VMIN] = 1
	raw.Cc[unix.VTIME] = 0
	if err := unix.IoctlSetTermios(fd, ioctlSetTermios, &raw); err != nil {
		return func() {}
	}
	return func() { _ = unix.IoctlSetTermios(fd, ioctlSetTermios, old) }
}
