package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const outsideMarker = "OUTSIDE-MARKER-51d2"

// safetyProject builds an approved root with credential files, secrets in
// ordinary files and links out, next to an outside directory.
func safetyProject(t *testing.T) (root string, secrets map[string]string) {
	t.Helper()
	base := t.TempDir()
	root = filepath.Join(base, "project")
	outside := filepath.Join(base, "outside")
	write := func(p, body string) {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(outside, "notes.txt"), outsideMarker)
	for _, rel := range []string{"terraform.tfstate", "terraform.tfstate.backup", ".vault-token", "credentials", ".env.local", "secrets.yaml", ".npmrc", "deploy.p12", ".kube/config", ".aws/credentials"} {
		write(filepath.Join(root, rel), outsideMarker)
	}
	secrets = map[string]string{
		"redis.txt":    "redis://:" + "Redis-pw-42" + "@cache:6379",
		"discord.txt":  "MTk4NjIyNDgzNDcxOTI1MjQ4" + ".Cl2FMQ." + "ZnCjm1XVW7vRze4b7Cq4se7kKWs",
		"telegram.txt": "123456789" + ":AA" + "HdqTcvCH1vGWJxfSeofSAs0K5PALDsaw",
		"age.txt":      "AGE-SECRET-KEY-1" + "QYZ3R9GX8VFMS4KHNJQ0W5E6D7T2P3L8ZKHTRUA9XYZ6C5M4VNSQ7RG8",
	}
	for name, secret := range secrets {
		write(filepath.Join(root, name), "value: "+secret+"\n")
	}
	write(filepath.Join(root, "README.md"), "hello\n")
	if err := os.Symlink(filepath.Join(outside, "notes.txt"), filepath.Join(root, "link.txt")); err != nil {
		t.Fatal(err)
	}
	return root, secrets
}

func TestApprovedRootReadsUnderTheSameRules(t *testing.T) {
	root, secrets := safetyProject(t)
	cs := connect(t, []string{"serve"}, isolatedEnv(t, "INTEROP_PROJECT_ROOTS="+root))

	var list struct{ Files []string }
	call(t, cs, "list_project_files", map[string]any{"projectId": root}, &list)
	if strings.Join(list.Files, ",") != "README.md,age.txt,discord.txt,redis.txt,telegram.txt" {
		t.Errorf("listing = %q (credential files and links must be hidden)", list.Files)
	}
	var file struct{ Path, Content string }
	call(t, cs, "read_project_file", map[string]any{"projectId": root, "path": "README.md"}, &file)
	if file.Content != "hello\n" {
		t.Errorf("README.md = %q", file.Content)
	}
	for name, secret := range secrets {
		text := call(t, cs, "read_project_file", map[string]any{"projectId": root, "path": name}, nil)
		if strings.Contains(text, secret) || !strings.Contains(text, "[REDACTED") {
			t.Errorf("%s not redacted: %s", name, text)
		}
	}
	for _, rel := range []string{"terraform.tfstate", "terraform.tfstate.backup", ".vault-token", "credentials", ".env.local", "secrets.yaml", ".npmrc", "deploy.p12", ".kube/config", ".aws/credentials", "link.txt", "../outside/notes.txt"} {
		if text := callFail(t, cs, "read_project_file", map[string]any{"projectId": root, "path": rel}); strings.Contains(text, outsideMarker) {
			t.Errorf("%s leaked: %s", rel, text)
		}
	}
	outside := filepath.Join(filepath.Dir(root), "outside")
	if text := callFail(t, cs, "read_project_file", map[string]any{"projectId": outside, "path": "notes.txt"}); !strings.Contains(text, "approved root") {
		t.Errorf("a directory outside every root: %s", text)
	}
}

// BenchmarkFirstRead measures, against the built binary, the first
// read_project_file of a process (it loads and compiles the secret rules it
// needs) and a later one, and the resident memory the first read adds.
func BenchmarkFirstRead(b *testing.B) {
	root := b.TempDir()
	body := strings.Repeat("func handler(w http.ResponseWriter, r *http.Request) { token := r.Header.Get(\"X-Token\"); _ = token }\n", 40)
	if err := os.WriteFile(filepath.Join(root, "main.go"), []byte(body), 0o644); err != nil {
		b.Fatal(err)
	}
	var first, second, rssBefore, rssAfter []float64
	for i := 0; i < b.N; i++ {
		home := b.TempDir()
		cmd := exec.Command(binary, "serve")
		cmd.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "INTEROP_DB=" + filepath.Join(home, "db"), "INTEROP_PROJECT_ROOTS=" + root}
		cs, err := newClient(b, "bench", cmd.Args, cmd.Env, nil).Connect(b.Context(), &mcp.CommandTransport{Command: cmd}, nil)
		if err != nil {
			b.Fatal(err)
		}
		args := &mcp.CallToolParams{Name: "read_project_file", Arguments: map[string]any{"projectId": root, "path": "main.go"}}
		if _, err := cs.CallTool(b.Context(), &mcp.CallToolParams{Name: "get_runtime_status", Arguments: map[string]any{}}); err != nil {
			b.Fatal(err)
		}
		rssBefore = append(rssBefore, rssKiB(b, cmd.Process.Pid))
		for j, dst := range []*[]float64{&first, &second} {
			start := time.Now()
			res, err := cs.CallTool(b.Context(), args)
			if err != nil || res.IsError {
				b.Fatalf("read %d: %v %v", j, err, res)
			}
			*dst = append(*dst, float64(time.Since(start).Microseconds()))
		}
		rssAfter = append(rssAfter, rssKiB(b, cmd.Process.Pid))
		cs.Close()
	}
	b.ReportMetric(median(first), "first-read-µs")
	b.ReportMetric(median(second), "later-read-µs")
	b.ReportMetric(median(rssBefore), "rss-before-KiB")
	b.ReportMetric(median(rssAfter), "rss-after-KiB")
}

func rssKiB(b *testing.B, pid int) float64 {
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		b.Skip("no /proc: ", err)
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			n, _ := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 64)
			return n
		}
	}
	return 0
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}
