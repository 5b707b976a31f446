// Package e2etest gates the end-to-end tier: the tests that build and run
// the interop-runtime binary (internal/e2e) and the multi-process fault
// tests that kill or race processes. They run only in a test binary built
// with the tag e2e (go test -tags e2e ...; scripts/test.sh sets it), so
// `go test ./...`, the unit tier, starts none of them.
//
// A test that builds a program it then runs does it with [Build]: under
// -race the program is built with -race too and every run of it logs its
// race reports into the build folder, which [RaceReports] reads, so the
// race step checks the server, not only the test binary.
package e2etest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TierSkip is why an end-to-end test is skipped without the build tag.
const TierSkip = "end-to-end tier: run with -tags e2e (scripts/test.sh does)"

// Tier reports whether this test binary is the end-to-end tier (built with
// -tags e2e).
func Tier() bool { return tierEnabled }

// Require skips the test unless the binary is the end-to-end tier.
func Require(tb testing.TB) {
	tb.Helper()
	if !tierEnabled {
		tb.Skip(TierSkip)
	}
}

// Race reports whether this test binary was built with -race.
func Race() bool { return raceEnabled }

// BuildFlags are the flags a test passes to `go build` for a program it
// runs: -race when the test binary itself runs under the race detector.
func BuildFlags() []string {
	if raceEnabled {
		return []string{"-race"}
	}
	return nil
}

// raceLogs is the folder, next to a program built by Build, that its runs
// write race reports into (GORACE log_path).
const raceLogs = "race-logs"

// Build compiles the main package pkg (a path as `go build` takes it,
// relative to moduleDir) into dir and returns the path to run. Under -race
// the program is built with -race, and on Unix the path is a small wrapper
// that execs it (same process, same pid) with GORACE log_path pointing into
// dir, so [RaceReports] sees the reports of every run, whatever
// environment a test gives the program.
func Build(moduleDir, dir, name, pkg string) (string, error) {
	bin := filepath.Join(dir, name)
	if runtime.GOOS == "windows" {
		bin += ".exe"
	}
	if raceEnabled && runtime.GOOS != "windows" {
		bin = filepath.Join(dir, name+".race")
	}
	args := append(append([]string{"build"}, BuildFlags()...), "-o", bin, pkg)
	cmd := exec.Command("go", args...)
	cmd.Dir = moduleDir
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	if !raceEnabled || runtime.GOOS == "windows" {
		return bin, nil
	}
	logs := filepath.Join(dir, raceLogs)
	if err := os.MkdirAll(logs, 0o755); err != nil {
		return "", err
	}
	wrapper := filepath.Join(dir, name)
	script := fmt.Sprintf("#!/bin/sh\nGORACE=\"log_path=%s/race $GORACE\" exec %q \"$@\"\n", logs, bin)
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		return "", err
	}
	return wrapper, nil
}

// RaceReports returns the race reports that runs of the programs Build put
// in dir wrote ("" when none did).
func RaceReports(dir string) (string, error) {
	logs, err := filepath.Glob(filepath.Join(dir, raceLogs, "race.*"))
	if err != nil {
		return "", err
	}
	var reports []string
	for _, l := range logs {
		b, err := os.ReadFile(l)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return "", err
		}
		if strings.Contains(string(b), DataRace) {
			reports = append(reports, fmt.Sprintf("%s:\n%s", filepath.Base(l), b))
		}
	}
	return strings.Join(reports, "\n"), nil
}

// DataRace starts every report of the race detector.
const DataRace = "WARNING: DATA RACE"
