package security

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The marker every secret file holds; no output may ever contain it.
const secretMarker = "TOP-SECRET-MARKER-7f3a"

type fixture struct {
	root    string // the project
	outside string // a sibling directory outside the project
}

// newFixture builds a project full of traps next to an outside directory.
func newFixture(t *testing.T) fixture {
	t.Helper()
	base := t.TempDir()
	root := filepath.Join(base, "project")
	outside := filepath.Join(base, "outside")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	write := func(rel, body string) {
		t.Helper()
		p := filepath.Join(root, filepath.FromSlash(rel))
		must(os.MkdirAll(filepath.Dir(p), 0o755))
		must(os.WriteFile(p, []byte(body), 0o644))
	}
	secret := "key=" + secretMarker + "\n"
	must(os.MkdirAll(outside, 0o755))
	must(os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("plain "+secretMarker+"\n"), 0o644))
	must(os.WriteFile(filepath.Join(outside, "id_rsa"), []byte(secretMarker), 0o600))
	must(os.WriteFile(filepath.Join(outside, "plain.txt"), []byte("plain "+secretMarker+"\n"), 0o644))

	write("README.md", "hello project\n")
	write("src/main.go", "package main\n")
	write("id_rsa.pub", "ssh-ed25519 AAAAC3 public\n")
	for _, rel := range []string{
		".env", ".ENV", ".env.local", ".env.", "config/.env.production", ".envrc",
		"\uff0e\uff45\uff4e\uff56", // full-width ".env"
		".e\u200bnv",               // zero-width space inside
		"id_rsa ",                  // trailing space
		"keys/server.pem", "keys/SERVER.PEM", "keys/id_rsa", "keys/id_ed25519", "keys/tls.key",
		"certs/client.p12", "certs/store.keystore", "certs/app.jks", "certs/client.pfx",
		".npmrc", ".pypirc", ".netrc", ".git-credentials", "credentials.json", "auth.json",
		".aws/credentials", ".docker/config.json", ".kube/config", ".ssh/config", ".ssh/known_hosts",
		"nested/deep/.AWS/Credentials",
	} {
		write(rel, secret)
	}
	write("big.txt", strings.Repeat("a", MaxFileBytes+1))
	write("binary.bin", "abc\x00def "+secretMarker)
	write("latin1.txt", "caf\xe9 "+secretMarker)
	must(os.MkdirAll(filepath.Join(root, "emptydir"), 0o755))

	link := func(target, name string) {
		t.Helper()
		must(os.Symlink(target, filepath.Join(root, name)))
	}
	link("../outside/secret.txt", "link_out")
	link(filepath.Join(outside, "secret.txt"), "link_abs")
	link("/etc/passwd", "link_passwd")
	link(".env", "link_env")
	link("keys/id_rsa", "innocent.txt")
	link(".ssh", "sshdir")
	link("../outside", "dirlink")
	link("/dev/null", "dev_null")
	link("loop2", "loop1")
	link("loop1", "loop2")
	link("missing-target", "dangling")
	must(makeFIFO(filepath.Join(root, "fifo")))
	if l, err := net.Listen("unix", filepath.Join(root, "sock")); err == nil {
		t.Cleanup(func() { l.Close() })
	}
	makeCharDevice(filepath.Join(root, "devnull"))
	return fixture{root: root, outside: outside}
}

// hostilePaths is the corpus of requests that must never yield content.
func hostilePaths(f fixture) []string {
	return []string{
		// traversal
		"../outside/secret.txt", "../../etc/passwd", "src/../../outside/secret.txt", "./../outside/secret.txt",
		"src/./../../outside/secret.txt", "..", "../", "../project/.env", "src/../.env", ".git/../.env",
		"..\\outside\\secret.txt", "src\\..\\..\\outside\\secret.txt",
		// absolute and home-relative
		"/etc/passwd", filepath.Join(f.outside, "secret.txt"), filepath.Join(f.root, "README.md"),
		"~/.ssh/id_rsa", "~", "\\etc\\passwd", "C:\\Windows\\win.ini", "c:/secret",
		// percent and unicode tricks
		"%2e%2e/outside/secret.txt", "%2e%2e%2foutside%2fsecret.txt", "..%2foutside/secret.txt",
		"%252e%252e/outside/secret.txt", "\uff0e\uff0e/outside/secret.txt", "src/%2E%2E/%2E%2E/outside/secret.txt",
		// credential files, case and look-alike variants
		".env", ".ENV", ".Env", ".env.local", ".env.", ".env.production", "config/.env.production", ".envrc",
		"\uff0e\uff45\uff4e\uff56", ".e\u200bnv", "id_rsa ", "./.env", "src//..//.env",
		"keys/server.pem", "keys/SERVER.PEM", "keys/id_rsa", "keys/id_ed25519", "keys/tls.key",
		"certs/client.p12", "certs/store.keystore", "certs/app.jks", "certs/client.pfx",
		".npmrc", ".pypirc", ".netrc", ".git-credentials", "credentials.json", "auth.json",
		".aws/credentials", ".AWS/Credentials", "nested/deep/.AWS/Credentials", ".docker/config.json",
		".kube/config", ".ssh/config", ".ssh/known_hosts", ".ssh", ".ssh/",
		// symlinks out of the root and onto secrets
		"link_out", "link_abs", "link_passwd", "link_env", "innocent.txt", "sshdir/config", "dirlink/secret.txt", "dirlink/plain.txt",
		"dirlink/id_rsa", "dev_null", "loop1", "dangling",
		// not regular files
		"fifo", "sock", "devnull", "emptydir", "emptydir/", "src", "src/", ".", "", "README.md/",
		// size and content
		"big.txt", "binary.bin", "latin1.txt",
		// malformed
		"README.md\x00.txt", "\x00", strings.Repeat("a/", 3000) + "x", strings.Repeat("x", 300),
		"caf\xe9.txt",
	}
}

func TestHostilePathCorpus(t *testing.T) {
	f := newFixture(t)
	corpus := hostilePaths(f)
	if len(corpus) < 50 {
		t.Fatalf("hostile corpus has %d paths, want >= 50", len(corpus))
	}
	roots := NewRoots(func(k string) (string, bool) {
		if k == EnvProjectRoots {
			return f.root, true
		}
		return "", false
	})
	for _, rel := range corpus {
		t.Run(strings.ReplaceAll(rel, "/", "|"), func(t *testing.T) {
			content, err := ReadFile(f.root, rel)
			if err == nil {
				t.Fatalf("ReadFile(%q) succeeded with %q", rel, content)
			}
			if strings.Contains(content, secretMarker) || strings.Contains(err.Error(), secretMarker) {
				t.Fatalf("secret leaked: %q / %v", content, err)
			}
			if text, err := ReadText(f.root, rel); err == nil {
				t.Fatalf("ReadText(%q) succeeded with %q", rel, text)
			}
			if p, err := ResolveFile(f.root, rel); err == nil && !isSizeOrContentCase(rel) {
				t.Fatalf("ResolveFile(%q) = %q", rel, p)
			}
			// The same request as an absolute path through the approved roots.
			abs := f.root + "/" + rel
			if text, err := roots.ReadFile(abs); err == nil {
				t.Fatalf("Roots.ReadFile(%q) succeeded with %q", abs, text)
			}
			if files, err := ListFiles(f.root, rel); err == nil {
				for _, name := range files {
					if IsProtectedPath(name) {
						t.Fatalf("ListFiles(%q) exposed %q", rel, name)
					}
				}
			}
		})
	}
}

// isSizeOrContentCase names entries that resolve to a legitimate regular file
// but are refused for their size or content.
func isSizeOrContentCase(rel string) bool {
	switch rel {
	case "big.txt", "binary.bin", "latin1.txt":
		return true
	}
	return false
}

func TestHostileErrorsKeepUpstreamTexts(t *testing.T) {
	f := newFixture(t)
	for _, tc := range []struct {
		rel  string
		want error
	}{
		{"../outside/secret.txt", ErrEscapes},
		{"/etc/passwd", ErrEscapes},
		{"link_out", ErrEscapes},
		{"dirlink/plain.txt", ErrEscapes},
		{".env", ErrProtected},
		{".ENV", ErrProtected},
		{"innocent.txt", ErrProtected},
		{".aws/credentials", ErrProtected},
		{"fifo", ErrNotRegular},
		{"emptydir", ErrNotRegular},
		{"big.txt", ErrTooLarge},
		{"binary.bin", ErrBinary},
		{"latin1.txt", ErrBinary},
		{"nope.txt", ErrNotFound},
	} {
		_, err := ReadFile(f.root, tc.rel)
		if !errors.Is(err, tc.want) {
			t.Errorf("ReadFile(%q) = %v, want %v", tc.rel, err, tc.want)
		}
	}
	if ErrEscapes.Error() != "Path escapes the Freebuff project" ||
		ErrProtected.Error() != "Protected file access denied" ||
		ErrNotRegular.Error() != "Only regular files may be read" {
		t.Fatal("upstream error texts changed")
	}
}

func TestReadAllowed(t *testing.T) {
	f := newFixture(t)
	for rel, want := range map[string]string{
		"README.md":   "hello project\n",
		"./README.md": "hello project\n",
		"src/main.go": "package main\n",
		"id_rsa.pub":  "ssh-ed25519 AAAAC3 public\n",
	} {
		got, err := ReadFile(f.root, rel)
		if err != nil || got != want {
			t.Errorf("ReadFile(%q) = %q, %v; want %q", rel, got, err, want)
		}
	}
	// A ".." component is refused even when it stays inside the project.
	if _, err := ReadFile(f.root, "src/../README.md"); !errors.Is(err, ErrEscapes) {
		t.Errorf("ReadFile(src/../README.md) = %v, want %v", err, ErrEscapes)
	}
	// The root itself may be reached through a symlink.
	alias := filepath.Join(t.TempDir(), "alias")
	if err := os.Symlink(f.root, alias); err != nil {
		t.Fatal(err)
	}
	if got, err := ReadFile(alias, "README.md"); err != nil || got != "hello project\n" {
		t.Fatalf("ReadFile via root symlink = %q, %v", got, err)
	}
}

func TestListFilesShallowAndFiltered(t *testing.T) {
	f := newFixture(t)
	got, err := ListFiles(f.root, "")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"README.md", "big.txt", "binary.bin", "id_rsa.pub", "latin1.txt"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("ListFiles = %q, want %q", got, want)
	}
	got, err = ListFiles(f.root, "src")
	if err != nil || strings.Join(got, ",") != "src/main.go" {
		t.Fatalf("ListFiles(src) = %q, %v", got, err)
	}
	got, err = ListFiles(f.root, "keys")
	if err != nil || len(got) != 0 {
		t.Fatalf("ListFiles(keys) = %q, %v (every key file must be hidden)", got, err)
	}
	for _, rel := range []string{"../outside", "dirlink", ".ssh", "sshdir", "README.md", "/", "..", "%2e%2e"} {
		if files, err := ListFiles(f.root, rel); err == nil {
			t.Errorf("ListFiles(%q) = %q, want an error", rel, files)
		}
	}
}

func TestRootsFromEnv(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	env := map[string]string{EnvProjectRoots: a + string(os.PathListSeparator) + "relative/dir" + string(os.PathListSeparator) + "/" + string(os.PathListSeparator) + b}
	r := NewRoots(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if got := r.List(); len(got) != 2 {
		t.Fatalf("List = %q", got)
	}
	if got := r.Ignored(); len(got) != 2 {
		t.Fatalf("Ignored = %q", got)
	}
	c := t.TempDir()
	if err := r.Add(c, "rel"); err == nil {
		t.Fatal("Add accepted a relative root")
	}
	if root, rel, err := r.Locate(filepath.Join(c, "x", "y.txt")); err != nil || root != c || rel != "x/y.txt" {
		t.Fatalf("Locate = %q %q %v", root, rel, err)
	}
	if _, _, err := r.Locate("/etc/passwd"); !errors.Is(err, ErrNotApproved) {
		t.Fatalf("Locate outside = %v", err)
	}
	if _, _, err := r.Locate(filepath.Join(c, "..", "..", "etc")); !errors.Is(err, ErrNotApproved) {
		t.Fatalf("Locate traversal = %v", err)
	}
	if NewRoots(nil).List() == nil {
		t.Fatal("nil lookup must give an empty list")
	}
}

func TestRootsDirectory(t *testing.T) {
	base := t.TempDir()
	approved := filepath.Join(base, "approved")
	session := filepath.Join(base, "session")
	other := filepath.Join(base, "other")
	for _, d := range []string{filepath.Join(approved, "sub"), session, other} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(other, filepath.Join(approved, "out")); err != nil {
		t.Fatal(err)
	}
	r := NewRoots(func(k string) (string, bool) { return approved, k == EnvProjectRoots })
	r.SetWorkspaceLookup(func(_ context.Context, dir string) (bool, error) { return dir == session, nil })
	ctx := context.Background()
	for dir, ok := range map[string]bool{
		approved: true, filepath.Join(approved, "sub"): true, session: true,
		other: false, filepath.Join(approved, "out"): false, filepath.Join(approved, ".."): false, "relative": false, "/": false,
	} {
		got, err := r.Directory(ctx, dir)
		if ok && err != nil {
			t.Errorf("Directory(%q) = %v, want approved", dir, err)
		}
		if !ok && !errors.Is(err, ErrNotApproved) {
			t.Errorf("Directory(%q) = %q, %v; want %v", dir, got, err, ErrNotApproved)
		}
	}
}
