package pgtest

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestThrowAwayDatabase: a cluster starts, its database accepts the
// application role over TCP with its password (and refuses a wrong one),
// the role is no superuser, and stop leaves no server and no files behind.
func TestThrowAwayDatabase(t *testing.T) {
	RequireTier(t)
	if _, err := FindBinDir(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := Start(ctx, Options{})
	if err != nil {
		t.Fatal(err)
	}
	dsn, err := c.NewDatabase(ctx)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	var super bool
	if err := conn.QueryRow(ctx, "SELECT rolsuper FROM pg_roles WHERE rolname = current_user").Scan(&super); err != nil || super {
		t.Fatalf("application role superuser = %v, %v", super, err)
	}
	conn.Close(ctx)
	if _, err := pgx.Connect(ctx, strings.Replace(dsn, c.AppPassword(), "wrong", 1)); err == nil {
		t.Fatal("a wrong password was accepted")
	}
	// A cluster lent to another test binary (EnvShared) serves it, and
	// that binary's Stop leaves it running.
	lent, err := Attach(c.Lend())
	if err != nil {
		t.Fatal(err)
	}
	other, err := lent.NewDatabase(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := lent.Stop(); err != nil {
		t.Fatal(err)
	}
	conn, err = pgx.Connect(ctx, other)
	if err != nil {
		t.Fatalf("the lent cluster after the borrower's Stop: %v", err)
	}
	conn.Close(ctx)
	pid := c.cmd.Process.Pid
	dir := c.dir
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("cluster directory left behind: %v", err)
	}
	if out, err := exec.Command("ps", "-o", "pid=", "-p", strconv.Itoa(pid)).Output(); err == nil && len(strings.TrimSpace(string(out))) > 0 {
		t.Fatalf("server process %d still running", pid)
	}
}

// TestAttachRefusesWhatLendDidNotMake: a malformed EnvShared value is an
// error naming the variable, never a cluster on some other host.
func TestAttachRefusesWhatLendDidNotMake(t *testing.T) {
	for _, v := range []string{
		"not a url\x7f",
		"postgres://postgres:pw@127.0.0.1:5432/postgres",        // no app password
		"postgres://postgres:pw@db.example:5432/postgres?app=x", // not loopback
		"postgres://postgres@127.0.0.1:5432/postgres?app=x",     // no admin password
		"postgres://postgres:pw@127.0.0.1/postgres?app=x",       // no port
	} {
		if _, err := Attach(v); err == nil || !strings.Contains(err.Error(), EnvShared) {
			t.Errorf("Attach(%q) = %v, want an error naming %s", v, err, EnvShared)
		}
	}
}
