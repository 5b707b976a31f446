package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-interop/runtime/internal/procgroup"
	"github.com/agent-interop/runtime/internal/testutil/pgtest"
	"github.com/agent-interop/runtime/internal/testutil/wait"
)

func callJSON(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any, out any) (bool, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait.Process)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	if !res.IsError && out != nil {
		if err := json.Unmarshal([]byte(text), out); err != nil {
			t.Fatalf("%s: %v: %s", name, err, text)
		}
	}
	return !res.IsError, text
}

func TestCoordinationToolsPersistAcrossRestarts(t *testing.T) {
	pgtest.EachDialect(t, testCoordinationToolsPersistAcrossRestarts)
}

func testCoordinationToolsPersistAcrossRestarts(t *testing.T, location string) {
	env := isolatedEnv(t, "INTEROP_DB="+location)
	cs := connect(t, []string{"serve", "--profile", "core"}, env)
	var work struct{ ID string }
	if ok, text := callJSON(t, cs, "create_work_item", map[string]any{"objective": "Fix the login bug", "acceptanceCriteria": []string{"tests pass"}}, &work); !ok {
		t.Fatal(text)
	}
	if ok, text := callJSON(t, cs, "create_work_item", map[string]any{"objective": "x", "acceptanceCriteria": []string{"y"}, "dependsOn": []string{"work_nope"}}, nil); ok || !strings.Contains(text, "work_nope") {
		t.Errorf("unknown dependency accepted: %s", text)
	}
	cs.Close()

	cs2 := connect(t, []string{"serve", "--profile", "legacy"}, env)
	var list []struct{ ID string }
	if ok, text := callJSON(t, cs2, "work_list", map[string]any{}, &list); !ok || len(list) != 1 || list[0].ID != work.ID {
		t.Fatalf("work_list after restart = %s", text)
	}
}

// TestClaimsAreAtomicAcrossRuntimeProcesses: two runtime processes on one
// database (a SQLite file; a PostgreSQL database, as two machines would)
// race 50 acquires of one resource; exactly one wins.
func TestClaimsAreAtomicAcrossRuntimeProcesses(t *testing.T) {
	pgtest.EachDialect(t, testClaimsAreAtomicAcrossRuntimeProcesses)
}

func testClaimsAreAtomicAcrossRuntimeProcesses(t *testing.T, location string) {
	env := isolatedEnv(t, "INTEROP_DB="+location)
	a := connect(t, []string{"serve", "--profile", "core"}, env)
	b := connect(t, []string{"serve", "--profile", "core"}, env)
	var work struct{ ID string }
	if ok, text := callJSON(t, a, "create_work_item", map[string]any{"objective": "race", "acceptanceCriteria": []string{"one winner"}}, &work); !ok {
		t.Fatal(text)
	}
	var mu sync.Mutex
	wins, conflicts := 0, 0
	var others []string
	var wg sync.WaitGroup
	for i := 0; i < 50; i++ {
		cs := a
		if i%2 == 1 {
			cs = b
		}
		wg.Add(1)
		go func(i int, cs *mcp.ClientSession) {
			defer wg.Done()
			ok, text := callJSON(t, cs, "acquire_claim", map[string]any{"workId": work.ID, "sessionId": fmt.Sprintf("codex:s%d", i), "resource": "src/auth", "kind": "directory"}, nil)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case ok:
				wins++
			case strings.Contains(text, "conflicts with active claim"):
				conflicts++
			default:
				others = append(others, text)
			}
		}(i, cs)
	}
	wg.Wait()
	if wins != 1 || conflicts != 49 || len(others) > 0 {
		t.Fatalf("wins %d conflicts %d others %v", wins, conflicts, others)
	}
	if n := countRows(t, location, "claims"); n != 1 && n != -1 {
		t.Fatalf("the team database holds %d claims, want 1", n)
	}
}

// TestKilledRuntimeKeepsEveryAcknowledgedRecord SIGKILLs a runtime in the
// middle of a stream of writes: every acknowledged record is there after a
// restart, exactly once; on SQLite and on PostgreSQL.
func TestKilledRuntimeKeepsEveryAcknowledgedRecord(t *testing.T) {
	pgtest.EachDialect(t, testKilledRuntimeKeepsEveryAcknowledgedRecord)
}

func testKilledRuntimeKeepsEveryAcknowledgedRecord(t *testing.T, location string) {
	env := isolatedEnv(t, "INTEROP_DB="+location)
	cmd := exec.Command(binary, "serve", "--profile", "core")
	cmd.Env = env
	procgroup.Set(cmd)
	client := newClient(t, "writer", cmd.Args, env, nil)
	cs, err := client.Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	acked := map[string]bool{}
	var mu sync.Mutex
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; ; i++ {
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "create_work_item", Arguments: map[string]any{"objective": fmt.Sprintf("record %d", i), "acceptanceCriteria": []string{"kept"}}})
			if err != nil || res.IsError {
				return
			}
			var w struct{ ID string }
			_ = json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &w)
			mu.Lock()
			acked[w.ID] = true
			mu.Unlock()
		}
	}()
	wait.Until(wait.Process, func() bool { // 40 writes, on a loaded machine and PostgreSQL too
		mu.Lock()
		defer mu.Unlock()
		return len(acked) >= 40
	})
	_ = procgroup.Kill(cmd.Process.Pid)
	<-done
	cs.Close()
	mu.Lock()
	defer mu.Unlock()
	if len(acked) < 40 {
		t.Fatalf("only %d writes acknowledged within %v", len(acked), wait.Process)
	}

	cs2 := connect(t, []string{"serve", "--profile", "core"}, env)
	// Page through every work (list_work_items answers pages).
	var list struct{ Works []struct{ ID string } }
	seen := map[string]int{}
	for cursor := ""; ; {
		var page struct {
			Works      []struct{ ID string }
			NextCursor string
		}
		args := map[string]any{"limit": 100}
		if cursor != "" {
			args["cursor"] = cursor
		}
		if ok, text := callJSON(t, cs2, "list_work_items", args, &page); !ok {
			t.Fatal(text)
		}
		list.Works = append(list.Works, page.Works...)
		if page.NextCursor == "" {
			break
		}
		cursor = page.NextCursor
	}
	for _, w := range list.Works {
		seen[w.ID]++
	}
	for id := range acked {
		if seen[id] != 1 {
			t.Errorf("acknowledged %s appears %d times after restart", id, seen[id])
		}
	}
	if n := countRows(t, location, "work_items"); n != len(list.Works) && n != -1 {
		t.Errorf("the team database holds %d work items, the runtime lists %d", n, len(list.Works))
	}
	if len(list.Works) > len(acked)+1 {
		t.Errorf("%d records stored but only %d acknowledged (at most one may have committed unacknowledged)", len(list.Works), len(acked))
	}
}
