package conversations_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agent-interop/runtime/ent/message"
	"github.com/agent-interop/runtime/internal/conversations"
	"github.com/agent-interop/runtime/internal/store"
	"github.com/agent-interop/runtime/internal/testutil/e2etest"
	"github.com/agent-interop/runtime/internal/testutil/pgtest"
)

// Environment of a racing child process (see TestMain).
const (
	envChild = "CONVERSATIONS_TEST_RACE_CHILD"
	envDB    = "CONVERSATIONS_TEST_DB"
	envGo    = "CONVERSATIONS_TEST_GO_FILE"
	envConv  = "CONVERSATIONS_TEST_CONV"
	envKeys  = "CONVERSATIONS_TEST_KEYS" // comma-separated idempotency keys
)

// TestMain re-executes this test binary as a racing child when envChild is
// set, so the cross-process test needs no separate program.
func TestMain(m *testing.M) {
	if os.Getenv(envChild) == "1" {
		os.Exit(raceChild())
	}
	os.Exit(pgtest.Main(m))
}

// childT is the testing.T of a racing child: the fake clock reports through
// it; a failure ends the child.
type childT struct{}

func (childT) Helper()                             {}
func (childT) Log(args ...any)                     { fmt.Fprintln(os.Stderr, args...) }
func (childT) Logf(format string, args ...any)     { fmt.Fprintf(os.Stderr, format+"\n", args...) }
func (c childT) Error(args ...any)                 { c.Fatal(args...) }
func (c childT) Errorf(format string, args ...any) { c.Fatalf(format, args...) }
func (childT) Fatal(args ...any)                   { fmt.Fprintln(os.Stderr, args...); os.Exit(2) }
func (childT) Fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, format+"\n", args...)
	os.Exit(2)
}
func (childT) Cleanup(func()) {}

// raceResult is one child's report of one send.
type raceResult struct {
	Key       string `json:"key"`
	MessageID string `json:"messageId,omitempty"`
	Err       string `json:"err,omitempty"`
}

// raceChild opens the store, prints "ready", waits for the go file, then
// sends one message per key concurrently and prints one JSON result per
// line.
func raceChild() int {
	st, err := store.Open(context.Background(), os.Getenv(envDB))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	defer st.Close()
	st.Client().Message.Query().CountX(context.Background())
	fmt.Println("ready")
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := os.Stat(os.Getenv(envGo)); err == nil {
			break
		}
		if time.Now().After(deadline) {
			fmt.Fprintln(os.Stderr, "no start signal")
			return 2
		}
		time.Sleep(200 * time.Microsecond)
	}
	p, err := buildProcess(st, newClock(childT{}), script(), nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	defer p.del.Close()
	svc := p.svc
	keys := strings.Split(os.Getenv(envKeys), ",")
	results := make([]raceResult, len(keys))
	var wg sync.WaitGroup
	for i, k := range keys {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := svc.Send(context.Background(), conversations.SendInput{ConversationID: os.Getenv(envConv),
				Sender: "codex:a", Recipient: "claude-code:b", Text: "from pid " + strconv.Itoa(os.Getpid()), IdempotencyKey: k})
			results[i] = raceResult{Key: k, MessageID: res.Message.ID}
			if err != nil {
				results[i].Err = err.Error()
			}
		}()
	}
	wg.Wait()
	enc := json.NewEncoder(os.Stdout)
	for _, r := range results {
		_ = enc.Encode(r)
	}
	return 0
}

// TestIdempotencyAcrossProcesses has two processes send with the same 20
// idempotency keys at once: each key gets exactly one message, the loser
// gets the upstream refusal naming it, and sequences stay dense; on a
// SQLite file and on a PostgreSQL database.
func TestIdempotencyAcrossProcesses(t *testing.T) {
	e2etest.Require(t) // spawns processes: the end-to-end tier
	pgtest.EachDialect(t, testIdempotencyAcrossProcesses)
}

func testIdempotencyAcrossProcesses(t *testing.T, location string) {
	const procs, nkeys = 2, 20
	e := newEnvAt(t, location)
	id := e.conv(t)
	goFile := filepath.Join(t.TempDir(), "go")
	var keys []string
	for i := range nkeys {
		keys = append(keys, "race-"+strconv.Itoa(i))
	}
	type child struct {
		cmd *exec.Cmd
		out *bufio.Scanner
	}
	var children []child
	for p := range procs {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), envChild+"=1", envDB+"="+location, envGo+"="+goFile,
			envConv+"="+id, envKeys+"="+strings.Join(keys, ","))
		cmd.Stderr = os.Stderr
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		sc := bufio.NewScanner(stdout)
		if !sc.Scan() || sc.Text() != "ready" {
			t.Fatalf("child %d did not get ready: %q %v", p, sc.Text(), sc.Err())
		}
		children = append(children, child{cmd, sc})
	}
	if err := os.WriteFile(goFile, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	byKey := map[string][]raceResult{}
	for p, c := range children {
		for c.out.Scan() {
			var r raceResult
			if err := json.Unmarshal(c.out.Bytes(), &r); err != nil {
				t.Fatalf("child %d printed %q: %v", p, c.out.Text(), err)
			}
			byKey[r.Key] = append(byKey[r.Key], r)
		}
		if err := c.cmd.Wait(); err != nil {
			t.Fatalf("child %d: %v", p, err)
		}
	}
	ctx := context.Background()
	for _, k := range keys {
		rs := byKey[k]
		if len(rs) != procs {
			t.Fatalf("key %s: %d results", k, len(rs))
		}
		var winner string
		for _, r := range rs {
			if r.Err == "" {
				if winner != "" {
					t.Fatalf("key %s sent twice: %+v", k, rs)
				}
				winner = r.MessageID
			}
		}
		if winner == "" {
			t.Fatalf("key %s: nobody won: %+v", k, rs)
		}
		want := "Idempotency key '" + k + "' already has a message (" + winner + ", delivery "
		for _, r := range rs {
			if r.Err != "" && !strings.HasPrefix(r.Err, want) {
				t.Errorf("key %s loser err %q, want prefix %q", k, r.Err, want)
			}
		}
		if n := e.c.Message.Query().Where(message.IdempotencyKey(k)).CountX(ctx); n != 1 {
			t.Fatalf("key %s has %d messages", k, n)
		}
	}
	rows := e.c.Message.Query().Order(message.BySequence()).AllX(ctx)
	for i, r := range rows {
		if r.Sequence != int64(i+1) {
			t.Fatalf("sequence %d at position %d", r.Sequence, i)
		}
	}
	if conv := e.c.Conversation.GetX(ctx, id); conv.LastSequence != nkeys || len(rows) != nkeys {
		t.Fatalf("lastSequence %d, %d messages, want %d", conv.LastSequence, len(rows), nkeys)
	}
}
