package acp_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/quartz"

	"github.com/agent-interop/runtime/internal/providers"
	"github.com/agent-interop/runtime/internal/providers/acp"
	"github.com/agent-interop/runtime/internal/testutil/testclock"
	"github.com/agent-interop/runtime/internal/testutil/wait"
)

// answerInitialize is the shell of an agent that answers initialize (with
// the id of the request it read) and nothing else.
const answerInitialize = `read -r line; id=$(printf '%s' "$line" | sed -n 's/.*"id":\([0-9]*\).*/\1/p'); ` +
	`answer='{"jsonrpc":"2.0","id":'$id',"result":{"protocolVersion":1,"agentCapabilities":{}}}'; `

// secretToken is credential-shaped (a GitHub token) for the redaction case.
const secretToken = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"

// TestBadAgentPrograms: an agent that exits at once, prints something
// other than ACP, or never answers initialize is reported unavailable with
// the reason; nothing hangs, and another agent keeps working. A program
// that prints a line that is not JSON-RPC before its first answer fails
// at once, quoting the line (bounded, sanitised) with the fix: those
// cases run with a handshake bound of an hour, so only the early failure
// can end them within the wait. The silent agent's bound runs on a fake
// clock the test moves once the bound is armed.
func TestBadAgentPrograms(t *testing.T) {
	// A working agent, started before the bad ones and used after them.
	good := simPeer(t)
	gc := good.start(t)

	long := strings.Repeat("x", 5000)
	for _, c := range []struct {
		name, script string
		want         []string // in the send capability's reason
		notWant      []string
		fixWant      string // in its fix
		fakeClock    bool
		available    bool // the agent works despite the script's extra output
	}{
		{name: "exits at once", script: "echo broken >&2; exit 3", want: []string{"broken"}},
		{name: "a banner then nothing", script: `printf '\033[1;32mWelcome to my agent!\033[0m\n'; sleep 300`,
			want:    []string{`printed "Welcome to my agent!" on its stdout before answering initialize`, "not an ACP (JSON-RPC) message"},
			fixWant: "the agent's ACP mode? Point the entry's command at the program's ACP mode (e.g. `gemini --acp`"},
		{name: "plain text then exit", script: "echo 'Usage: agent [options] <prompt>'; exit 2",
			want: []string{`printed "Usage: agent [options] <prompt>"`}, notWant: []string{"connection closed"}, fixWant: "`sh -c echo 'Usage"},
		{name: "a JSON line that is not JSON-RPC", script: `echo '{"level":"info","msg":"starting"}'; sleep 300`,
			want: []string{`printed "{\"level\":\"info\",\"msg\":\"starting\"}"`}, fixWant: "ACP mode"},
		{name: "an HTML page", script: `printf '<!DOCTYPE html>\n<html><body>Not found</body></html>\n'; sleep 300`,
			want: []string{`printed "<!DOCTYPE html>" on`}, notWant: []string{"Not found"}, fixWant: "ACP mode"},
		{name: "a long line is quoted bounded", script: "echo " + long + "; sleep 300",
			want: []string{`printed "` + long[:200] + `…" on`}, notWant: []string{long[:201]}, fixWant: "ACP mode"},
		{name: "a credential in the output is redacted", script: "echo 'error: token " + secretToken + " rejected'; sleep 300",
			want: []string{`printed "error: token [REDACTED] rejected" on`}, notWant: []string{secretToken}, fixWant: "ACP mode"},
		{name: "a banner before the answer", script: "read -r line; echo 'Loading...'; " + answerInitialize + `echo "$answer"; sleep 300`,
			want: []string{`printed "Loading..."`}, fixWant: "ACP mode"},
		// After the first answer a stray line is dropped, as it always
		// was: the agent works.
		{name: "a stray line after the answer", script: answerInitialize + `echo "$answer"; echo 'a log line'; sleep 300`, available: true},
		{name: "never answers initialize", script: "sleep 300", want: []string{"no answer to initialize within 2s"}, fakeClock: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*wait.Process)
			defer cancel()
			cfg := acp.AgentConfig{
				Spec:             providers.AgentSpec{ID: "bad", Name: "Bad", Protocol: "acp", Command: []string{"/bin/sh", "-c", c.script}, InstallHint: "fix it"},
				HandshakeTimeout: time.Hour,
			}
			var clock *quartz.Mock
			var trap *quartz.Trap
			if c.fakeClock {
				clock = testclock.At(t, time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
				trap = clock.Trap().AfterFunc("acp", "handshake")
				defer trap.Close()
				cfg.Clock, cfg.HandshakeTimeout = clock, 2*time.Second
			}
			a := acp.NewAgent(cfg)
			defer a.Close()
			got := make(chan providers.Capabilities, 1)
			go func() { got <- a.Capabilities(ctx) }()
			if c.fakeClock {
				trap.MustWait(ctx).MustRelease(ctx) // the handshake bound is armed
			}
			var caps providers.Capabilities
			wait.For(t, "the capability record of a bad agent", wait.Process, func() bool {
				select {
				case caps = <-got:
					return true
				default:
				}
				if c.fakeClock {
					testclock.Pass(ctx, clock, 500*time.Millisecond)
				}
				return false
			})
			send := caps.SendMessage
			if c.available {
				if send.State != providers.Available {
					t.Fatalf("send capability %+v, want available", send)
				}
				return
			}
			if send.State != providers.Unavailable {
				t.Fatalf("send capability %+v, want unavailable", send)
			}
			for _, w := range c.want {
				if !strings.Contains(send.Reason, w) {
					t.Errorf("reason %q\nlacks %q", send.Reason, w)
				}
			}
			// What the reason quotes of the output (the command, quoted
			// too, is the test's script and holds the same text).
			_, quoted, _ := strings.Cut(send.Reason, "printed ")
			quoted, _, _ = strings.Cut(quoted, " on its stdout")
			for _, w := range c.notWant {
				if strings.Contains(quoted, w) || (!strings.Contains(c.script, w) && strings.Contains(send.Reason, w)) {
					t.Errorf("reason %q\nhas %q", send.Reason, w)
				}
			}
			if !strings.Contains(send.Fix, c.fixWant) {
				t.Errorf("fix %q\nlacks %q", send.Fix, c.fixWant)
			}
			if c.fixWant != "" && (strings.Contains(send.Reason, "no answer to initialize") || !strings.Contains(send.Reason, send.Fix)) {
				t.Errorf("reason %q: want the early failure, with its fix", send.Reason)
			}
		})
	}

	// The working agent was not disturbed.
	setup, err := gc.NewSession(ctxT(t, wait.Process), good.workspace)
	if err != nil {
		t.Fatalf("the good agent after the bad ones: %v", err)
	}
	turn, err := gc.Prompt(ctxT(t, wait.Process), setup.SessionID, good.hello)
	if err != nil {
		t.Fatal(err)
	}
	awaitTurn(t, turn)
	if turn.StopReason != "end_turn" {
		t.Fatalf("the good agent's turn ended %q", turn.StopReason)
	}
}

// TestNotACPErrorFromStart: acp.Start returns the typed error, so callers
// (doctor through the adapter) can offer its fix.
func TestNotACPErrorFromStart(t *testing.T) {
	_, err := acp.Start(ctxT(t, wait.Process), acp.Config{
		Argv:             []string{"/bin/sh", "-c", "echo 'gemini: unknown option --acpx'; exit 1"},
		HandshakeTimeout: time.Hour,
	})
	var na *acp.NotACPError
	if !errors.As(err, &na) {
		t.Fatalf("error %v, want a *NotACPError", err)
	}
	if na.Output != "gemini: unknown option --acpx" || !strings.HasPrefix(na.Command, "sh -c echo") {
		t.Fatalf("output %q command %q", na.Output, na.Command)
	}
}

// TestSlowStartOutlivesTheCallThatBegunIt: a call that stops waiting for
// the agent's start (its ctx ends) leaves the start running; the next call
// joins it, and the program is started once, not once per call.
func TestSlowStartOutlivesTheCallThatBegunIt(t *testing.T) {
	dir := t.TempDir()
	starts, gate := filepath.Join(dir, "starts"), filepath.Join(dir, "go")
	script := fmt.Sprintf("echo start >> %q; while [ ! -e %q ]; do sleep 0.05; done; exec %q acp", starts, gate, simBinary)
	a := acp.NewAgent(acp.AgentConfig{
		Spec:             providers.AgentSpec{ID: "slow", Name: "Slow", Protocol: "acp", Command: []string{"/bin/sh", "-c", script}, InstallHint: "fix it"},
		HandshakeTimeout: 2 * wait.Process,
		LookupEnv: func(k string) (string, bool) {
			switch k {
			case "HOME":
				return dir, true
			case "PATH":
				return os.Getenv("PATH"), true
			}
			return "", false
		},
	})
	defer a.Close()
	startCount := func() int {
		b, _ := os.ReadFile(starts)
		return strings.Count(string(b), "start")
	}

	first, cancelFirst := context.WithCancel(context.Background())
	failed := make(chan error, 1)
	go func() {
		_, err := a.Client(first)
		failed <- err
	}()
	wait.For(t, "the agent program starts", wait.Process, func() bool { return startCount() == 1 })
	cancelFirst()
	if err := wait.Recv(t, "the abandoned call's answer", wait.Process, failed); !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "still starting") {
		t.Fatalf("the abandoned call returned %v, want it still starting", err)
	}

	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*wait.Process)
	defer cancel()
	c, err := a.Client(ctx)
	if err != nil {
		t.Fatalf("the next call: %v", err)
	}
	if c == nil || startCount() != 1 {
		t.Fatalf("client %v, the program started %d times; want one start joined", c, startCount())
	}
}

// TestDidNotStartQuotesTheCommandSafely: the "did not start" reason names
// the agent's command redacted (a token in an argument), without control
// characters, and bounded (a 5,000-character argument is cut at 200
// characters with an ellipsis).
func TestDidNotStartQuotesTheCommandSafely(t *testing.T) {
	long := strings.Repeat("y", 5000)
	a := acp.NewAgent(acp.AgentConfig{
		Spec: providers.AgentSpec{ID: "bad", Name: "Bad", Protocol: "acp", InstallHint: "fix it",
			Command: []string{"/bin/sh", "-c", "exit 3", "\x1b[31mred\x07", "--token=" + secretToken, long}},
		HandshakeTimeout: time.Hour,
	})
	defer a.Close()
	caps := a.Capabilities(ctxT(t, wait.Process))
	reason := caps.SendMessage.Reason
	label, _, ok := strings.Cut(reason, " did not start: ")
	if caps.SendMessage.State != providers.Unavailable || !ok {
		t.Fatalf("send capability %+v, want unavailable, did not start", caps.SendMessage)
	}
	if strings.Contains(reason, secretToken) || strings.Contains(reason, "yyyyyyyyyy"+"yyyyyyyyyy"+strings.Repeat("y", 200)) {
		t.Fatalf("reason quotes the command unredacted or unbounded: %.400q", reason)
	}
	if n := len([]rune(label)); n > 201 || !strings.HasSuffix(label, "…") || !strings.HasPrefix(label, "sh -c exit 3 red --token=") {
		t.Fatalf("command quoted as %q (%d characters); want it redacted and cut at 200 with an ellipsis", label, n)
	}
	if strings.ContainsAny(label, "\x1b\x07") {
		t.Fatalf("command quoted with control characters: %q", label)
	}
}

// TestInitializeAnsweredWithANullIDError: an agent that answers
// initialize with an error whose id is null (JSON-RPC's answer to a
// request it could not read) fails the handshake at once with its words,
// redacted and bounded. The handshake bound is an hour on a fake clock
// that never moves, so only the early failure ends the start.
func TestInitializeAnsweredWithANullIDError(t *testing.T) {
	long := strings.Repeat("z", 5000)
	for _, c := range []struct {
		name, answer string
		want         []string
		notWant      []string
	}{
		{name: "parse error", answer: `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error","data":{"message":"Unexpected token near ` + secretToken + `"}}}`,
			want: []string{"id null, code -32700", `"Parse error: Unexpected token near [REDACTED]"`}, notWant: []string{secretToken}},
		{name: "no id at all, long message", answer: `{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request ` + long + `"}}`,
			want: []string{"code -32600", `"Invalid Request ` + long[:184] + `…"`}, notWant: []string{long[:185]}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*wait.Process)
			defer cancel()
			clock := testclock.At(t, time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
			trap := clock.Trap().AfterFunc("acp", "handshake")
			defer trap.Close()
			done := make(chan error, 1)
			go func() {
				_, err := acp.Start(ctx, acp.Config{
					Argv:  []string{"/bin/sh", "-c", "read -r line; echo '" + c.answer + "'; sleep 300"},
					Clock: clock, HandshakeTimeout: time.Hour,
				})
				done <- err
			}()
			stop := clock.Trap().NewTimer("supervise", "stdin")
			defer stop.Close()
			trap.MustWait(ctx).MustRelease(ctx) // the hour's bound is armed
			// The failed start stops the program (its first grace timer)
			// before the clock moved at all: the bound did not end it.
			stop.MustWait(ctx).MustRelease(ctx)
			var err error
			wait.For(t, "the start's failure", wait.Process, func() bool {
				select {
				case err = <-done:
					return true
				default:
				}
				testclock.Pass(ctx, clock, 500*time.Millisecond) // the stop's graces
				return false
			})
			var he *acp.HandshakeError
			if !errors.As(err, &he) {
				t.Fatalf("start: %v, want a *HandshakeError", err)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %.600q\nlacks %q", err, w)
				}
			}
			for _, w := range c.notWant {
				if strings.Contains(err.Error(), w) {
					t.Errorf("error %.600q\nhas %q", err, w)
				}
			}
		})
	}
}
