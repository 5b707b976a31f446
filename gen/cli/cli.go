// Package cli implements the interopgen command: `generate` writes every
// file generated from spec/, `check` regenerates in memory, fails on any
// drift or stale file, and then checks the catalog budgets.
package cli

import (
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"strings"

	"github.com/agent-interop/runtime/gen"
)

const fixCommand = "go run ./cmd/interopgen generate"

// Do runs interopgen with args in the repository at root and returns the
// exit code.
func Do(args []string, root string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "usage: interopgen generate|check|measure")
		return 2
	}
	fsFlags := flag.NewFlagSet(args[0], flag.ContinueOnError)
	fsFlags.SetOutput(stderr)
	if err := fsFlags.Parse(args[1:]); err != nil {
		return 2
	}
	files, cat, err := gen.GenerateFS(os.DirFS(root))
	if err != nil {
		fmt.Fprintf(stderr, "spec errors:\n%v\n", err)
		return 1
	}
	if args[0] == "generate" || args[0] == "check" {
		tf, err := gen.TokenFilesFS(os.DirFS(root))
		if err != nil {
			fmt.Fprintf(stderr, "interopgen: %v\n", err)
			return 1
		}
		maps.Copy(files, tf)
	}
	switch args[0] {
	case "generate":
		return generate(files, root, stdout, stderr)
	case "check":
		return check(files, cat, root, stdout, stderr)
	case "measure":
		return measure(cat, stdout, stderr)
	}
	fmt.Fprintf(stderr, "interopgen: unknown command %q (want generate, check or measure)\n", args[0])
	return 2
}

func generate(files gen.Files, root string, stdout, stderr io.Writer) int {
	drifts, err := gen.Compare(files, os.DirFS(root))
	if err != nil {
		fmt.Fprintf(stderr, "interopgen: %v\n", err)
		return 1
	}
	for _, p := range files.Paths() {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			fmt.Fprintf(stderr, "interopgen: %v\n", err)
			return 1
		}
		if err := os.WriteFile(full, files[p], 0o644); err != nil {
			fmt.Fprintf(stderr, "interopgen: %v\n", err)
			return 1
		}
	}
	for _, d := range drifts {
		if d.State == "stale" {
			if err := os.Remove(filepath.Join(root, filepath.FromSlash(d.Path))); err != nil {
				fmt.Fprintf(stderr, "interopgen: %v\n", err)
				return 1
			}
			fmt.Fprintf(stdout, "removed stale %s\n", d.Path)
			continue
		}
		fmt.Fprintf(stdout, "wrote %s\n", d.Path)
	}
	fmt.Fprintf(stdout, "interopgen: %d files up to date\n", len(files))
	return 0
}

func check(files gen.Files, cat *gen.Catalog, root string, stdout, stderr io.Writer) int {
	drifts, err := gen.Compare(files, os.DirFS(root))
	if err != nil {
		fmt.Fprintf(stderr, "interopgen: %v\n", err)
		return 1
	}
	failed := false
	for _, d := range drifts {
		failed = true
		switch d.State {
		case "differs":
			fmt.Fprintf(stderr, "%s differs from what the spec generates:\n%s\n", d.Path, d.Diff)
		case "missing":
			fmt.Fprintf(stderr, "%s is missing (the spec generates it)\n", d.Path)
		case "stale":
			fmt.Fprintf(stderr, "%s is stale (the spec no longer generates it)\n", d.Path)
		}
	}
	if failed {
		fmt.Fprintf(stderr, "generated files drifted from spec/; run: %s\n", fixCommand)
		return 1
	}
	counter, err := gen.NewCounter()
	if err != nil {
		fmt.Fprintf(stderr, "interopgen: %v\n", err)
		return 1
	}
	ms, err := gen.MeasureProfiles(cat, counter)
	if err != nil {
		fmt.Fprintf(stderr, "interopgen: %v\n", err)
		return 1
	}
	if fails := gen.CheckBudgets(cat, ms); len(fails) > 0 {
		fmt.Fprintf(stderr, "catalog budgets exceeded:\n  %s\n", strings.Join(fails, "\n  "))
		return 1
	}
	fmt.Fprintf(stdout, "interopgen check: %d generated files match spec/; budgets hold (", len(files))
	for i, m := range ms {
		if i > 0 {
			fmt.Fprint(stdout, ", ")
		}
		fmt.Fprintf(stdout, "%s %d tools/%d tok", m.Profile, m.Tools, m.Tokens)
	}
	fmt.Fprintln(stdout, ")")
	return 0
}

func measure(cat *gen.Catalog, stdout, stderr io.Writer) int {
	counter, err := gen.NewCounter()
	if err != nil {
		fmt.Fprintf(stderr, "interopgen: %v\n", err)
		return 1
	}
	ms, err := gen.MeasureProfiles(cat, counter)
	if err != nil {
		fmt.Fprintf(stderr, "interopgen: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "%-8s %5s %7s %7s  %s\n", "profile", "tools", "bytes", "o200k", "largest tool (model view tokens)")
	for _, m := range ms {
		fmt.Fprintf(stdout, "%-8s %5d %7d %7d  %s (%d)\n", m.Profile, m.Tools, m.Bytes, m.Tokens, m.MaxToolName, m.MaxToolTotal)
	}
	return 0
}
