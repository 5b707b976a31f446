package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-interop/runtime/internal/testutil/pgtest"
	"github.com/agent-interop/runtime/internal/testutil/syncbuf"
	"github.com/agent-interop/runtime/internal/testutil/wait"
)

// connectLogged is connect with the server's stderr (debug level) kept.
func connectLogged(t *testing.T, args []string, env []string) (*mcp.ClientSession, *syncbuf.Buffer) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = append(env, "INTEROP_LOG_LEVEL=debug")
	logs := &syncbuf.Buffer{}
	cmd.Stderr = logs
	client := newClient(t, "e2e", cmd.Args, cmd.Env, nil)
	ctx, cancel := context.WithTimeout(context.Background(), wait.Process)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect %v: %v (stderr: %s)", args, err, logs)
	}
	t.Cleanup(func() { cs.Close() })
	return cs, logs
}

// closedPort is a loopback port nothing listens on.
func closedPort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	return port
}

// TestTeamStoreUnreachableAtStartup: with the database down, serve still
// answers initialize and tools/list; get_runtime_status and doctor say why
// the store does not answer; a store tool fails with that reason; the
// password is in none of it (answers, errors, logs, doctor).
func TestTeamStoreUnreachableAtStartup(t *testing.T) {
	const password = "Unr3achableS3cret"
	dsn := "postgres://app:" + password + "@127.0.0.1:" + strconv.Itoa(closedPort(t)) + "/interop?sslmode=disable&connect_timeout=3"
	env := isolatedEnv(t, "INTEROP_DB="+dsn, "INTEROP_HOST=alpha")
	cs, logs := connectLogged(t, []string{"serve", "--profile", "core"}, env)
	ctx, cancel := context.WithTimeout(context.Background(), wait.Process)
	defer cancel()
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatalf("tools/list with the store down: %v", err)
	}
	var status struct {
		Store struct {
			Path, Dialect, Host, Error string
			Reachable                  *bool
		}
		Notes []string
	}
	ok, text := callJSON(t, cs, "get_runtime_status", map[string]any{}, &status)
	if !ok || status.Store.Dialect != "postgres" || status.Store.Host != "alpha" || status.Store.Reachable == nil || *status.Store.Reachable ||
		!strings.Contains(status.Store.Error, "127.0.0.1") || len(status.Notes) == 0 || !strings.Contains(status.Store.Path, "127.0.0.1") {
		t.Fatalf("get_runtime_status with the store down = %s", text)
	}
	ok, text = callJSON(t, cs, "create_work_item", map[string]any{"objective": "x", "acceptanceCriteria": []string{"y"}}, nil)
	if ok || !strings.Contains(text, "team store") || !strings.Contains(text, "nothing of this call was written") {
		t.Fatalf("create_work_item with the store down = %v %s", ok, text)
	}
	cs.Close()
	for what, s := range map[string]string{"status": text, "stderr": logs.String()} {
		if strings.Contains(s, password) {
			t.Errorf("the password appears in the %s: %s", what, s)
		}
	}

	cmd := exec.Command(binary, "doctor", "--json", "--timeout", "20s")
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var rep struct {
		Store struct {
			Path, Dialect, Error, Fix string
			Opens                     bool
		}
	}
	if exit, _ := err.(*exec.ExitError); exit == nil || exit.ExitCode() != 1 {
		t.Fatalf("doctor with the store down exited %v, want 1 (stderr %s)", err, stderr.String())
	}
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil || rep.Store.Opens || rep.Store.Dialect != "postgres" ||
		!strings.Contains(rep.Store.Error, "does not answer") || rep.Store.Fix == "" {
		t.Fatalf("doctor store report = %s (%v)", stdout.String(), err)
	}
	if strings.Contains(stdout.String()+stderr.String(), password) {
		t.Fatalf("doctor printed the password: %s %s", stdout.String(), stderr.String())
	}

	cmd = exec.Command(binary, "serve", "--db", dsn)
	cmd.Env = isolatedEnv(t)
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "process list") || strings.Contains(string(out), password) {
		t.Fatalf("serve --db with a password = %v: %s", err, out)
	}
}

// TestTeamStoreSharedAcrossMachines: two runtimes with different hosts on
// one database share work, claims and conversations; a provider session
// recorded by one host is listed with its host by the other, and a send to
// it from the other is refused naming the host.
func TestTeamStoreSharedAcrossMachines(t *testing.T) {
	dsn := pgtest.Database(t)
	alpha := connect(t, []string{"serve", "--profile", "full"}, isolatedEnv(t, "INTEROP_DB="+dsn, "INTEROP_HOST=alpha"))
	beta := connect(t, []string{"serve", "--profile", "full"}, isolatedEnv(t, "INTEROP_DB="+dsn, "INTEROP_HOST=beta"))

	var work struct{ ID string }
	if ok, text := callJSON(t, alpha, "create_work_item", map[string]any{"objective": "Shared", "acceptanceCriteria": []string{"seen by beta"}}, &work); !ok {
		t.Fatal(text)
	}
	var got struct {
		Work struct{ ID, Objective string }
	}
	if ok, text := callJSON(t, beta, "get_work_item", map[string]any{"workId": work.ID}, &got); !ok || got.Work.Objective != "Shared" {
		t.Fatalf("beta reading alpha's work item: %s", text)
	}
	if ok, text := callJSON(t, alpha, "acquire_claim", map[string]any{"workId": work.ID, "sessionId": "codex:on-alpha", "resource": "src/app.go"}, nil); !ok {
		t.Fatal(text)
	}
	if ok, text := callJSON(t, beta, "acquire_claim", map[string]any{"workId": work.ID, "sessionId": "codex:on-beta", "resource": "src/app.go"}, nil); ok || !strings.Contains(text, "held by codex:on-alpha") {
		t.Fatalf("beta's overlapping claim = %v %s", ok, text)
	}
	var conv struct{ ID string }
	if ok, text := callJSON(t, beta, "create_conversation", map[string]any{"title": "Across machines"}, &conv); !ok {
		t.Fatal(text)
	}
	if ok, text := callJSON(t, alpha, "read_conversation", map[string]any{"conversationId": conv.ID}, nil); !ok {
		t.Fatalf("alpha reading beta's conversation: %s", text)
	}

	// A Cursor session beta's runtime recorded (Cursor's program is not
	// installed here, so alpha's own Cursor adapter lists nothing).
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "INSERT INTO provider_sessions (provider, native_id, endpoint, cwd, title, state, host, first_seen_at, last_seen_at) "+
		"VALUES ('cursor', 'sess-beta', 'stdio:agent acp', '/work/beta', 'on beta', 'idle', 'beta', now(), now())"); err != nil {
		t.Fatal(err)
	}
	var list struct {
		Sessions []struct{ ID, Host string }
	}
	if ok, text := callJSON(t, alpha, "list_agent_sessions", map[string]any{"provider": "cursor"}, &list); !ok || len(list.Sessions) != 1 ||
		list.Sessions[0].ID != "cursor:sess-beta" || list.Sessions[0].Host != "beta" {
		t.Fatalf("alpha listing cursor sessions = %s", text)
	}
	ok, text := callJSON(t, alpha, "send_session_message", map[string]any{"provider": "cursor", "nativeId": "sess-beta", "text": "hi", "idempotencyKey": "k-remote"}, nil)
	if ok || !strings.Contains(text, "runs on host beta") || !strings.Contains(text, "nothing was sent") {
		t.Fatalf("alpha sending to beta's session = %v %s", ok, text)
	}
	var n int
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM operations").Scan(&n); err != nil || n != 0 {
		t.Fatalf("a refused send recorded %d operations (%v)", n, err)
	}
}

// TestTeamStoreConnectionDrop: the server ends every connection of the
// database (pg_terminate_backend) between calls; at most the next call
// fails, with a clear error and no password, and the runtime reconnects
// with everything written before still there.
func TestTeamStoreConnectionDrop(t *testing.T) {
	c := pgtest.Shared(t)
	dsn := pgtest.Database(t)
	cs := connect(t, []string{"serve", "--profile", "core"}, isolatedEnv(t, "INTEROP_DB="+dsn))
	var work struct{ ID string }
	if ok, text := callJSON(t, cs, "create_work_item", map[string]any{"objective": "before the drop", "acceptanceCriteria": []string{"kept"}}, &work); !ok {
		t.Fatal(text)
	}
	for round := 0; round < 3; round++ {
		n, err := c.TerminateConnections(context.Background(), pgtest.DatabaseName(dsn))
		if err != nil || n == 0 {
			t.Fatalf("round %d: terminated %d backends, %v", round, n, err)
		}
		failures := 0
		for attempt := 0; attempt < 2; attempt++ {
			var list struct{ Works []struct{ ID string } }
			ok, text := callJSON(t, cs, "list_work_items", map[string]any{}, &list)
			if ok {
				if len(list.Works) != 1 || list.Works[0].ID != work.ID {
					t.Fatalf("round %d: list after the drop = %s", round, text)
				}
				break
			}
			failures++
			if !strings.Contains(text, "connection to the team store") || strings.Contains(text, c.AppPassword()) {
				t.Fatalf("round %d: failure after the drop = %s", round, text)
			}
		}
		if failures > 1 {
			t.Fatalf("round %d: the runtime did not reconnect on the call after a failure", round)
		}
		t.Logf("round %d: %d backends terminated, %d call(s) failed before the reconnect", round, n, failures)
	}
}

// countRows counts a table's rows directly in a PostgreSQL location (so a
// test knows the runtime wrote there); -1 for a SQLite location.
func countRows(t *testing.T, location, table string) int {
	t.Helper()
	if !strings.HasPrefix(location, "postgres") {
		return -1
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, location)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM "+table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
