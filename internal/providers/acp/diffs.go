package acp

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	udiff "github.com/aymanbagabas/go-udiff"

	"github.com/agent-interop/runtime/internal/lazy"
)

// The ACP session diff: ACP has no diff request, but an agent's edit tools
// report what they changed as `diff` content items ({path, oldText,
// newText}) of their tool_call and tool_call_update notifications
// (claude-agent-acp sends them for Write and Edit; on completion Edit's
// items are the applied hunks with context, located by `locations[].line`).
// The runtime records them as it observes them and builds the diff of a
// turn from the tool calls that completed: pending, in-progress and failed
// (for example rejected) calls are left out.

// Bounds of what is kept per session.
const (
	maxToolCalls = 512 // tool calls remembered per session
	maxDiffTurns = 16  // turns whose tool calls are remembered
)

// FileDiff is one file's changes in a turn, as a unified diff.
type FileDiff struct {
	Path      string   `json:"path"`
	Patch     string   `json:"patch"`
	Additions int      `json:"additions"`
	Deletions int      `json:"deletions"`
	ToolCalls []string `json:"toolCalls"`
	// NewFile says the first change created the file (oldText null).
	NewFile bool `json:"newFile,omitempty"`
}

// DiffResult is what Diff returns for an ACP session.
type DiffResult struct {
	NativeID string `json:"nativeId"`
	// TurnID is the prompt the diff belongs to (the receipt's nativeTurnId).
	TurnID string `json:"turnId,omitempty"`
	// Observed is false when this runtime saw no completed tool call with
	// diff content for the session (or turn).
	Observed bool       `json:"observed"`
	Files    []FileDiff `json:"files"`
	// Diff is every file's patch, concatenated.
	Diff string `json:"diff"`
	// Skipped lists tool calls with diff content that did not complete
	// (pending, in_progress or failed), whose changes are not in Diff.
	Skipped []SkippedCall `json:"skipped,omitempty"`
	Source  string        `json:"source"`
	Note    string        `json:"note,omitempty"`
}

// SkippedCall is a tool call whose diff content was left out.
type SkippedCall struct {
	ToolCallID string `json:"toolCallId"`
	Status     string `json:"status"`
	Title      string `json:"title,omitempty"`
}

// diffSource is the fixed Source of ACP diffs.
const diffSource = "ACP tool_call/tool_call_update diff content observed by this runtime"

// diffNote says how hunk positions are known.
const diffNote = "hunk positions come from the agent's reported line of each edit (the new file's numbering); " +
	"an edit reported without a line is numbered from the start of the edited text"

// edit is one diff content item.
type edit struct {
	Path string
	Old  *string
	New  string
	Line int // 1-based line of the edit in the new file; 0 unknown
}

type toolCall struct {
	id, title, status, turn string
	edits                   []edit
	at                      time.Time
}

type sessionCalls struct {
	calls map[string]*toolCall
	order []string // tool call ids, oldest first
}

// diffBook records the diff-bearing tool calls of every session, across
// agent restarts (like Codex's turn diffs, only what this runtime saw).
type diffBook struct {
	mu       sync.Mutex
	sessions map[string]*sessionCalls
}

func newDiffBook() *diffBook { return &diffBook{sessions: map[string]*sessionCalls{}} }

type wireToolCall struct {
	ToolCallID string          `json:"toolCallId"`
	Title      *string         `json:"title"`
	Status     *string         `json:"status"`
	Content    json.RawMessage `json:"content"`
	Locations  json.RawMessage `json:"locations"`
}

type wireContent struct {
	Type    string  `json:"type"`
	Path    string  `json:"path"`
	OldText *string `json:"oldText"`
	NewText *string `json:"newText"`
}

type wireLocation struct {
	Path string `json:"path"`
	Line *int   `json:"line"`
}

// observe records one session/update; only tool_call and tool_call_update
// matter.
func (b *diffBook) observe(sessionID, kind string, update json.RawMessage, turn string, now time.Time) {
	if kind != "tool_call" && kind != "tool_call_update" {
		return
	}
	var u wireToolCall
	if json.Unmarshal(update, &u) != nil || u.ToolCallID == "" {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	sc := b.sessions[sessionID]
	if sc == nil {
		if len(b.sessions) > 4096 {
			b.sessions = map[string]*sessionCalls{}
		}
		sc = &sessionCalls{calls: map[string]*toolCall{}}
		b.sessions[sessionID] = sc
	}
	tc := sc.calls[u.ToolCallID]
	if tc == nil || kind == "tool_call" {
		if tc == nil {
			sc.order = append(sc.order, u.ToolCallID)
		}
		tc = &toolCall{id: u.ToolCallID, status: "pending", turn: turn}
		sc.calls[u.ToolCallID] = tc
		sc.trim()
	}
	if tc.turn == "" {
		tc.turn = turn
	}
	tc.at = now
	if u.Title != nil {
		tc.title = *u.Title
	}
	if u.Status != nil && *u.Status != "" {
		tc.status = *u.Status
	}
	if len(u.Content) > 0 && string(u.Content) != "null" {
		// "Replace the content collection." A replacement without diff
		// items (a failed call's error text, a tool's output) keeps the
		// last diff seen: it is what the call would change, or changed.
		if edits := decodeEdits(u.Content, u.Locations); len(edits) > 0 {
			tc.edits = edits
		}
	}
}

func (sc *sessionCalls) trim() {
	for len(sc.order) > maxToolCalls {
		delete(sc.calls, sc.order[0])
		sc.order = sc.order[1:]
	}
	turns := map[string]bool{}
	for i := len(sc.order) - 1; i >= 0; i-- {
		tc := sc.calls[sc.order[i]]
		turns[tc.turn] = true
		if len(turns) > maxDiffTurns {
			for _, id := range sc.order[:i+1] {
				delete(sc.calls, id)
			}
			sc.order = sc.order[i+1:]
			return
		}
	}
}

func decodeEdits(content, locations json.RawMessage) []edit {
	var items []wireContent
	if json.Unmarshal(content, &items) != nil {
		return nil
	}
	var locs []wireLocation
	_ = json.Unmarshal(locations, &locs)
	var out []edit
	for _, it := range items {
		if it.Type != "diff" || it.Path == "" || it.NewText == nil {
			continue
		}
		e := edit{Path: it.Path, Old: it.OldText, New: *it.NewText}
		// claude-agent-acp sends one location per diff item, in order.
		if n := len(out); n < len(locs) && locs[n].Line != nil && locs[n].Path == it.Path {
			e.Line = *locs[n].Line
		}
		out = append(out, e)
	}
	return out
}

// diff builds the diff of turn (the latest turn with diff content when
// turn is "").
// knows reports whether any tool call of the session was observed.
func (b *diffBook) knows(sessionID string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.sessions[sessionID] != nil
}

func (b *diffBook) diff(sessionID, turn, cwd string) (DiffResult, bool) {
	res := DiffResult{NativeID: sessionID, Files: []FileDiff{}, Source: diffSource}
	b.mu.Lock()
	defer b.mu.Unlock()
	sc := b.sessions[sessionID]
	if sc == nil {
		return res, turn == ""
	}
	if turn == "" {
		for i := len(sc.order) - 1; i >= 0 && turn == ""; i-- {
			if tc := sc.calls[sc.order[i]]; len(tc.edits) > 0 {
				turn = tc.turn
			}
		}
		if turn == "" {
			return res, true
		}
	}
	res.TurnID = turn
	known := false
	byPath := map[string]*FileDiff{}
	var paths []string
	for _, id := range sc.order {
		tc := sc.calls[id]
		if tc.turn != turn {
			continue
		}
		known = true
		if len(tc.edits) == 0 {
			continue
		}
		if tc.status != "completed" {
			res.Skipped = append(res.Skipped, SkippedCall{ToolCallID: tc.id, Status: tc.status, Title: tc.title})
			continue
		}
		for _, e := range tc.edits {
			label := displayPath(e.Path, cwd)
			fd := byPath[label]
			if fd == nil {
				fd = &FileDiff{Path: label, NewFile: e.Old == nil}
				byPath[label] = fd
				paths = append(paths, label)
			}
			hunks, add, del := hunksOf(e)
			fd.Patch += hunks
			fd.Additions += add
			fd.Deletions += del
			if n := len(fd.ToolCalls); n == 0 || fd.ToolCalls[n-1] != tc.id {
				fd.ToolCalls = append(fd.ToolCalls, tc.id)
			}
		}
	}
	var all strings.Builder
	for _, p := range paths {
		fd := byPath[p]
		old := "a/" + fd.Path
		if fd.NewFile {
			old = "/dev/null"
		}
		fd.Patch = fmt.Sprintf("--- %s\n+++ b/%s\n", old, fd.Path) + fd.Patch
		all.WriteString(fd.Patch)
		res.Files = append(res.Files, *fd)
	}
	res.Diff = all.String()
	res.Observed = len(res.Files) > 0
	if res.Observed {
		res.Note = diffNote
	}
	return res, known
}

var hunkHeader = lazy.Regexp{Expr: `(?m)^@@ -(\d+)(,\d+)? \+(\d+)(,\d+)? @@`}

// hunksOf renders one edit as unified hunks (without file headers), placed
// at the edit's line, and counts its added and deleted lines.
func hunksOf(e edit) (string, int, int) {
	old := ""
	if e.Old != nil {
		old = withNewline(*e.Old)
	}
	text := udiff.Unified("a", "b", old, withNewline(e.New))
	if i := strings.Index(text, "@@"); i >= 0 {
		text = text[i:]
	} else {
		return "", 0, 0
	}
	if e.Line > 1 {
		off := e.Line - 1
		text = hunkHeader.Get().ReplaceAllStringFunc(text, func(h string) string {
			m := hunkHeader.Get().FindStringSubmatch(h)
			from, _ := strconv.Atoi(m[1])
			to, _ := strconv.Atoi(m[3])
			if from > 0 {
				from += off
			}
			if to > 0 {
				to += off
			}
			return fmt.Sprintf("@@ -%d%s +%d%s @@", from, m[2], to, m[4])
		})
	}
	add, del := 0, 0
	for _, l := range strings.Split(text, "\n") {
		switch {
		case strings.HasPrefix(l, "+"):
			add++
		case strings.HasPrefix(l, "-"):
			del++
		}
	}
	return text, add, del
}

func withNewline(s string) string {
	if s != "" && !strings.HasSuffix(s, "\n") {
		return s + "\n"
	}
	return s
}

// displayPath shows a path relative to the workspace when it is inside it.
func displayPath(p, cwd string) string {
	if cwd != "" && filepath.IsAbs(p) {
		if rel, err := filepath.Rel(cwd, p); err == nil && !strings.HasPrefix(rel, "..") {
			return filepath.ToSlash(rel)
		}
	}
	return filepath.ToSlash(strings.TrimPrefix(p, "/"))
}
