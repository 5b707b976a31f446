// Command pgcluster starts one throw-away PostgreSQL cluster with the test
// settings and lends it to the test binaries scripts/test.sh runs: it
// writes "INTEROP_TEST_PG=<value>" (pgtest.EnvShared, pgtest.Cluster.Lend)
// and its own pid, one a line, to the file it is given, then serves until
// SIGTERM or SIGINT, when it stops the cluster and removes its files. Each
// test still gets a database of its own; initdb, the server start and the
// store's template database (pgtest.Cluster.NewDatabaseFrom, made by the
// first test binary that asks) are shared, once per run instead of once
// per test binary.
//
//	pgcluster FILE
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/agent-interop/runtime/internal/testutil/pgtest"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: pgcluster FILE")
		os.Exit(2)
	}
	if err := run(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "pgcluster:", err)
		os.Exit(1)
	}
}

func run(file string) error {
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	// Room for the connections of two test binaries at once (go test -p),
	// each of which had a server of 200 to itself.
	settings := map[string]string{"max_connections": "400"}
	for k, v := range pgtest.TestSettings {
		settings[k] = v
	}
	c, err := pgtest.Start(context.Background(), pgtest.Options{Settings: settings, StartTimeout: 5 * time.Minute})
	if err != nil {
		return err
	}
	defer func() { _ = c.Stop() }()
	// Written whole to a temporary name, then renamed: a reader never sees
	// half of it.
	tmp := file + ".tmp"
	if err := os.WriteFile(tmp, fmt.Appendf(nil, "%s=%s\n%d\n", pgtest.EnvShared, c.Lend(), os.Getpid()), 0o600); err != nil {
		return fmt.Errorf("write %s: %w", tmp, err)
	}
	if err := os.Rename(tmp, file); err != nil {
		return fmt.Errorf("write %s: %w", file, err)
	}
	fmt.Printf("PostgreSQL cluster on 127.0.0.1:%d\n", c.Port)
	<-stop
	return nil
}
