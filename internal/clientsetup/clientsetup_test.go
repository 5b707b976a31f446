package clientsetup

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// golden compares got with testdata/<name>, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/clientsetup -update)", err)
	}
	if d := cmp.Diff(string(want), string(got)); d != "" {
		t.Fatalf("%s (-want +got):\n%s", path, d)
	}
}

var stdioEntry = Entry{Command: "/opt/bin/interop-runtime", Profile: "core", ReadOnly: true}

func TestMergeCodex(t *testing.T) {
	for _, tc := range []struct {
		fixture string
		entry   Entry
		wantErr string // regexp; "" = merges
	}{
		{fixture: "empty", entry: stdioEntry},
		{fixture: "unrelated", entry: stdioEntry},
		{fixture: "repair", entry: stdioEntry},
		{fixture: "dotted", entry: stdioEntry},
		{fixture: "inline-in-parent", entry: stdioEntry},
		{fixture: "no-final-newline", entry: Entry{Command: `C:\Program Files\interop-runtime.exe`}},
		{fixture: "unrelated", entry: Entry{HTTP: true, URL: "http://127.0.0.1:9999/mcp"}},
		{fixture: "malformed", entry: stdioEntry, wantErr: `malformed\.toml:3:\d+: not valid TOML`},
		{fixture: "inline-root", entry: stdioEntry, wantErr: `would not parse`},
		{fixture: "array-table", entry: stdioEntry, wantErr: `array of tables`},
	} {
		name := tc.fixture
		if tc.entry.HTTP {
			name += "-http"
		}
		t.Run(name, func(t *testing.T) {
			file := filepath.Join("testdata", "codex", tc.fixture+".toml")
			old, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			target := Target{Client: Codex, File: file, Name: "agent_interop"}
			got, err := Merge(target, tc.entry, old)
			if tc.wantErr != "" {
				if err == nil || !regexp.MustCompile(tc.wantErr).MatchString(err.Error()) {
					t.Fatalf("err = %v, want /%s/", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			golden(t, filepath.Join("codex", name+".golden"), got)
			// Merging again changes nothing.
			again, err := Merge(target, tc.entry, got)
			if err != nil || !bytes.Equal(again, got) {
				t.Fatalf("second merge differs (err %v):\n%s", err, again)
			}
			// Every comment of the original outside our old entry survives.
			for _, line := range strings.Split(string(old), "\n") {
				if c := strings.TrimSpace(line); strings.HasPrefix(c, "#") && !strings.Contains(c, "old entry") && !bytes.Contains(got, []byte(c)) {
					t.Errorf("comment %q lost", c)
				}
			}
		})
	}
}

func TestMergeJSON(t *testing.T) {
	for _, tc := range []struct {
		fixture string
		client  Client
		entry   Entry
		wantErr string
	}{
		{fixture: "empty", client: Claude, entry: stdioEntry},
		{fixture: "claude-existing", client: Claude, entry: stdioEntry},
		{fixture: "claude-existing", client: Claude, entry: Entry{HTTP: true}},
		{fixture: "opencode-other", client: OpenCode, entry: stdioEntry},
		{fixture: "opencode-other", client: OpenCode, entry: Entry{HTTP: true}},
		{fixture: "cursor-null", client: Cursor, entry: Entry{Command: "/opt/bin/interop-runtime", ReadOnly: true}},
		{fixture: "empty", client: Cursor, entry: Entry{HTTP: true}},
		{fixture: "with-comments", client: OpenCode, entry: stdioEntry},
		{fixture: "with-comments", client: Claude, entry: stdioEntry, wantErr: `with-comments\.json:2:3: not valid JSON`},
		{fixture: "trailing-comma", client: Cursor, entry: stdioEntry, wantErr: `trailing-comma\.json:1:\d+: not valid JSON`},
		{fixture: "not-object", client: Cursor, entry: stdioEntry, wantErr: `not a JSON object`},
	} {
		name := string(tc.client) + "-" + tc.fixture
		if tc.entry.HTTP {
			name += "-http"
		}
		t.Run(name, func(t *testing.T) {
			file := filepath.Join("testdata", "json", tc.fixture+".json")
			old, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			target, err := TargetFor(tc.client, Paths{Home: "/home/ann"}, false)
			if err != nil {
				t.Fatal(err)
			}
			target.File = file
			got, err := Merge(target, tc.entry, old)
			if tc.wantErr != "" {
				if err == nil || !regexp.MustCompile(tc.wantErr).MatchString(err.Error()) {
					t.Fatalf("err = %v, want /%s/", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			golden(t, filepath.Join("json", name+".golden"), got)
			again, err := Merge(target, tc.entry, got)
			if err != nil || !bytes.Equal(again, got) {
				t.Fatalf("second merge differs (err %v):\n%s", err, again)
			}
		})
	}
}

func TestSnippetsNeverHoldTheToken(t *testing.T) {
	t.Setenv(TokenEnv, "s3cr3t-token-value")
	for _, c := range Clients {
		target, err := TargetFor(c, Paths{Home: "/home/ann"}, false)
		if err != nil {
			t.Fatal(err)
		}
		b, err := Snippet(target, Entry{HTTP: true})
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte("s3cr3t")) || !bytes.Contains(b, []byte(TokenEnv)) || !bytes.Contains(b, []byte(DefaultURL)) {
			t.Errorf("%s snippet:\n%s", c, b)
		}
	}
}

// writeFixture copies a fixture into a temporary directory.
func writeFixture(t *testing.T, dir, fixture, name string, mode os.FileMode) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", fixture))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, b, mode); err != nil {
		t.Fatal(err)
	}
	return path
}

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out
}

func TestWrite(t *testing.T) {
	t.Run("new file, then unchanged, then a repair with one backup", func(t *testing.T) {
		dir := t.TempDir()
		target := Target{Client: Codex, File: filepath.Join(dir, "codex", "config.toml"), Name: "agent_interop"}
		res, err := Write(target, stdioEntry)
		if err != nil || res.Backup != "" || res.Unchanged {
			t.Fatalf("first write: %+v, %v", res, err)
		}
		first, _ := os.ReadFile(target.File)
		if fi, _ := os.Stat(target.File); fi.Mode().Perm() != 0o600 {
			t.Fatalf("new file mode %v", fi.Mode())
		}
		res, err = Write(target, stdioEntry)
		if err != nil || !res.Unchanged {
			t.Fatalf("second write: %+v, %v", res, err)
		}
		res, err = Write(target, Entry{Command: "/new/path"})
		if err != nil || res.Backup != target.File+".bak" {
			t.Fatalf("third write: %+v, %v", res, err)
		}
		if b, _ := os.ReadFile(res.Backup); !bytes.Equal(b, first) {
			t.Fatalf("backup holds %q, want the previous content", b)
		}
		if _, err := Write(target, Entry{Command: "/newer/path"}); err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff([]string{"config.toml", "config.toml.bak"}, dirNames(t, filepath.Dir(target.File))); d != "" {
			t.Fatalf("files (-want +got):\n%s", d)
		}
	})
	t.Run("malformed and read-only files stay byte-identical", func(t *testing.T) {
		for _, tc := range []struct {
			fixture string
			mode    os.FileMode
			want    string
		}{
			{"codex/malformed.toml", 0o600, "malformed"},
			{"codex/unrelated.toml", 0o444, "read-only"},
		} {
			dir := t.TempDir()
			path := writeFixture(t, dir, tc.fixture, "config.toml", tc.mode)
			before, _ := os.ReadFile(path)
			_, err := Write(Target{Client: Codex, File: path, Name: "agent_interop"}, stdioEntry)
			if err == nil || !strings.Contains(err.Error(), strings.TrimSuffix(tc.want, "malformed")) {
				t.Fatalf("%s: err = %v", tc.fixture, err)
			}
			after, _ := os.ReadFile(path)
			if !bytes.Equal(before, after) {
				t.Fatalf("%s changed", tc.fixture)
			}
			if d := cmp.Diff([]string{"config.toml"}, dirNames(t, dir)); d != "" {
				t.Fatalf("%s: files (-want +got):\n%s", tc.fixture, d)
			}
		}
	})
	t.Run("a symlink is followed and kept", func(t *testing.T) {
		dir := t.TempDir()
		real := writeFixture(t, dir, "json/opencode-other.json", "dotfiles-opencode.json", 0o640)
		link := filepath.Join(dir, "opencode.json")
		if err := os.Symlink(real, link); err != nil {
			t.Fatal(err)
		}
		res, err := Write(Target{Client: OpenCode, File: link, Name: "agent-interop"}, stdioEntry)
		if err != nil || res.File != real {
			t.Fatalf("%+v, %v", res, err)
		}
		if fi, _ := os.Lstat(link); fi.Mode()&os.ModeSymlink == 0 {
			t.Fatal("the symlink was replaced by a file")
		}
		if fi, _ := os.Stat(real); fi.Mode().Perm() != 0o640 {
			t.Fatalf("mode changed to %v", fi.Mode())
		}
		b, _ := os.ReadFile(link)
		if !bytes.Contains(b, []byte(`"environment"`)) || !bytes.Contains(b, []byte(`"docs"`)) {
			t.Fatalf("written:\n%s", b)
		}
	})
	t.Run("a dangling symlink is refused", func(t *testing.T) {
		dir := t.TempDir()
		link := filepath.Join(dir, "mcp.json")
		if err := os.Symlink(filepath.Join(dir, "missing", "mcp.json"), link); err != nil {
			t.Fatal(err)
		}
		if _, err := Write(Target{Client: Cursor, File: link, Name: "agentInterop"}, stdioEntry); err == nil || !strings.Contains(err.Error(), "symlink") {
			t.Fatalf("err = %v", err)
		}
	})
}
