package bench

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// PeakRSS reads a live process's peak resident set size (VmHWM) from
// /proc/<pid>/status, in bytes. Linux only.
func PeakRSS(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("read peak RSS of pid %d: %w", pid, err)
	}
	n, err := ParseVmHWM(b)
	if err != nil {
		return 0, fmt.Errorf("pid %d: %w", pid, err)
	}
	return n, nil
}

// Memory is what one read of /proc/<pid>/status says of a process.
type Memory struct {
	// PeakRSS is VmHWM: the peak resident set, file-backed pages (the
	// binary's, which move with the page cache) included.
	PeakRSS int64
	// Anon is RssAnon: the anonymous memory resident now (heap, stacks,
	// the Go runtime's own), which neither the page cache nor the
	// binary's size moves. Not a peak: the kernel keeps none for it.
	Anon int64
}

// ReadMemory reads a live process's VmHWM and RssAnon, in bytes. Linux
// only.
func ReadMemory(pid int) (Memory, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return Memory{}, fmt.Errorf("read the memory of pid %d: %w", pid, err)
	}
	var m Memory
	if m.PeakRSS, err = ParseVmHWM(b); err != nil {
		return Memory{}, fmt.Errorf("pid %d: %w", pid, err)
	}
	if m.Anon, err = statusKB(b, "RssAnon"); err != nil {
		return Memory{}, fmt.Errorf("pid %d: %w", pid, err)
	}
	return m, nil
}

// ParseVmHWM extracts VmHWM ("VmHWM:\t  8234 kB") from the text of
// /proc/<pid>/status, in bytes.
func ParseVmHWM(status []byte) (int64, error) { return statusKB(status, "VmHWM") }

// statusKB extracts one "<key>:\t  8234 kB" line of /proc/<pid>/status,
// in bytes.
func statusKB(status []byte, key string) (int64, error) {
	for l := range bytes.Lines(status) {
		rest, ok := bytes.CutPrefix(l, []byte(key+":"))
		if !ok {
			continue
		}
		f := strings.Fields(string(rest))
		if len(f) != 2 || f[1] != "kB" {
			return 0, fmt.Errorf("unexpected %s line %q", key, bytes.TrimSpace(l))
		}
		kb, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil || kb < 0 {
			return 0, fmt.Errorf("unexpected %s line %q", key, bytes.TrimSpace(l))
		}
		return kb << 10, nil
	}
	return 0, fmt.Errorf("no %s line in the process status", key)
}

// PackageInit is one package's `init` line of GODEBUG=inittrace=1.
type PackageInit struct {
	Package string        `json:"package"`
	Clock   time.Duration `json:"clockNs"`
	Bytes   int64         `json:"bytes"`
	Allocs  int64         `json:"allocs"`
}

// InitTrace sums a process's GODEBUG=inittrace=1 output.
type InitTrace struct {
	Total    time.Duration `json:"totalNs"` // sum of every init line's clock time
	Bytes    int64         `json:"bytes"`
	Allocs   int64         `json:"allocs"`
	Packages []PackageInit `json:"packages"` // slowest first
}

// Top returns the n slowest package inits.
func (t InitTrace) Top(n int) []PackageInit { return t.Packages[:min(n, len(t.Packages))] }

// ParseInitTrace reads GODEBUG=inittrace=1 lines, which look like
//
//	init encoding/gob @0.79 ms, 0.13 ms clock, 26768 bytes, 363 allocs
//
// and ignores every other line (the program's own log output).
func ParseInitTrace(r io.Reader) (InitTrace, error) {
	var t InitTrace
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		p, ok, err := parseInitLine(sc.Text())
		if err != nil {
			return InitTrace{}, err
		}
		if !ok {
			continue
		}
		t.Packages = append(t.Packages, p)
		t.Total += p.Clock
		t.Bytes += p.Bytes
		t.Allocs += p.Allocs
	}
	if err := sc.Err(); err != nil {
		return InitTrace{}, fmt.Errorf("read inittrace: %w", err)
	}
	slices.SortStableFunc(t.Packages, func(a, b PackageInit) int { return int(b.Clock - a.Clock) })
	return t, nil
}

func parseInitLine(s string) (PackageInit, bool, error) {
	rest, ok := strings.CutPrefix(s, "init ")
	if !ok {
		return PackageInit{}, false, nil
	}
	pkg, rest, ok := strings.Cut(rest, " @")
	if !ok {
		return PackageInit{}, false, nil
	}
	parts := strings.Split(rest, ", ")
	if len(parts) != 4 {
		return PackageInit{}, false, fmt.Errorf("unexpected inittrace line %q", s)
	}
	clock, err := field(parts[1], " ms clock")
	if err != nil {
		return PackageInit{}, false, fmt.Errorf("unexpected inittrace line %q: %w", s, err)
	}
	bytes, err := field(parts[2], " bytes")
	if err != nil {
		return PackageInit{}, false, fmt.Errorf("unexpected inittrace line %q: %w", s, err)
	}
	allocs, err := field(parts[3], " allocs")
	if err != nil {
		return PackageInit{}, false, fmt.Errorf("unexpected inittrace line %q: %w", s, err)
	}
	return PackageInit{
		Package: pkg,
		Clock:   time.Duration(clock * float64(time.Millisecond)),
		Bytes:   int64(bytes),
		Allocs:  int64(allocs),
	}, true, nil
}

func field(s, unit string) (float64, error) {
	num, ok := strings.CutSuffix(strings.TrimSpace(s), unit)
	if !ok {
		return 0, fmt.Errorf("%q does not end in %q", s, unit)
	}
	return strconv.ParseFloat(num, 64)
}

// ProcessCPU is the CPU time a live process has used, summed over its
// threads from /proc/<pid>/task/*/schedstat (nanoseconds on the CPU, the
// first field): exact where the clock-tick counters of /proc/<pid>/stat
// are 10 ms coarse. Linux only.
func ProcessCPU(pid int) (time.Duration, error) {
	dir := fmt.Sprintf("/proc/%d/task", pid)
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return 0, fmt.Errorf("read threads of pid %d: %w", pid, err)
	}
	var total time.Duration
	for _, t := range tasks {
		b, err := os.ReadFile(dir + "/" + t.Name() + "/schedstat")
		if err != nil {
			continue // the thread ended meanwhile
		}
		ns, err := ParseSchedstat(b)
		if err != nil {
			return 0, fmt.Errorf("pid %d thread %s: %w", pid, t.Name(), err)
		}
		total += ns
	}
	return total, nil
}

// TreeCPU is ProcessCPU of a live process and of its descendants still
// running (found through /proc/<pid>/task/*/children). Linux only.
func TreeCPU(pid int) (time.Duration, error) {
	total, err := ProcessCPU(pid)
	if err != nil {
		return 0, err
	}
	tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	for _, t := range tasks {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/children", pid, t.Name()))
		if err != nil {
			continue // the thread ended meanwhile
		}
		for _, f := range strings.Fields(string(b)) {
			child, err := strconv.Atoi(f)
			if err != nil {
				continue
			}
			if d, err := TreeCPU(child); err == nil { // a child that ended meanwhile is skipped
				total += d
			}
		}
	}
	return total, nil
}

// ParseSchedstat reads the on-CPU time, the first of the three numbers of
// a schedstat file.
func ParseSchedstat(b []byte) (time.Duration, error) {
	f := strings.Fields(string(b))
	if len(f) != 3 {
		return 0, fmt.Errorf("unexpected schedstat %q", strings.TrimSpace(string(b)))
	}
	ns, err := strconv.ParseInt(f[0], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("unexpected schedstat %q", strings.TrimSpace(string(b)))
	}
	return time.Duration(ns), nil
}
