package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/agent-interop/runtime/internal/providers/freebuff/core"
	"github.com/agent-interop/runtime/internal/security"
)

// The CLI keeps each conversation in
// ~/.config/manicode/projects/<basename(root)>/chats/<id>/, where root is
// the git root of the working directory and <id> the start time in ISO form
// with ':' replaced by '-' (2026-09-24T14-27-03.512Z). The folder holds
// chat-messages.json, chat-meta.json, run-state.json and log.jsonl.
const (
	chatMessagesFile = "chat-messages.json"
	chatMetaFile     = "chat-meta.json"
	runStateFile     = "run-state.json"
	chatLogFile      = "log.jsonl"
	maxHistoryBytes  = 16 << 20
	firstPromptChars = 100
	turnFinishedMsg  = "Main prompt finished"
)

// manicodeDir is the CLI's configuration directory.
func manicodeDir(home string) string { return filepath.Join(home, ".config", "manicode") }

// gitRoot returns the nearest ancestor of dir (itself included) holding a
// .git entry, else dir: the CLI rebinds to the git root.
func gitRoot(dir string) string {
	d := filepath.Clean(dir)
	for {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		parent := filepath.Dir(d)
		if parent == d {
			return filepath.Clean(dir)
		}
		d = parent
	}
}

// projectKey is the history folder name for root: FREEBUFF_PROJECT_KEY when
// set to a safe id, else the plain basename of the git root.
func projectKey(override, root string) string {
	if override != "" && security.ValidateID(override) == nil {
		return override
	}
	return filepath.Base(gitRoot(root))
}

// chat is one CLI conversation read from history.
type chat struct {
	ID           string
	Dir          string
	MessageCount int
	FirstPrompt  string
	UpdatedAt    time.Time
	Messages     []any // only when loaded
	Finished     int   // turns that logged "Main prompt finished"
	RunState     bool  // run-state.json present
}

type chatMeta struct {
	MessageCount    *int     `json:"messageCount"`
	FirstPrompt     *string  `json:"firstPrompt"`
	MessagesSize    *int64   `json:"messagesSize"`
	MessagesMtimeMs *float64 `json:"messagesMtimeMs"`
}

// readBounded reads a history file of at most maxHistoryBytes.
func readBounded(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxHistoryBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxHistoryBytes {
		return nil, fmt.Errorf("%s exceeds %d bytes", filepath.Base(path), maxHistoryBytes)
	}
	return b, nil
}

// listChats reads every conversation folder of a chats directory, newest
// first. A missing directory is an empty history.
func listChats(dir string) ([]chat, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return []chat{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read Freebuff CLI history: %w", err)
	}
	out := []chat{}
	for _, e := range entries {
		if !e.IsDir() || security.ValidateID(e.Name()) != nil {
			continue
		}
		c, err := readChat(dir, e.Name(), false)
		if err != nil {
			continue
		}
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID > out[j].ID })
	return out, nil
}

// readChat reads one conversation; withMessages also returns the sanitized
// messages. chat-meta.json is trusted only while its messagesSize and
// messagesMtimeMs still match chat-messages.json.
func readChat(dir, id string, withMessages bool) (chat, error) {
	if err := security.ValidateID(id); err != nil {
		return chat{}, err
	}
	cdir := filepath.Join(dir, id)
	st, err := os.Stat(cdir)
	if err != nil || !st.IsDir() {
		return chat{}, &core.NotFoundError{Kind: "thread", ID: id}
	}
	c := chat{ID: id, Dir: cdir, UpdatedAt: st.ModTime()}
	mst, mErr := os.Stat(filepath.Join(cdir, chatMessagesFile))
	if mErr == nil && mst.ModTime().After(c.UpdatedAt) {
		c.UpdatedAt = mst.ModTime()
	}
	var meta chatMeta
	metaOK := false
	if b, err := readBounded(filepath.Join(cdir, chatMetaFile)); err == nil && json.Unmarshal(b, &meta) == nil &&
		meta.MessageCount != nil && mErr == nil {
		sizeOK := meta.MessagesSize == nil || *meta.MessagesSize == mst.Size()
		mtimeOK := meta.MessagesMtimeMs == nil || int64(*meta.MessagesMtimeMs) == mst.ModTime().UnixMilli()
		metaOK = sizeOK && mtimeOK
	}
	if metaOK {
		c.MessageCount = *meta.MessageCount
		if meta.FirstPrompt != nil {
			c.FirstPrompt = *meta.FirstPrompt
		}
	}
	if !metaOK || withMessages {
		msgs, err := readMessages(filepath.Join(cdir, chatMessagesFile))
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return chat{}, err
		}
		c.MessageCount = len(msgs)
		c.FirstPrompt = firstPrompt(msgs)
		if withMessages {
			c.Messages, _ = security.SanitizeFreebuff(msgs).([]any)
			if c.Messages == nil {
				c.Messages = []any{}
			}
		}
	}
	c.FirstPrompt = core.Cut(security.RedactString(c.FirstPrompt), firstPromptChars)
	c.Finished = countFinished(filepath.Join(cdir, chatLogFile))
	if _, err := os.Stat(filepath.Join(cdir, runStateFile)); err == nil {
		c.RunState = true
	}
	return c, nil
}

func readMessages(path string) ([]any, error) {
	b, err := readBounded(path)
	if err != nil {
		return nil, err
	}
	v, err := core.DecodeJSON(b)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", chatMessagesFile, err)
	}
	msgs, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("read %s: not an array", chatMessagesFile)
	}
	return msgs, nil
}

// firstPrompt is the first user message's content, cut to 100 characters.
func firstPrompt(msgs []any) string {
	for _, m := range msgs {
		mm := core.AsMap(m)
		if core.Str(mm["variant"]) == "user" {
			return core.Cut(strings.TrimSpace(core.Str(mm["content"])), firstPromptChars)
		}
	}
	return ""
}

// countFinished counts the turns log.jsonl marks as finished.
func countFinished(path string) int {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(io.LimitReader(f, 64<<20))
	sc.Buffer(make([]byte, 64*1024), 4<<20)
	needle := []byte(turnFinishedMsg)
	for sc.Scan() {
		line := sc.Bytes()
		if !bytes.Contains(line, needle) {
			continue
		}
		var rec struct {
			Msg string `json:"msg"`
		}
		if json.Unmarshal(line, &rec) == nil && rec.Msg == turnFinishedMsg {
			n++
		}
	}
	return n
}
