package claims_test

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

	"github.com/agent-interop/runtime/internal/claims"
	"github.com/agent-interop/runtime/internal/store"
	"github.com/agent-interop/runtime/internal/testutil/e2etest"
	"github.com/agent-interop/runtime/internal/testutil/pgtest"
)

// Environment of a racing child process (see TestMain).
const (
	envChild    = "CLAIMS_TEST_RACE_CHILD"
	envDB       = "CLAIMS_TEST_DB"
	envGo       = "CLAIMS_TEST_GO_FILE"
	envSessions = "CLAIMS_TEST_SESSIONS" // comma-separated session IDs
)

// TestMain re-executes this test binary as a racing child when envChild is
// set, so the cross-process test needs no separate program.
func TestMain(m *testing.M) {
	if os.Getenv(envChild) == "1" {
		os.Exit(raceChild())
	}
	os.Exit(pgtest.Main(m))
}

// raceResult is one child's report of one acquisition.
type raceResult struct {
	Session string `json:"session"`
	ClaimID string `json:"claimId,omitempty"`
	Err     string `json:"err,omitempty"`
}

// raceChild opens the store, prints "ready", waits for the go file, then
// acquires the same resource once per session concurrently and prints one
// JSON result per line.
func raceChild() int {
	st, err := store.Open(context.Background(), os.Getenv(envDB))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	defer st.Close()
	client := st.Client()
	sessions := strings.Split(os.Getenv(envSessions), ",")
	client.Claim.Query().CountX(context.Background()) // open a connection before the start
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
	s := claims.New(st)
	results := make([]raceResult, len(sessions))
	var wg sync.WaitGroup
	for i, sess := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := s.Acquire(context.Background(), claims.AcquireInput{
				WorkID: "work_race", SessionID: sess, Resource: "src/contested.go",
			})
			results[i] = raceResult{Session: sess, ClaimID: c.ID}
			if err != nil {
				results[i].Err = err.Error()
			}
		}()
	}
	wg.Wait()
	fmt.Fprintf(os.Stderr, "race child %d: %d write transactions retried after serialization failures\n", os.Getpid(), st.Retries())
	enc := json.NewEncoder(os.Stdout)
	for _, r := range results {
		_ = enc.Encode(r)
	}
	return 0
}

// TestAcquireAcrossProcesses races 50 acquisitions of one resource from two
// processes on one store (a SQLite file, a PostgreSQL database): exactly
// one wins, every other one gets the conflict error naming the winner
// (never SQLITE_BUSY or a serialization failure), and the store holds
// exactly one claim.
func TestAcquireAcrossProcesses(t *testing.T) {
	e2etest.Require(t) // spawns processes: the end-to-end tier
	pgtest.EachDialect(t, testAcquireAcrossProcesses)
}

func testAcquireAcrossProcesses(t *testing.T, path string) {
	const procs, perProc = 2, 25
	st, err := store.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	client := st.Client()
	seedWork(t, client, "work_race")
	goFile := filepath.Join(t.TempDir(), "go")

	type child struct {
		cmd *exec.Cmd
		out *bufio.Scanner
	}
	var children []child
	for p := range procs {
		var sessions []string
		for i := range perProc {
			sessions = append(sessions, "codex:p"+strconv.Itoa(p)+"-"+strconv.Itoa(i))
		}
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), envChild+"=1", envDB+"="+path, envGo+"="+goFile,
			envSessions+"="+strings.Join(sessions, ","))
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

	var results []raceResult
	for p, c := range children {
		for c.out.Scan() {
			var r raceResult
			if err := json.Unmarshal(c.out.Bytes(), &r); err != nil {
				t.Fatalf("child %d printed %q: %v", p, c.out.Text(), err)
			}
			results = append(results, r)
		}
		if err := c.cmd.Wait(); err != nil {
			t.Fatalf("child %d: %v", p, err)
		}
	}
	if len(results) != procs*perProc {
		t.Fatalf("got %d results, want %d", len(results), procs*perProc)
	}
	var winners []raceResult
	for _, r := range results {
		if r.Err == "" {
			winners = append(winners, r)
		}
	}
	if len(winners) != 1 {
		t.Fatalf("winners = %+v, want exactly one", winners)
	}
	want := "conflicts with active claim " + winners[0].ClaimID + " held by " + winners[0].Session
	for _, r := range results {
		if r.Err != "" && !strings.Contains(r.Err, want) {
			t.Errorf("%s: err %q, want it to contain %q", r.Session, r.Err, want)
		}
	}
	if n := claimCount(t, client); n != 1 {
		t.Fatalf("store holds %d claims, want 1", n)
	}
}
