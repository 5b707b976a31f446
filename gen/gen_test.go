package gen

import (
	"flag"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata")

// TestGoldenOK generates each testdata/ok case and compares every output
// with the files committed in the case directory.
func TestGoldenOK(t *testing.T) {
	cases, err := filepath.Glob("testdata/ok/*")
	if err != nil || len(cases) == 0 {
		t.Fatalf("no ok cases: %v", err)
	}
	for _, dir := range cases {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			files, _, err := GenerateFS(os.DirFS(dir))
			if err != nil {
				t.Fatalf("generate: %v", err)
			}
			if *update {
				for _, p := range files.Paths() {
					full := filepath.Join(dir, filepath.FromSlash(p))
					if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(full, files[p], 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
			drifts, err := Compare(files, os.DirFS(dir))
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range drifts {
				t.Errorf("%s %s (run go test ./gen -update)\n%s", d.Path, d.State, d.Diff)
			}
		})
	}
}

// TestGoldenOKCompiles builds the Go code generated for each ok case.
func TestGoldenOKCompiles(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go tool not on PATH")
	}
	cases, _ := filepath.Glob("testdata/ok/*")
	for _, dir := range cases {
		out, err := exec.Command(goTool, "vet", "./"+filepath.ToSlash(filepath.Join(dir, "catalogs"))+"/...").CombinedOutput()
		if err != nil {
			t.Errorf("%s: generated code does not vet: %v\n%s", dir, err, out)
		}
	}
}

// TestGoldenBad checks that each broken spec fails with exactly the
// expected errors, all reported at once.
func TestGoldenBad(t *testing.T) {
	cases, err := filepath.Glob("testdata/bad/*")
	if err != nil || len(cases) == 0 {
		t.Fatalf("no bad cases: %v", err)
	}
	for _, dir := range cases {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			_, _, err := GenerateFS(os.DirFS(dir))
			if err == nil {
				t.Fatal("generate succeeded on a broken spec")
			}
			got := err.Error() + "\n"
			wantFile := filepath.Join(dir, "want.txt")
			if *update {
				if err := os.WriteFile(wantFile, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(wantFile)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(string(want), got); diff != "" {
				t.Errorf("errors differ (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRepositoryUpToDate is `interopgen check`'s drift half as a test: the
// committed generated files equal what the repository's spec generates,
// and the o200k table what tiktoken-go's vocabulary makes.
func TestRepositoryUpToDate(t *testing.T) {
	root := filepath.Join("..")
	files, _, err := GenerateFS(os.DirFS(root))
	if err != nil {
		t.Fatalf("the repository spec does not generate: %v", err)
	}
	tables, err := TokenFilesFS(os.DirFS(root))
	if err != nil || len(tables) != 2 {
		t.Fatalf("the o200k table does not generate: %v (%d files)", err, len(tables))
	}
	maps.Copy(files, tables)
	drifts, err := Compare(files, os.DirFS(root))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range drifts {
		t.Errorf("%s %s; run go run ./cmd/interopgen generate", d.Path, d.State)
	}
}

func TestGenerateIsDeterministic(t *testing.T) {
	a, _, err := GenerateFS(os.DirFS(".."))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		b, _, err := GenerateFS(os.DirFS(".."))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range a.Paths() {
			if string(a[p]) != string(b[p]) {
				t.Fatalf("%s differs between two runs", p)
			}
		}
	}
}

func TestGoName(t *testing.T) {
	for in, want := range map[string]string{
		"read_session_events": "ReadSessionEvents",
		"nativeId":            "NativeID",
		"providerID":          "ProviderID",
		"cwd":                 "CWD",
		"ttlSeconds":          "TTLSeconds",
		"timeoutMs":           "TimeoutMs",
		"claude-code":         "ClaudeCode",
	} {
		if got := goName(in); got != want {
			t.Errorf("goName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestBudgetsReportProfileFigureAndLimit(t *testing.T) {
	_, cat, err := GenerateFS(os.DirFS("testdata/ok/small"))
	if err != nil {
		t.Fatal(err)
	}
	ms := []Measure{
		{Profile: "read", Tools: 2, Bytes: 100, Tokens: 2500, MaxToolName: "send_note", MaxToolTotal: 450},
		{Profile: "old", Tools: 2, Bytes: 90, Tokens: 10},
		{Profile: "all", Tools: 2, Bytes: 120, Tokens: 10},
	}
	got := strings.Join(CheckBudgets(cat, ms), "\n")
	for _, want := range []string{
		"profile read: tools/list is 2500 o200k tokens, budget 2000",
		"profile read: tool send_note is 450 o200k tokens in the model's view, budget 400",
		"profile all: tools/list is 120 bytes, budget 100 (1.00 × read's 100)",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("budget report lacks %q:\n%s", want, got)
		}
	}
}
