package bench

import (
	"os"
	"strings"
	"testing"
	"time"
)

func TestParseVmHWM(t *testing.T) {
	status := "Name:\tinterop-runtime\nVmPeak:\t 1264116 kB\nVmHWM:\t    9876 kB\nVmRSS:\t    9000 kB\n"
	n, err := ParseVmHWM([]byte(status))
	if err != nil {
		t.Fatal(err)
	}
	if n != 9876*1024 {
		t.Errorf("VmHWM = %d", n)
	}
	for _, bad := range []string{"Name:\tx\n", "VmHWM:\t12 MB\n", "VmHWM:\tx kB\n", "VmHWM:\n"} {
		if _, err := ParseVmHWM([]byte(bad)); err == nil {
			t.Errorf("ParseVmHWM(%q) accepted", bad)
		}
	}
}

func TestPeakRSSSelf(t *testing.T) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("no /proc on this system")
	}
	n, err := PeakRSS(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if n <= 0 {
		t.Errorf("peak RSS = %d", n)
	}
}

// TestReadMemorySelf: RssAnon is read beside VmHWM and is never above it
// (the peak resident set holds the anonymous pages resident now).
func TestReadMemorySelf(t *testing.T) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("no /proc on this system")
	}
	m, err := ReadMemory(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if m.Anon <= 0 || m.Anon > m.PeakRSS {
		t.Errorf("memory = %+v, want 0 < RssAnon <= VmHWM", m)
	}
	status := "VmHWM:\t    9876 kB\nRssAnon:\t    2048 kB\n"
	if n, err := statusKB([]byte(status), "RssAnon"); err != nil || n != 2048*1024 {
		t.Errorf("RssAnon = %d, %v; want 2 MiB", n, err)
	}
	if _, err := statusKB([]byte("VmHWM:\t    9876 kB\n"), "RssAnon"); err == nil {
		t.Error("a status without RssAnon was accepted")
	}
}

func TestParseInitTrace(t *testing.T) {
	in := strings.Join([]string{
		"init runtime @0.032 ms, 0.024 ms clock, 0 bytes, 0 allocs",
		"time=2025-01-01 level=WARN msg=\"init later\"",
		"init encoding/gob @0.79 ms, 0.13 ms clock, 26768 bytes, 363 allocs",
		"init github.com/google/jsonschema-go/jsonschema @1.2 ms, 0.084 ms clock, 81256 bytes, 296 allocs",
		"",
	}, "\n")
	tr, err := ParseInitTrace(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Packages) != 3 {
		t.Fatalf("packages = %+v", tr.Packages)
	}
	if want := 238 * time.Microsecond; tr.Total != want {
		t.Errorf("total = %v, want %v", tr.Total, want)
	}
	if tr.Bytes != 26768+81256 || tr.Allocs != 659 {
		t.Errorf("bytes %d allocs %d", tr.Bytes, tr.Allocs)
	}
	if top := tr.Top(1); len(top) != 1 || top[0].Package != "encoding/gob" || top[0].Clock != 130*time.Microsecond {
		t.Errorf("top = %+v", top)
	}
	if len(tr.Top(10)) != 3 {
		t.Error("Top(10) is not all packages")
	}
	if _, err := ParseInitTrace(strings.NewReader("init x @1 ms, 2 ms, 3 bytes, 4 allocs\n")); err == nil {
		t.Error("a malformed init line was accepted")
	}
}
