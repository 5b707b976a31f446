// Package pgtest starts throw-away PostgreSQL clusters for tests and
// benchmarks: initdb in a temporary directory, the server on a free
// 127.0.0.1 port, run as an unprivileged user (postgres refuses to run as
// root, so a root process runs it as "nobody"), password authentication
// over TCP, and an unprivileged application role that owns each database a
// test asks for. Nothing outside the temporary directory is touched, and
// the server dies with the process that started it.
//
// Start and Cluster need no testing package (internal/bench can use them);
// Shared, Database and EachDialect are the test glue.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agent-interop/runtime/internal/procgroup"
	"github.com/agent-interop/runtime/internal/testutil/wait"
)

// EnvBinDir overrides where the PostgreSQL server programs are looked up.
const EnvBinDir = "INTEROP_PG_BINDIR"

// AppRole is the unprivileged role that owns the databases of a cluster.
const AppRole = "interop_app"

// InstallHint says how to get the server programs.
const InstallHint = "install PostgreSQL (Debian: apt-get install postgresql; scripts/test.sh does it), " +
	"or set " + EnvBinDir + " to the directory holding initdb and postgres"

// ErrNotInstalled is wrapped by Start when no server programs are found.
var ErrNotInstalled = errors.New("PostgreSQL server programs not found")

// Options configure Start.
type Options struct {
	// Settings are extra server settings (name → value), e.g.
	// {"fsync": "off"} for a benchmark that does not measure durability.
	Settings map[string]string
	// StartTimeout bounds initdb and the server start (default 60 s).
	StartTimeout time.Duration
}

// Cluster is a running throw-away server.
type Cluster struct {
	// Port is the server's TCP port on 127.0.0.1.
	Port int

	dir      string
	bin      string
	adminPW  string
	appPW    string
	cmd      *exec.Cmd
	done     chan struct{} // closed when the server process exited
	waitErr  error
	attached bool // another process started it (Attach) and stops it
	stopOnce sync.Once
	stopErr  error

	// The template databases this value found or made (NewDatabaseFrom):
	// only its first NewDatabaseFrom of a template asks the server.
	tmplMu    sync.Mutex
	tmplReady map[string]bool

	// createConn is the superuser's connection to database postgres that
	// creates this value's databases, opened on first use and kept: a
	// connection per database cost the server a backend start and a
	// password exchange each time.
	createMu   sync.Mutex
	createConn *pgx.Conn
}

// nextDB numbers the databases this process creates, on any cluster: two
// Cluster values of the process may name the same server (Attach).
var nextDB atomic.Int64

// FindBinDir returns the directory holding initdb and postgres.
func FindBinDir() (string, error) {
	if d := os.Getenv(EnvBinDir); d != "" {
		if ok(d) {
			return d, nil
		}
		return "", fmt.Errorf("%w in %s=%s: %s", ErrNotInstalled, EnvBinDir, d, InstallHint)
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		if d := filepath.Dir(resolve(p)); ok(d) {
			return d, nil
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return majorOf(dirs[i]) > majorOf(dirs[j]) })
	for _, d := range dirs {
		if ok(d) {
			return d, nil
		}
	}
	return "", fmt.Errorf("%w: %s", ErrNotInstalled, InstallHint)
}

func ok(dir string) bool {
	for _, p := range []string{"initdb", "postgres"} {
		if fi, err := os.Stat(filepath.Join(dir, p)); err != nil || fi.Mode()&0o111 == 0 {
			return false
		}
	}
	return true
}

func resolve(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}

func majorOf(dir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(dir)))
	return n
}

// Start creates and starts a cluster. Stop it with Stop; it also stops
// when the calling process dies.
func Start(ctx context.Context, opts Options) (*Cluster, error) {
	bin, err := FindBinDir()
	if err != nil {
		return nil, err
	}
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = 60 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, opts.StartTimeout)
	defer cancel()
	user, err := serverUser()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "interop-pg-")
	if err != nil {
		return nil, fmt.Errorf("pgtest: temp dir: %w", err)
	}
	c := &Cluster{dir: dir, bin: bin, adminPW: secret(), appPW: secret(), done: make(chan struct{})}
	fail := func(err error) (*Cluster, error) {
		_ = c.Stop()
		return nil, err
	}
	pwfile := filepath.Join(dir, "pwfile")
	if err := os.WriteFile(pwfile, []byte(c.adminPW+"\n"), 0o600); err != nil {
		return fail(fmt.Errorf("pgtest: %w", err))
	}
	for _, p := range []string{dir, pwfile} {
		if err := user.own(p); err != nil {
			return fail(fmt.Errorf("pgtest: hand %s to the server user: %w", p, err))
		}
	}
	initdb := exec.CommandContext(ctx, filepath.Join(bin, "initdb"), "-D", c.dataDir(), "-U", "postgres",
		"--pwfile="+pwfile, "--auth-host=scram-sha-256", "--auth-local=scram-sha-256",
		"--encoding=UTF8", "--no-locale", "--no-sync", "--no-instructions")
	initdb.Env = serverEnv()
	procgroup.Set(initdb)
	user.apply(initdb)
	if out, err := initdb.CombinedOutput(); err != nil {
		return fail(fmt.Errorf("pgtest: initdb: %v\n%s", err, out))
	}
	_ = os.Remove(pwfile)
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		port, err := freePort()
		if err != nil {
			return fail(err)
		}
		c.Port = port
		if lastErr = c.run(ctx, user, opts.Settings); lastErr == nil {
			break
		}
		if ctx.Err() != nil {
			break
		}
	}
	if lastErr != nil {
		return fail(lastErr)
	}
	if err := c.admin(ctx, "postgres", fmt.Sprintf("CREATE ROLE %s LOGIN PASSWORD '%s' NOSUPERUSER NOCREATEDB NOCREATEROLE",
		AppRole, c.appPW)); err != nil {
		return fail(err)
	}
	return c, nil
}

func (c *Cluster) dataDir() string { return filepath.Join(c.dir, "data") }

// run starts the server on c.Port and waits until it accepts connections.
func (c *Cluster) run(ctx context.Context, user *osUser, settings map[string]string) error {
	args := []string{"-D", c.dataDir(), "-h", "127.0.0.1", "-p", strconv.Itoa(c.Port), "-k", c.dir,
		"-c", "max_connections=200", "-c", "shared_buffers=32MB", "-c", "log_min_messages=warning"}
	for k, v := range settings {
		args = append(args, "-c", k+"="+v)
	}
	logf, err := os.OpenFile(filepath.Join(c.dir, "server.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("pgtest: server log: %w", err)
	}
	defer logf.Close()
	cmd := exec.Command(filepath.Join(c.bin, "postgres"), args...)
	cmd.Env = serverEnv()
	cmd.Stdout, cmd.Stderr = logf, logf
	// The server dies with this process (on Linux): SIGQUIT (immediate
	// shutdown) when the thread that started it exits, and that thread
	// lives until the server has exited.
	procgroup.SetWithParentDeath(cmd, syscall.SIGQUIT)
	user.apply(cmd)
	done := make(chan struct{})
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends after the server did
		if err := cmd.Start(); err != nil {
			started <- err
			close(done)
			return
		}
		started <- nil
		c.waitErr = cmd.Wait()
		close(done)
	}()
	if err := <-started; err != nil {
		return fmt.Errorf("pgtest: start postgres: %w", err)
	}
	for {
		conn, err := pgx.Connect(ctx, c.AdminDSN("postgres"))
		if err == nil {
			_ = conn.Close(ctx)
			c.cmd, c.done = cmd, done
			return nil
		}
		select {
		case <-done:
			log, _ := os.ReadFile(filepath.Join(c.dir, "server.log"))
			return fmt.Errorf("pgtest: postgres exited during start-up (%v):\n%s", c.waitErr, tail(log, 2000))
		case <-ctx.Done():
			_ = cmd.Process.Kill()
			<-done
			return fmt.Errorf("pgtest: postgres did not accept connections in time: %v", err)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// AdminDSN is the superuser's URL for a database of the cluster.
func (c *Cluster) AdminDSN(db string) string {
	return fmt.Sprintf("postgres://postgres:%s@127.0.0.1:%d/%s?sslmode=disable", c.adminPW, c.Port, db)
}

// AppPassword is the application role's password (tests check it never
// appears in what the runtime prints).
func (c *Cluster) AppPassword() string { return c.appPW }

// NewDatabase creates an empty database owned by the unprivileged
// application role and returns the role's URL for it (password included).
func (c *Cluster) NewDatabase(ctx context.Context) (string, error) {
	name := newName()
	// FILE_COPY: see NewDatabaseFrom; for template1 it costs the server
	// half of WAL_LOG's CPU.
	if err := c.create(ctx, "CREATE DATABASE "+name+" OWNER "+AppRole+" STRATEGY FILE_COPY"); err != nil {
		return "", err
	}
	return c.DSN(name), nil
}

// DSN is the application role's URL for database db.
func (c *Cluster) DSN(db string) string {
	return fmt.Sprintf("postgres://%s:%s@127.0.0.1:%d/%s?sslmode=disable", AppRole, c.appPW, c.Port, db)
}

// TerminateConnections ends every server process connected to database db
// (pg_terminate_backend), as a dropped network connection or a restarted
// server would, and returns how many it ended.
func (c *Cluster) TerminateConnections(ctx context.Context, db string) (int, error) {
	conn, err := pgx.Connect(ctx, c.AdminDSN("postgres"))
	if err != nil {
		return 0, fmt.Errorf("pgtest: connect as admin: %w", err)
	}
	defer conn.Close(ctx)
	var n int
	err = conn.QueryRow(ctx, "SELECT count(*) FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity "+
		"WHERE datname = $1 AND pid <> pg_backend_pid()) t", db).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("pgtest: terminate connections to %s: %w", db, err)
	}
	return n, nil
}

// Admin runs one statement as the superuser in database db.
func (c *Cluster) Admin(ctx context.Context, db, stmt string) error { return c.admin(ctx, db, stmt) }

// create runs a CREATE DATABASE on createConn, connecting first when it
// has none; a connection that failed is closed and the next call opens
// another.
func (c *Cluster) create(ctx context.Context, stmt string) error {
	c.createMu.Lock()
	defer c.createMu.Unlock()
	if c.createConn == nil {
		conn, err := pgx.Connect(ctx, c.AdminDSN("postgres"))
		if err != nil {
			return fmt.Errorf("pgtest: connect as admin: %w", err)
		}
		c.createConn = conn
	}
	if _, err := c.createConn.Exec(ctx, stmt); err != nil {
		if c.createConn.IsClosed() || ctx.Err() != nil {
			_ = c.createConn.Close(context.WithoutCancel(ctx))
			c.createConn = nil
		}
		return fmt.Errorf("pgtest: %.40s: %w", stmt, err)
	}
	return nil
}

// closeCreate closes createConn, if open.
func (c *Cluster) closeCreate() {
	c.createMu.Lock()
	defer c.createMu.Unlock()
	if c.createConn != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = c.createConn.Close(ctx)
		c.createConn = nil
	}
}

func (c *Cluster) admin(ctx context.Context, db, stmt string) error {
	conn, err := pgx.Connect(ctx, c.AdminDSN(db))
	if err != nil {
		return fmt.Errorf("pgtest: connect as admin: %w", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, stmt); err != nil {
		return fmt.Errorf("pgtest: %.40s: %w", stmt, err)
	}
	return nil
}

// EnvShared names the variable through which a process that started a
// cluster (internal/testutil/pgtest/pgcluster, run by scripts/test.sh) lends
// it to the test binaries it runs: Shared attaches to it instead of starting
// one per test binary. Its value is Lend's.
const EnvShared = "INTEROP_TEST_PG"

// Lend returns the value of EnvShared for this cluster: the superuser's
// URL, with the application role's password as the parameter app.
func (c *Cluster) Lend() string {
	return fmt.Sprintf("postgres://postgres:%s@127.0.0.1:%d/postgres?app=%s", c.adminPW, c.Port, c.appPW)
}

// Attach uses the cluster a value of EnvShared names. Its Stop stops
// nothing: the cluster belongs to the process that started it.
func Attach(lent string) (*Cluster, error) {
	u, err := url.Parse(lent)
	if err != nil {
		return nil, fmt.Errorf("pgtest: %s is no URL: %w", EnvShared, err)
	}
	port, err := strconv.Atoi(u.Port())
	admin, _ := u.User.Password()
	app := u.Query().Get("app")
	if err != nil || u.Hostname() != "127.0.0.1" || admin == "" || app == "" {
		return nil, fmt.Errorf("pgtest: %s is not a value Lend made (postgres://postgres:PW@127.0.0.1:PORT/postgres?app=PW)", EnvShared)
	}
	return &Cluster{Port: port, adminPW: admin, appPW: app, attached: true, done: make(chan struct{})}, nil
}

// Stop shuts the server down (fast shutdown, then a kill when it has not
// exited within wait.Process) and removes the cluster's directory; on an
// attached cluster it closes this value's connection and stops nothing.
func (c *Cluster) Stop() error {
	c.stopOnce.Do(func() {
		c.closeCreate()
		if c.attached {
			return
		}
		if c.cmd != nil && c.cmd.Process != nil {
			_ = interrupt(c.cmd.Process)
			if _, exited := wait.RecvWithin(wait.Process, c.done); !exited {
				_ = c.cmd.Process.Kill()
				<-c.done
			}
		}
		c.stopErr = os.RemoveAll(c.dir)
	})
	return c.stopErr
}

func serverEnv() []string {
	return []string{"PATH=" + os.Getenv("PATH"), "LC_ALL=C", "LANG=C", "TZ=UTC"}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("pgtest: find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func secret() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "pw" + hex.EncodeToString(b[:])
}

func tail(b []byte, n int) string {
	s := strings.TrimSpace(string(b))
	if len(s) > n {
		s = "…" + s[len(s)-n:]
	}
	return s
}

// ThrowAwayDatabase starts a cluster with one empty database owned by the
// application role and returns its URL and the function that stops the
// cluster (and removes its files). For a benchmark that wants PostgreSQL
// beside SQLite:
//
//	dsn, stop, err := pgtest.ThrowAwayDatabase(ctx, pgtest.Options{})
//	if err != nil { ... }
//	defer stop()
//	st, err := store.Open(ctx, dsn)
func ThrowAwayDatabase(ctx context.Context, opts Options) (dsn string, stop func() error, err error) {
	c, err := Start(ctx, opts)
	if err != nil {
		return "", nil, err
	}
	dsn, err = c.NewDatabase(ctx)
	if err != nil {
		_ = c.Stop()
		return "", nil, err
	}
	return dsn, c.Stop, nil
}
