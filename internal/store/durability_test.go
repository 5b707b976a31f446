package store

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/agent-interop/runtime/ent"
	"github.com/agent-interop/runtime/internal/testutil/e2etest"
	"github.com/agent-interop/runtime/internal/testutil/pgtest"
)

// envWriter makes the test binary act as the writer child of
// TestDurabilityAcrossSIGKILL instead of running tests.
const envWriter = "INTEROP_STORE_TEST_WRITER"

func TestMain(m *testing.M) {
	if path := os.Getenv(envWriter); path != "" {
		os.Exit(runWriter(path))
	}
	os.Exit(pgtest.Main(m))
}

// runWriter appends work rows forever, one per transaction, and prints each
// ID only after its transaction committed.
func runWriter(location string) int {
	ctx := context.Background()
	s, err := Open(ctx, location)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	out := bufio.NewWriter(os.Stdout)
	now := time.Now().UTC()
	for i := 0; ; i++ {
		id := fmt.Sprintf("work_%d_%d", os.Getpid(), i)
		err := s.Tx(ctx, func(tx *ent.Tx) error {
			return tx.WorkItem.Create().SetID(id).SetObjective("durable").
				SetAcceptanceCriteria([]string{"survives SIGKILL"}).SetRisks([]string{}).
				SetUnresolvedQuestions([]string{}).SetChangedFiles([]string{}).
				SetCreatedAt(now).SetUpdatedAt(now).Exec(ctx)
		})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Fprintln(out, id)
		out.Flush()
	}
}

func TestDurabilityAcrossSIGKILL(t *testing.T) {
	e2etest.Require(t) // kills writer processes: the end-to-end tier
	pgtest.EachDialect(t, testDurabilityAcrossSIGKILL)
}

func testDurabilityAcrossSIGKILL(t *testing.T, path string) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	openT(t, path).Close() // migrate once so both writers start on the fast path

	acked := map[string]bool{}
	for round := 0; round < 3; round++ {
		cmd := exec.Command(exe, "-test.run=^$")
		cmd.Env = append(os.Environ(), envWriter+"="+path)
		cmd.Stderr = os.Stderr
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(stdout)
		n := 0
		for sc.Scan() {
			acked[sc.Text()] = true
			n++
			if n == 200+round*150 {
				if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
					t.Fatal(err)
				}
			}
		}
		_ = cmd.Wait()
		if n < 200 {
			t.Fatalf("round %d: writer acknowledged only %d records before exiting", round, n)
		}
	}

	s := openT(t, path)
	ctx := context.Background()
	ids := s.Client().WorkItem.Query().IDsX(ctx)
	seen := map[string]int{}
	for _, id := range ids {
		seen[id]++
	}
	for id, c := range seen {
		if c != 1 {
			t.Errorf("record %s stored %d times", id, c)
		}
	}
	for id := range acked {
		if seen[id] == 0 {
			t.Errorf("acknowledged record %s lost after SIGKILL", id)
		}
	}
	// At most one record per round may be committed but not yet printed.
	if extra := len(ids) - len(acked); extra < 0 || extra > 3 {
		t.Errorf("stored %d records, acknowledged %d", len(ids), len(acked))
	}
	if s.Dialect() != sqliteDialect {
		return
	}
	if problem, err := integrityProblem(ctx, s.DB()); err != nil || problem != "" {
		t.Fatalf("integrity after SIGKILL: %q, %v", problem, err)
	}
}
