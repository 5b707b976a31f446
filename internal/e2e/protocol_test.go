package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/agent-interop/runtime/internal/testutil/wait"
)

// answers collects every line the binary writes, by id, until stdout ends.
type answers struct {
	byID  map[string][]json.RawMessage
	lines int
	bad   []string
}

func collect(t *testing.T, out io.Reader) <-chan answers {
	ch := make(chan answers, 1)
	go func() {
		a := answers{byID: map[string][]json.RawMessage{}}
		r := bufio.NewReaderSize(out, 1<<20)
		for {
			line, err := r.ReadBytes('\n')
			if len(line) > 0 {
				a.lines++
				var m map[string]json.RawMessage
				if json.Unmarshal(line, &m) != nil || string(m["jsonrpc"]) != `"2.0"` {
					a.bad = append(a.bad, string(line))
				} else if id, ok := m["id"]; ok {
					a.byID[string(id)] = append(a.byID[string(id)], line)
				}
			}
			if err != nil {
				ch <- a
				return
			}
		}
	}()
	return ch
}

func initLines() string {
	return `{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}` + "\n" +
		`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"
}

func statusCall(id string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"get_runtime_status","arguments":{}}}`
}

// runWithInput starts the binary with stdin written by write, and returns
// its answers, stderr and exit error once it exited.
func runWithInput(t *testing.T, env []string, write func(w io.Writer)) (answers, string, error) {
	t.Helper()
	cmd := exec.Command(binary, "serve", "--profile", "minimal")
	cmd.Env = env
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	got := collect(t, out)
	write(in)
	in.Close()
	a, ok := wait.RecvWithin(wait.Process, got)
	if !ok {
		_ = cmd.Process.Kill()
		t.Fatalf("stdout still open %v after stdin closed", wait.Process)
	}
	err := cmd.Wait()
	return a, stderr.String(), err
}

func nest(depth int, inner string) string {
	return strings.Repeat("[", depth) + inner + strings.Repeat("]", depth)
}

// TestHostileFramesNeverEndTheServer: frames the SDK alone would end the
// session on (deep nesting, ids it cannot represent, null ids, frames at
// the line limit) each get the protocol's answer under their own id, and
// every valid call around them is served.
func TestHostileFramesNeverEndTheServer(t *testing.T) {
	hostile := map[string]string{ // id as written -> frame
		"101":                            `{"jsonrpc":"2.0","id":101,"method":"tools/call","params":{"name":"get_runtime_status","arguments":` + nest(1001, "1") + `}}`,
		"102":                            `{"jsonrpc":"2.0","id":102,"method":"tools/call","params":{"name":"list_agent_sessions","arguments":{"provider":` + nest(300000, "") + `}}}`,
		"1e400":                          statusCall("1e400"),
		"123456789012345678901234567890": statusCall("123456789012345678901234567890"),
		"-1.5":                           statusCall("-1.5"),
		"null":                           `{"jsonrpc":"2.0","id":null,"method":"tools/call","params":{"name":"get_runtime_status"}}`,
		"103":                            `{"jsonrpc":"2.0","id":103,"method":"tools/call","params":{"name":"get_runtime_status","arguments":{"pad":"` + strings.Repeat("z", 4<<20-200) + `"}}}`,
		"104":                            `{"jsonrpc":"2.0","id":104,"method":"tools/call","params":{"name":"get_runtime_status","_meta":{"progressToken":1e400}}}`,
		"105":                            `{"jsonrpc":"2.0","id":105,"method":"tools/call","params":7}`,
	}
	a, stderr, err := runWithInput(t, isolatedEnv(t), func(w io.Writer) {
		io.WriteString(w, initLines())
		n := 0
		for _, frame := range hostile {
			io.WriteString(w, frame+"\n")
			n++
			io.WriteString(w, statusCall(fmt.Sprintf(`"ok-%d"`, n))+"\n")
		}
	})
	if err != nil {
		t.Fatalf("exit: %v\nstderr: %s", err, stderr)
	}
	if len(a.bad) > 0 {
		t.Fatalf("stdout carried non-JSON-RPC lines: %.200q", a.bad)
	}
	for id := range hostile {
		if n := len(a.byID[id]); n != 1 {
			t.Errorf("frame with id %s answered %d times", id, n)
		}
	}
	for i := 1; i <= len(hostile); i++ {
		got := a.byID[fmt.Sprintf(`"ok-%d"`, i)]
		if len(got) != 1 || !bytes.Contains(got[0], []byte(`"result"`)) {
			t.Errorf("valid call ok-%d answered %q", i, got)
		}
	}
	for _, id := range []string{"1e400", "123456789012345678901234567890", "-1.5"} {
		if got := a.byID[id]; len(got) == 1 && !bytes.Contains(got[0], []byte(`"result"`)) {
			t.Errorf("call with id %s was not served: %s", id, got[0])
		}
	}
	if strings.Contains(stderr, "level=ERROR") {
		t.Errorf("stderr has an ERROR line:\n%s", stderr)
	}
}

// TestMutatedFramesNeverEndTheServer sends thousands of randomly mutated
// frames interleaved with valid calls: the process never exits, every valid
// call is answered, every mutated frame that is still a request with its
// id is answered once, and stdout carries only JSON-RPC.
func TestMutatedFramesNeverEndTheServer(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 26))
	base := []string{
		statusCall(`"ID"`),
		`{"jsonrpc":"2.0","id":"ID","method":"tools/call","params":{"name":"read_session_events","arguments":{"provider":"codex","nativeId":"x","limit":5}}}`,
		`{"jsonrpc":"2.0","id":"ID","method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":"ID","method":"ping"}`,
	}
	mutate := func(s string) string {
		b := []byte(s)
		switch rng.IntN(8) {
		case 0: // flip bytes
			for range 1 + rng.IntN(4) {
				b[rng.IntN(len(b))] = byte(rng.IntN(256))
			}
		case 1: // truncate
			b = b[:rng.IntN(len(b))]
		case 2: // deep nesting inside params
			return strings.Replace(s, `"params":{`, `"params":{"deep":`+nest(500+rng.IntN(3000), "")+`,`, 1)
		case 3: // odd ids
			ids := []string{"null", "1e400", "-0", "3.25", "99999999999999999999999", "[1]", "{}", "true", `""`}
			return strings.Replace(s, `"ID"`, ids[rng.IntN(len(ids))], 1)
		case 4: // duplicate a member
			return strings.Replace(s, `"jsonrpc":"2.0",`, `"jsonrpc":"2.0","jsonrpc":"1.0",`, 1)
		case 5: // insert a random byte
			i := rng.IntN(len(b))
			const junk = "{}[],:\"\\0e-"
			b = append(b[:i], append([]byte{junk[rng.IntN(len(junk))]}, b[i:]...)...)
		case 6: // wrong types
			return strings.Replace(s, `"method":"`, `"method":7,"x":"`, 1)
		default: // a batch
			return "[" + s + "," + s + "]"
		}
		return string(bytes.ReplaceAll(b, []byte("\n"), []byte(" ")))
	}
	const frames = 5200
	kept := map[string]string{} // ids of mutated frames that stayed valid requests
	a, stderr, err := runWithInput(t, isolatedEnv(t), func(w io.Writer) {
		io.WriteString(w, initLines())
		for i := range frames {
			id := fmt.Sprintf(`"m%d"`, i)
			frame := mutate(strings.Replace(base[rng.IntN(len(base))], `"ID"`, id, 1))
			var m struct {
				JSONRPC string          `json:"jsonrpc"`
				ID      json.RawMessage `json:"id"`
				Method  *string         `json:"method"`
				Params  json.RawMessage `json:"params"`
			}
			if !strings.HasPrefix(frame, "[") && json.Unmarshal([]byte(frame), &m) == nil && string(m.ID) == id && m.Method != nil && *m.Method != "" {
				kept[id] = frame
			}
			io.WriteString(w, frame+"\n")
			if i%5 == 0 {
				io.WriteString(w, statusCall(fmt.Sprintf(`"v%d"`, i))+"\n")
			}
		}
	})
	if err != nil {
		t.Fatalf("exit: %v\nstderr tail: %s", err, tail(stderr, 2000))
	}
	if len(a.bad) > 0 {
		t.Fatalf("stdout carried %d non-JSON-RPC lines, first %.200q", len(a.bad), a.bad[0])
	}
	for i := 0; i < frames; i += 5 {
		if got := a.byID[fmt.Sprintf(`"v%d"`, i)]; len(got) != 1 || !bytes.Contains(got[0], []byte(`"result"`)) {
			t.Errorf("valid call v%d answered %q", i, got)
		}
	}
	unanswered := 0
	for id, frame := range kept {
		if n := len(a.byID[id]); n != 1 {
			if unanswered < 5 {
				t.Logf("%s answered %d times: %.300s", id, n, frame)
			}
			unanswered++
		}
	}
	t.Logf("%d mutated frames (%d still requests with their id), %d answer lines", frames, len(kept), a.lines)
	if unanswered > 0 {
		t.Errorf("%d mutated requests with a valid id were not answered exactly once", unanswered)
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// TestEOFAnswersRequestsAlreadyRead: requests written just before stdin
// closes are answered, background start-up work stops cleanly, and the
// process exits 0 without an ERROR line.
func TestEOFAnswersRequestsAlreadyRead(t *testing.T) {
	a, stderr, err := runWithInput(t, isolatedEnv(t), func(w io.Writer) {
		io.WriteString(w, initLines())
		for i := range 20 {
			io.WriteString(w, statusCall(fmt.Sprint(i))+"\n")
		}
		io.WriteString(w, `{"jsonrpc":"2.0","id":"wait","method":"tools/call","params":{"name":"list_providers","arguments":{}}}`+"\n")
	})
	if err != nil {
		t.Fatalf("exit after EOF: %v, want 0\nstderr: %s", err, stderr)
	}
	for i := range 20 {
		if len(a.byID[fmt.Sprint(i)]) != 1 {
			t.Errorf("request %d: %d answers", i, len(a.byID[fmt.Sprint(i)]))
		}
	}
	if len(a.byID[`"init"`]) != 1 || len(a.byID[`"wait"`]) != 1 {
		t.Errorf("initialize or list_providers not answered: %v", a.byID)
	}
	for _, bad := range []string{"level=ERROR", "database is closed"} {
		if strings.Contains(stderr, bad) {
			t.Errorf("stderr has %q:\n%s", bad, stderr)
		}
	}
}

// TestInterruptExitsZeroQuietly: Ctrl-C (SIGINT) ends the server with exit
// code 0 and no ERROR line.
func TestInterruptExitsZeroQuietly(t *testing.T) {
	r := startRaw(t, []string{"serve"}, isolatedEnv(t))
	r.initialize()
	r.send(statusCall("1"))
	r.recv()
	if err := r.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- r.cmd.Wait() }()
	if err := wait.Recv(t, "the exit after SIGINT", wait.Process, done); err != nil {
		t.Fatalf("exit after SIGINT: %v\nstderr: %s", err, r.stderr)
	}
	if strings.Contains(r.stderr.String(), "level=ERROR") {
		t.Errorf("stderr has an ERROR line:\n%s", r.stderr)
	}
}
