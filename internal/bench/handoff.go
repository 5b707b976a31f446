package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-interop/runtime/internal/testutil/fakemodel"
	"github.com/agent-interop/runtime/internal/testutil/realpeers"
)

// HandoffConfig is one `interop-bench handoff` run.
type HandoffConfig struct {
	ModuleDir   string
	TurnTimeout time.Duration // one provider turn at most
	Progress    io.Writer
}

// HandoffReport is the handoff benchmark's result: three fixed tasks run
// through the real store and registry (the built runtime over stdio)
// against the real OpenCode, Codex and Claude Code programs on the
// project's fake model.
type HandoffReport struct {
	Date      string       `json:"date"`
	Source    string       `json:"source,omitempty"`
	OS        string       `json:"os"`
	Tokenizer string       `json:"tokenizer"`
	Seconds   Figure       `json:"seconds"`
	Tasks     []TaskResult `json:"tasks"`
}

// TaskResult is one task's figures.
type TaskResult struct {
	Task    string `json:"task"`
	From    string `json:"from"` // provider of the sending session
	To      string `json:"to"`   // provider of the receiving session
	Steps   int    `json:"steps"`
	Bytes   int    `json:"payloadBytes"`  // every answer's text content
	Tokens  int    `json:"payloadTokens"` // its o200k tokens
	Packets []Size `json:"packets"`       // handoff packets delivered
	Calls   []Size `json:"answers"`       // every answer, in call order
	// DuplicateEventReads counts events a paged read delivered again.
	DuplicateEventReads int `json:"duplicateEventReads"`
	// Prompts counts turn-starting requests at the model carrying one of
	// the task's sends; ProviderSends the sends the task made.
	Prompts                int `json:"promptsObservedAtModel"`
	ProviderSends          int `json:"providerSends"`
	DuplicateProviderSends int `json:"duplicateProviderSends"`
	// DuplicateDeliveries counts conversation messages stored or
	// delivered more than once.
	DuplicateDeliveries int               `json:"duplicateDeliveries"`
	Final               map[string]string `json:"finalStates"`
	Seconds             Figure            `json:"seconds"`
	Skipped             string            `json:"skipped,omitempty"`
	Error               string            `json:"error,omitempty"`
}

// Size is one answer's or packet's size.
type Size struct {
	Tool   string `json:"tool"`
	Bytes  int    `json:"bytes"`
	Tokens int    `json:"tokens"`
}

// Failed reports a task that broke the gate: an error, a duplicate send,
// delivery or event read.
func (t TaskResult) Failed() bool {
	return t.Error != "" || t.DuplicateEventReads != 0 || t.DuplicateProviderSends != 0 || t.DuplicateDeliveries != 0 ||
		(t.Skipped == "" && (t.Bytes <= 0 || t.Tokens <= 0))
}

// Gate returns the reasons the report fails `interop-bench check`; a task
// skipped because its program is missing fails only in CI.
func (r *HandoffReport) Gate() []string {
	var out []string
	for _, t := range r.Tasks {
		switch {
		case t.Skipped != "" && realpeers.InCI():
			out = append(out, fmt.Sprintf("%s skipped in CI: %s", t.Task, t.Skipped))
		case t.Error != "":
			out = append(out, fmt.Sprintf("%s failed: %s", t.Task, t.Error))
		case t.Skipped != "":
		case t.Failed():
			out = append(out, fmt.Sprintf("%s: %d duplicate provider sends, %d duplicate deliveries, %d duplicate event reads (all must be 0)",
				t.Task, t.DuplicateProviderSends, t.DuplicateDeliveries, t.DuplicateEventReads))
		}
	}
	if !strings.Contains(r.Tokenizer, "o200k_base") || !strings.Contains(r.Tokenizer, "not native provider usage") {
		out = append(out, "tokenizer label must name o200k_base and say it is not native provider usage")
	}
	return out
}

// handoffEnv is one run's processes: the fake model, `opencode serve` and
// the runtime over stdio.
type handoffEnv struct {
	cfg     HandoffConfig
	fm      *fakemodel.Server
	oc      *realpeers.OpenCodeServer
	cs      *mcp.ClientSession
	counter Counter
	dir     string
	missing map[realpeers.Program]string
}

// RunHandoff builds the runtime, starts the peers and runs the three tasks
// one after the other.
func RunHandoff(ctx context.Context, c HandoffConfig) (*HandoffReport, error) {
	if c.TurnTimeout <= 0 {
		c.TurnTimeout = 60 * time.Second
	}
	if c.Progress == nil {
		c.Progress = io.Discard
	}
	started := time.Now()
	tmp, err := os.MkdirTemp("", "interop-bench-handoff-")
	if err != nil {
		return nil, fmt.Errorf("create a temporary directory: %w", err)
	}
	defer os.RemoveAll(tmp)
	fmt.Fprintf(c.Progress, "building %s…\n", runtimePkg)
	bin, _, err := Build(ctx, c.ModuleDir, filepath.Join(tmp, "bin"))
	if err != nil {
		return nil, err
	}
	counter, err := NewO200kCounter()
	if err != nil {
		return nil, err
	}
	e := &handoffEnv{cfg: c, counter: counter, dir: tmp, missing: map[realpeers.Program]string{}}
	defer e.close()
	if err := e.start(ctx, bin); err != nil {
		return nil, err
	}
	rep := &HandoffReport{
		Date: started.UTC().Format(time.RFC3339), Source: sourceRevision(ctx, c.ModuleDir),
		OS: runtime.GOOS + "/" + runtime.GOARCH, Tokenizer: "tiktoken-go o200k_base (offline estimate, not native provider usage)",
	}
	for _, task := range []struct {
		name, from, to string
		needs          []realpeers.Program
		run            func(context.Context, *taskRun) error
	}{
		{"implement-and-hand-off", "codex", "claude-code", []realpeers.Program{realpeers.Codex, realpeers.ClaudeACP}, implementAndHandOff},
		{"review-hotfix", "opencode", "claude-code", []realpeers.Program{realpeers.OpenCode, realpeers.ClaudeACP}, reviewHotfix},
		{"blocked-then-resume", "codex", "claude-code", []realpeers.Program{realpeers.Codex, realpeers.ClaudeACP}, blockedThenResume},
	} {
		res := TaskResult{Task: task.name, From: task.from, To: task.to, Final: map[string]string{}}
		for _, p := range task.needs {
			if why, ok := e.missing[p]; ok {
				res.Skipped = why
			}
		}
		if res.Skipped == "" {
			fmt.Fprintf(c.Progress, "task %s (%s → %s)…\n", task.name, task.from, task.to)
			t0 := time.Now()
			tr := &taskRun{env: e, res: &res, seen: map[string]map[int64]bool{}}
			if err := task.run(ctx, tr); err != nil {
				res.Error = err.Error()
			}
			tr.finish()
			res.Seconds = Figure(time.Since(t0).Seconds())
		} else {
			fmt.Fprintf(c.Progress, "task %s skipped: %s\n", task.name, res.Skipped)
		}
		rep.Tasks = append(rep.Tasks, res)
	}
	rep.Seconds = Figure(time.Since(started).Seconds())
	return rep, nil
}

func (e *handoffEnv) start(ctx context.Context, bin string) error {
	fm, err := fakemodel.Start()
	if err != nil {
		return err
	}
	e.fm = fm
	fm.SetDefault(fakemodel.Text("Done; nothing else to report."))
	env, err := realpeers.NewEnvAt(filepath.Join(e.dir, "runtime"))
	if err != nil {
		return err
	}
	env.Set("INTEROP_DB", filepath.Join(env.Root(), "interop.db")).
		Set("INTEROP_ALLOW_VERIFICATION", "1").
		Set("INTEROP_PROJECT_ROOTS", filepath.Join(e.dir, "work"))
	if program, err := realpeers.Find(realpeers.OpenCode); err == nil {
		ocEnv, err := realpeers.NewEnvAt(filepath.Join(e.dir, "opencode"))
		if err != nil {
			return err
		}
		if err := realpeers.SetOpenCode(ocEnv, realpeers.OpenCodeConfig(fm.BaseURL())); err != nil {
			return err
		}
		fmt.Fprintln(e.cfg.Progress, "starting opencode serve…")
		sctx, cancel := context.WithTimeout(ctx, time.Minute)
		e.oc, err = realpeers.StartOpenCode(sctx, realpeers.OpenCodeOptions{Program: program, Env: ocEnv, Password: "bench-s3cret"})
		cancel()
		if err != nil {
			return fmt.Errorf("start opencode serve: %w", err)
		}
		env.Set("OPENCODE_SERVER_URL", e.oc.URL).Set("OPENCODE_SERVER_PASSWORD", "bench-s3cret").Set("OPENCODE_AUTO_START", "false")
	} else {
		e.missing[realpeers.OpenCode] = err.Error()
	}
	if program, err := realpeers.Find(realpeers.Codex); err == nil {
		home := filepath.Join(env.Home(), ".codex")
		if err := os.MkdirAll(home, 0o700); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(realpeers.CodexConfig(fm.BaseURL())), 0o600); err != nil {
			return err
		}
		env.Set("CODEX_HOME", home).Set("CODEX_APP_SERVER_COMMAND", program+" app-server --disable plugins").
			Set("CODEX_APPROVAL_POLICY", "never").Set("CODEX_SANDBOX_MODE", "workspace-write")
	} else {
		e.missing[realpeers.Codex] = err.Error()
	}
	if program, err := realpeers.Find(realpeers.ClaudeACP); err == nil {
		env.Set("CLAUDE_ACP_COMMAND", program).Set("IS_SANDBOX", "1").Set("DISABLE_AUTOUPDATER", "1").
			Set("DISABLE_TELEMETRY", "1").Set("DISABLE_ERROR_REPORTING", "1").
			Set("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1").
			Set("ANTHROPIC_BASE_URL", fm.URL()).Set("ANTHROPIC_API_KEY", "test")
	} else {
		e.missing[realpeers.ClaudeACP] = err.Error()
	}
	cmd := exec.Command(bin, "serve")
	cmd.Env = env.Environ()
	client := mcp.NewClient(&mcp.Implementation{Name: "interop-bench-handoff", Version: "1"}, nil)
	cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	e.cs, err = client.Connect(cctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		return fmt.Errorf("connect to the runtime: %w", err)
	}
	return nil
}

func (e *handoffEnv) close() {
	if e.cs != nil {
		e.cs.Close()
	}
	if e.oc != nil {
		e.oc.Close()
	}
	if e.fm != nil {
		e.fm.Close()
	}
}

// taskRun is one task in progress: every call goes through it, so its
// steps, answer sizes, sends and event reads are counted.
type taskRun struct {
	env   *handoffEnv
	res   *TaskResult
	tags  []string                  // the unique text of every send of the task
	seen  map[string]map[int64]bool // event sequences read, by session
	convs []string                  // conversations to check for duplicate messages
}

var tagN atomic.Int64

// tag returns a word no other send uses (the fake model matches on it).
func tag(word string) string {
	return fmt.Sprintf("%s-%d-%d", word, time.Now().UnixNano()%1e9, tagN.Add(1))
}

// call makes one tool call, counts it and decodes the answer into out.
func (r *taskRun) call(ctx context.Context, tool string, args map[string]any, out any) error {
	cctx, cancel := context.WithTimeout(ctx, r.env.cfg.TurnTimeout+30*time.Second)
	defer cancel()
	res, err := r.env.cs.CallTool(cctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		return fmt.Errorf("%s: %w", tool, err)
	}
	if len(res.Content) == 0 {
		return fmt.Errorf("%s answered no content", tool)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	r.res.Steps++
	n, err := r.env.counter.Count(text)
	if err != nil {
		return err
	}
	r.res.Bytes += len(text)
	r.res.Tokens += n
	r.res.Calls = append(r.res.Calls, Size{Tool: tool, Bytes: len(text), Tokens: n})
	if tool == "get_handoff_packet" {
		r.res.Packets = append(r.res.Packets, Size{Tool: tool, Bytes: len(text), Tokens: n})
	}
	if res.IsError {
		return fmt.Errorf("%s: %s", tool, truncate([]byte(text), 300))
	}
	if out != nil {
		if err := json.Unmarshal([]byte(text), out); err != nil {
			return fmt.Errorf("%s: decode %s: %w", tool, truncate([]byte(text), 200), err)
		}
	}
	return nil
}

type benchSession struct {
	Provider string `json:"provider"`
	NativeID string `json:"nativeId"`
	ID       string `json:"id"`
}

func (r *taskRun) createSession(ctx context.Context, provider, title string) (benchSession, error) {
	dir := filepath.Join(r.env.dir, "work", tag(provider))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return benchSession{}, err
	}
	if out, err := exec.CommandContext(ctx, "git", "init", "-q", dir).CombinedOutput(); err != nil {
		return benchSession{}, fmt.Errorf("git init: %v: %s", err, out)
	}
	var s benchSession
	err := r.call(ctx, "create_session", map[string]any{"provider": provider, "cwd": dir, "title": title}, &s)
	if err == nil && s.NativeID == "" {
		err = fmt.Errorf("create_session %s answered no nativeId", provider)
	}
	return s, err
}

type benchEvent struct {
	Sequence int64           `json:"sequence"`
	Type     string          `json:"type"`
	Data     json.RawMessage `json:"data"`
}

// events reads one page (limit 2, waiting 50 ms: the upstream harness's
// polling) and counts events delivered twice.
func (r *taskRun) events(ctx context.Context, s benchSession, after int64, wait time.Duration) ([]benchEvent, int64, int64, error) {
	var page struct {
		Events []benchEvent `json:"events"`
		Next   int64        `json:"next"`
		Epoch  int64        `json:"epoch"`
	}
	err := r.call(ctx, "read_session_events", map[string]any{"provider": s.Provider, "nativeId": s.NativeID,
		"afterSequence": after, "limit": 2, "timeoutMs": wait.Milliseconds()}, &page)
	seen := r.seen[s.ID]
	if seen == nil {
		seen = map[int64]bool{}
		r.seen[s.ID] = seen
	}
	for _, ev := range page.Events {
		if seen[ev.Sequence] {
			r.res.DuplicateEventReads++
		}
		seen[ev.Sequence] = true
	}
	return page.Events, page.Next, page.Epoch, err
}

// openEvents makes the runtime open the session's event stream (epoch 1)
// before a turn starts and returns the cursor.
func (r *taskRun) openEvents(ctx context.Context, s benchSession) (int64, error) {
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, next, epoch, err := r.events(ctx, s, 0, 0)
		if err != nil || epoch >= 1 {
			return next, err
		}
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("the %s event stream did not open", s.Provider)
		}
	}
}

// turnEnds reports the event that ends a provider's turn.
func turnEnds(provider string, ev benchEvent) bool {
	switch provider {
	case "codex":
		return ev.Type == "turn/completed"
	case "opencode":
		return ev.Type == "session.idle"
	default:
		return ev.Type == "session/prompt"
	}
}

// awaitTurn pages the session's events after the cursor, two at a time
// with 50 ms waits, until the turn ends; it returns the cursor after it.
func (r *taskRun) awaitTurn(ctx context.Context, s benchSession, after int64) (int64, error) {
	deadline := time.Now().Add(r.env.cfg.TurnTimeout)
	for time.Now().Before(deadline) {
		evs, next, _, err := r.events(ctx, s, after, 50*time.Millisecond)
		if err != nil {
			return after, err
		}
		for _, ev := range evs {
			if turnEnds(s.Provider, ev) {
				// Continue after the whole page: events that came after
				// the turn's end on the same page were read already, and
				// reading from the end event would ask for them again.
				return next, nil
			}
		}
		after = next
	}
	return after, fmt.Errorf("no end of the %s turn within %s", s.Provider, r.env.cfg.TurnTimeout)
}

// send prompts a session with a unique tag and reply.
func (r *taskRun) send(ctx context.Context, s benchSession, word, reply string) error {
	t := tag(word)
	r.tags = append(r.tags, t)
	r.env.fm.On(fakemodel.Contains(t), fakemodel.Text(reply))
	r.res.ProviderSends++
	var rec struct {
		Accepted bool   `json:"accepted"`
		Status   string `json:"status"`
	}
	if err := r.call(ctx, "send_session_message", map[string]any{"provider": s.Provider, "nativeId": s.NativeID, "text": t + ": " + reply}, &rec); err != nil {
		return err
	}
	if !rec.Accepted {
		return fmt.Errorf("send to %s was not accepted: %+v", s.Provider, rec)
	}
	return nil
}

type benchMessage struct {
	ID             string `json:"id"`
	Delivery       string `json:"delivery"`
	IdempotencyKey string `json:"idempotencyKey"`
	Text           string `json:"text"`
}

// message sends a directed conversation message with a unique tag, waits
// for the recipient's turn to end (after the cursor) and until the
// message's delivery completed; it returns the recipient's cursor.
func (r *taskRun) message(ctx context.Context, conv string, from, to benchSession, cursor int64, word, reply string) (int64, error) {
	t := tag(word)
	r.tags = append(r.tags, t)
	r.env.fm.On(fakemodel.Contains(t), fakemodel.Text(reply))
	r.res.ProviderSends++
	var sent struct {
		Message struct {
			ID       string `json:"id"`
			Sequence int64  `json:"sequence"`
		} `json:"message"`
	}
	if err := r.call(ctx, "send_conversation_message", map[string]any{"conversationId": conv, "sender": from.ID, "recipient": to.ID,
		"text": t + ": " + reply, "idempotencyKey": t}, &sent); err != nil {
		return cursor, err
	}
	cursor, err := r.awaitTurn(ctx, to, cursor)
	if err != nil {
		return cursor, err
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		var page struct {
			Messages []benchMessage `json:"messages"`
		}
		if err := r.call(ctx, "read_conversation", map[string]any{"conversationId": conv, "after": sent.Message.Sequence - 1, "limit": 1}, &page); err != nil {
			return cursor, err
		}
		if len(page.Messages) == 1 && page.Messages[0].Delivery == "completed" {
			return cursor, nil
		}
		if len(page.Messages) == 1 && page.Messages[0].Delivery != "queued" {
			return cursor, fmt.Errorf("message %s delivery %s", sent.Message.ID, page.Messages[0].Delivery)
		}
		if time.Now().After(deadline) {
			return cursor, fmt.Errorf("message %s not completed 10 s after the recipient's turn ended", sent.Message.ID)
		}
		time.Sleep(100 * time.Millisecond) // the receipt is settled just after the turn's end
	}
}

// transcript reads a conversation page by page (limit 2, with cursor).
func (r *taskRun) transcript(ctx context.Context, conv string) ([]benchMessage, error) {
	var out []benchMessage
	cursor := ""
	for pages := 0; pages < 1000; pages++ {
		args := map[string]any{"conversationId": conv, "limit": 2}
		if cursor != "" {
			args["cursor"] = cursor
		}
		var page struct {
			Messages   []benchMessage `json:"messages"`
			NextCursor string         `json:"nextCursor"`
		}
		if err := r.call(ctx, "read_conversation", args, &page); err != nil {
			return nil, err
		}
		out = append(out, page.Messages...)
		if page.NextCursor == "" {
			return out, nil
		}
		cursor = page.NextCursor
	}
	return nil, errors.New("read_conversation never ended")
}

// conversation creates a conversation with both sessions as participants.
func (r *taskRun) conversation(ctx context.Context, title string, a, b benchSession) (string, error) {
	var conv struct {
		ID string `json:"id"`
	}
	if err := r.call(ctx, "create_conversation", map[string]any{"title": title}, &conv); err != nil {
		return "", err
	}
	for _, s := range []benchSession{a, b} {
		if err := r.call(ctx, "join_conversation", map[string]any{"conversationId": conv.ID, "provider": s.Provider, "nativeId": s.NativeID}, nil); err != nil {
			return "", err
		}
	}
	r.convs = append(r.convs, conv.ID)
	return conv.ID, nil
}

// finish counts what the model saw and the duplicates.
func (r *taskRun) finish() {
	for _, t := range r.tags {
		n := r.env.fm.Count(t)
		r.res.Prompts += n
		if n > 1 {
			r.res.DuplicateProviderSends += n - 1
		}
	}
	for _, conv := range r.convs {
		msgs, err := r.transcript(context.Background(), conv)
		if err != nil {
			if r.res.Error == "" {
				r.res.Error = err.Error()
			}
			continue
		}
		keys := map[string]int{}
		for _, m := range msgs {
			keys[m.IdempotencyKey]++
			if keys[m.IdempotencyKey] > 1 {
				r.res.DuplicateDeliveries++
			}
		}
		states := map[string]int{}
		for _, m := range msgs {
			states[m.Delivery]++
		}
		r.res.Final["messages"] = stateList(states)
	}
}

func stateList(m map[string]int) string {
	var out []string
	for k, v := range m {
		out = append(out, fmt.Sprintf("%d %s", v, k))
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

type benchHandoff struct {
	ID     string `json:"id"`
	Status string `json:"status"`
}

// advance moves a handoff through statuses and records the last.
func (r *taskRun) advance(ctx context.Context, id string, statuses ...string) error {
	for _, st := range statuses {
		var h benchHandoff
		if err := r.call(ctx, "update_handoff_status", map[string]any{"handoffId": id, "status": st}, &h); err != nil {
			return err
		}
		r.res.Final["handoff"] = h.Status
	}
	return nil
}

// implementAndHandOff: Codex implements a change, the runtime verifies it,
// hands the work to Claude Code with a token-bounded packet and a directed
// message, and the handoff runs to completed.
func implementAndHandOff(ctx context.Context, r *taskRun) error {
	if err := r.call(ctx, "list_agent_sessions", map[string]any{"limit": 5}, nil); err != nil {
		return err
	}
	sender, err := r.createSession(ctx, "codex", "bench sender-1")
	if err != nil {
		return err
	}
	worker, err := r.createSession(ctx, "claude-code", "bench worker-1")
	if err != nil {
		return err
	}
	cursor, err := r.openEvents(ctx, sender)
	if err != nil {
		return err
	}
	if err := r.send(ctx, sender, "IMPLEMENT", "Implemented utils.slugify with tests."); err != nil {
		return err
	}
	if _, err := r.awaitTurn(ctx, sender, cursor); err != nil {
		return err
	}
	var work struct {
		ID string `json:"id"`
	}
	if err := r.call(ctx, "create_work_item", map[string]any{"objective": "Add utils.slugify", "acceptanceCriteria": []string{"slugify lowercases and joins words with -", "tests pass"},
		"sourceSession": sender.ID}, &work); err != nil {
		return err
	}
	var verify struct {
		Commands []struct {
			ExitCode *int `json:"exitCode"`
		} `json:"commands"`
		EvidenceIDs []string `json:"evidenceIds"`
		WorkStatus  string   `json:"workStatus"`
	}
	if err := r.call(ctx, "verify_work_item", map[string]any{"workId": work.ID,
		"commands": []any{map[string]any{"executable": "node", "args": []string{"-e", "process.exit(0)"}, "label": "tests"}}}, &verify); err != nil {
		return err
	}
	ev := verify.EvidenceIDs
	var h benchHandoff
	if err := r.call(ctx, "create_handoff", map[string]any{"workId": work.ID, "sourceSession": sender.ID, "destinationSession": worker.ID,
		"objective": "Finish utils.slugify: add the docs", "acceptanceCriteria": []string{"docs mention slugify"}, "evidenceIds": ev,
		"authorityBoundaries": []string{"edit utils/ only"}, "continuationState": "needs_completion", "nextAction": "write the docs"}, &h); err != nil {
		return err
	}
	if err := r.call(ctx, "get_handoff_packet", map[string]any{"handoffId": h.ID}, nil); err != nil {
		return err
	}
	wcursor, err := r.openEvents(ctx, worker)
	if err != nil {
		return err
	}
	conv, err := r.conversation(ctx, "bench implement-and-hand-off", sender, worker)
	if err != nil {
		return err
	}
	if _, err := r.message(ctx, conv, sender, worker, wcursor, "HANDOFF", "Accepted handoff "+h.ID+"; docs written."); err != nil {
		return err
	}
	if err := r.advance(ctx, h.ID, "accepted", "applied", "verified", "completed"); err != nil {
		return err
	}
	if err := r.recordWorkStatus(ctx, work.ID); err != nil {
		return err
	}
	if len(verify.Commands) > 0 && verify.Commands[0].ExitCode != nil {
		r.res.Final["verification"] = fmt.Sprintf("exit %d", *verify.Commands[0].ExitCode)
	}
	return nil
}

// recordWorkStatus reads the work item back and records its final
// status.
func (r *taskRun) recordWorkStatus(ctx context.Context, workID string) error {
	var detail struct {
		Work struct {
			Status string `json:"status"`
		} `json:"work"`
		Evidence []struct {
			Trust string `json:"trust"`
		} `json:"evidence"`
	}
	if err := r.call(ctx, "get_work_item", map[string]any{"workId": workID}, &detail); err != nil {
		return err
	}
	r.res.Final["work"] = detail.Work.Status
	return nil
}

// reviewHotfix: OpenCode makes a hotfix, request_review sends Claude Code
// the diff in a handoff packet, the reviewer's verdict is recorded.
func reviewHotfix(ctx context.Context, r *taskRun) error {
	subject, err := r.createSession(ctx, "opencode", "bench subject-1")
	if err != nil {
		return err
	}
	reviewer, err := r.createSession(ctx, "claude-code", "bench reviewer-1")
	if err != nil {
		return err
	}
	cursor, err := r.openEvents(ctx, subject)
	if err != nil {
		return err
	}
	if err := r.send(ctx, subject, "HOTFIX", "Fixed the off-by-one in the pager."); err != nil {
		return err
	}
	if _, err := r.awaitTurn(ctx, subject, cursor); err != nil {
		return err
	}
	var work struct {
		ID string `json:"id"`
	}
	if err := r.call(ctx, "create_work_item", map[string]any{"objective": "Hotfix: pager off-by-one", "acceptanceCriteria": []string{"last page is not dropped"},
		"sourceSession": subject.ID}, &work); err != nil {
		return err
	}
	rcursor, err := r.openEvents(ctx, reviewer)
	if err != nil {
		return err
	}
	t := tag("REVIEW")
	r.tags = append(r.tags, "Review work "+work.ID+".")
	r.env.fm.On(fakemodel.Contains("Review work "+work.ID+"."), fakemodel.Text("Approve: "+t))
	r.res.ProviderSends++
	var rr struct {
		Handoff  benchHandoff `json:"handoff"`
		Evidence struct {
			ID string `json:"id"`
		} `json:"evidence"`
		Receipt struct {
			Status string `json:"status"`
		} `json:"receipt"`
	}
	if err := r.call(ctx, "request_review", map[string]any{"workId": work.ID, "subjectProvider": "opencode", "subjectNativeId": subject.NativeID,
		"reviewerProvider": "claude-code", "reviewerNativeId": reviewer.NativeID, "objective": "Review the pager hotfix",
		"acceptanceCriteria": []string{"the fix is minimal"}}, &rr); err != nil {
		return err
	}
	if err := r.call(ctx, "get_handoff_packet", map[string]any{"handoffId": rr.Handoff.ID}, nil); err != nil {
		return err
	}
	if _, err := r.awaitTurn(ctx, reviewer, rcursor); err != nil {
		return err
	}
	var review struct {
		Verdict string `json:"verdict"`
	}
	if err := r.call(ctx, "record_review", map[string]any{"workId": work.ID, "subjectEvidenceIds": []string{rr.Evidence.ID}, "reviewerSessionId": reviewer.ID,
		"independence": map[string]any{"differentSession": true, "differentProvider": true, "freshContext": true, "writeAccess": false},
		"findings":     []any{}, "verdict": "approve"}, &review); err != nil {
		return err
	}
	if err := r.call(ctx, "get_work_graph", map[string]any{"workId": work.ID}, nil); err != nil {
		return err
	}
	r.res.Final["review"] = review.Verdict
	r.res.Final["reviewReceipt"] = rr.Receipt.Status
	r.res.Final["handoff"] = rr.Handoff.Status
	return nil
}

// blockedThenResume: a handoff from Codex to Claude Code is blocked twice
// (the worker reports what it waits for), resumed each time, and completed.
func blockedThenResume(ctx context.Context, r *taskRun) error {
	sender, err := r.createSession(ctx, "codex", "bench sender-2")
	if err != nil {
		return err
	}
	worker, err := r.createSession(ctx, "claude-code", "bench worker-2")
	if err != nil {
		return err
	}
	var work struct {
		ID string `json:"id"`
	}
	if err := r.call(ctx, "create_work_item", map[string]any{"objective": "Migrate the config loader", "acceptanceCriteria": []string{"old keys still load"},
		"sourceSession": sender.ID}, &work); err != nil {
		return err
	}
	var h benchHandoff
	if err := r.call(ctx, "create_handoff", map[string]any{"workId": work.ID, "sourceSession": sender.ID, "destinationSession": worker.ID,
		"objective": "Migrate the config loader", "acceptanceCriteria": []string{"old keys still load"},
		"authorityBoundaries": []string{"config/ only"}, "continuationState": "not_started"}, &h); err != nil {
		return err
	}
	if err := r.call(ctx, "get_handoff_packet", map[string]any{"handoffId": h.ID}, nil); err != nil {
		return err
	}
	wcursor, err := r.openEvents(ctx, worker)
	if err != nil {
		return err
	}
	conv, err := r.conversation(ctx, "bench blocked-then-resume", sender, worker)
	if err != nil {
		return err
	}
	phases := []struct{ word, reply, status string }{
		{"START", "Blocked: the fixtures are missing.", "blocked"},
		{"RESUME1", "Blocked again: the schema file is locked.", "blocked"},
		{"RESUME2", "Done: the loader reads old and new keys.", ""},
	}
	if err := r.advance(ctx, h.ID, "accepted"); err != nil {
		return err
	}
	for i, ph := range phases {
		if i > 0 {
			if err := r.advance(ctx, h.ID, "accepted"); err != nil {
				return err
			}
		}
		if wcursor, err = r.message(ctx, conv, sender, worker, wcursor, ph.word, ph.reply); err != nil {
			return err
		}
		if ph.status != "" {
			if err := r.advance(ctx, h.ID, ph.status); err != nil {
				return err
			}
		}
	}
	return r.advance(ctx, h.ID, "applied", "verified", "completed")
}

// WriteTable writes one row per task and the gate.
func (r *HandoffReport) WriteTable(w io.Writer) error {
	ew := &errWriter{w: w}
	fmt.Fprintf(ew, "interop-bench handoff %s (%s), source %s; tokenizer %s; %.1f s\n\n", r.Date, r.OS, r.Source, r.Tokenizer, float64(r.Seconds))
	for _, t := range r.Tasks {
		if t.Skipped != "" {
			fmt.Fprintf(ew, "%s: skipped (%s)\n\n", t.Task, t.Skipped)
			continue
		}
		fmt.Fprintf(ew, "%s (%s → %s), %.1f s\n", t.Task, t.From, t.To, float64(t.Seconds))
		fmt.Fprintf(ew, "  steps %d, payload %d bytes / %d o200k tokens\n", t.Steps, t.Bytes, t.Tokens)
		for _, p := range t.Packets {
			fmt.Fprintf(ew, "  handoff packet: %d bytes / %d tokens\n", p.Bytes, p.Tokens)
		}
		largest := Size{}
		for _, c := range t.Calls {
			if c.Tokens > largest.Tokens {
				largest = c
			}
		}
		fmt.Fprintf(ew, "  largest answer: %s, %d bytes / %d tokens\n", largest.Tool, largest.Bytes, largest.Tokens)
		fmt.Fprintf(ew, "  provider sends %d, prompts observed at the model %d, duplicate provider sends %d, duplicate deliveries %d, duplicate event reads %d\n",
			t.ProviderSends, t.Prompts, t.DuplicateProviderSends, t.DuplicateDeliveries, t.DuplicateEventReads)
		var keys []string
		for k := range t.Final {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var fs []string
		for _, k := range keys {
			fs = append(fs, k+" "+t.Final[k])
		}
		fmt.Fprintf(ew, "  final: %s\n", strings.Join(fs, "; "))
		if t.Error != "" {
			fmt.Fprintf(ew, "  ERROR: %s\n", t.Error)
		}
		fmt.Fprintln(ew)
	}
	if g := r.Gate(); len(g) > 0 {
		fmt.Fprintf(ew, "gate: FAIL\n  %s\n", strings.Join(g, "\n  "))
	} else {
		fmt.Fprintln(ew, "gate: pass (no duplicate send, delivery or event read)")
	}
	return ew.err
}

// WriteJSON writes the report as indented JSON.
func (r *HandoffReport) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(r)
}
