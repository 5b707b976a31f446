// Command crossvet type-checks and vets the module's packages, with their
// tests, for another GOOS, from source: scripts/test.sh's os-windows and
// os-darwin steps.
//
//	go run ./internal/testutil/crossvet -goos windows ./...
//
// It loads the packages and every dependency with go/packages
// (LoadAllSyntax: parsed and type-checked from source, one type-check per
// package, nothing compiled or linked) under GOOS, and runs on them the
// analyzers `go vet` runs (the list below is `go tool vet help`'s, and a
// test keeps it so). It fails on any type error and on any vet finding,
// which is what `GOOS=… go vet ./...` followed by `GOOS=… go build ./...`
// checked, at a fraction of their cost on an empty build cache: those
// compiled every dependency once more per OS. What only the compiler or the
// linker can find (a body-less function with no assembly, a linkname
// directive that names a missing symbol) it does not: the module has
// neither.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/checker"
	"golang.org/x/tools/go/analysis/passes/appends"
	"golang.org/x/tools/go/analysis/passes/asmdecl"
	"golang.org/x/tools/go/analysis/passes/assign"
	"golang.org/x/tools/go/analysis/passes/atomic"
	"golang.org/x/tools/go/analysis/passes/bools"
	"golang.org/x/tools/go/analysis/passes/buildtag"
	"golang.org/x/tools/go/analysis/passes/cgocall"
	"golang.org/x/tools/go/analysis/passes/composite"
	"golang.org/x/tools/go/analysis/passes/copylock"
	"golang.org/x/tools/go/analysis/passes/defers"
	"golang.org/x/tools/go/analysis/passes/directive"
	"golang.org/x/tools/go/analysis/passes/errorsas"
	"golang.org/x/tools/go/analysis/passes/framepointer"
	"golang.org/x/tools/go/analysis/passes/hostport"
	"golang.org/x/tools/go/analysis/passes/httpresponse"
	"golang.org/x/tools/go/analysis/passes/ifaceassert"
	"golang.org/x/tools/go/analysis/passes/loopclosure"
	"golang.org/x/tools/go/analysis/passes/lostcancel"
	"golang.org/x/tools/go/analysis/passes/nilfunc"
	"golang.org/x/tools/go/analysis/passes/printf"
	"golang.org/x/tools/go/analysis/passes/shift"
	"golang.org/x/tools/go/analysis/passes/sigchanyzer"
	"golang.org/x/tools/go/analysis/passes/slog"
	"golang.org/x/tools/go/analysis/passes/stdmethods"
	"golang.org/x/tools/go/analysis/passes/stdversion"
	"golang.org/x/tools/go/analysis/passes/stringintconv"
	"golang.org/x/tools/go/analysis/passes/structtag"
	"golang.org/x/tools/go/analysis/passes/testinggoroutine"
	"golang.org/x/tools/go/analysis/passes/tests"
	"golang.org/x/tools/go/analysis/passes/timeformat"
	"golang.org/x/tools/go/analysis/passes/unmarshal"
	"golang.org/x/tools/go/analysis/passes/unreachable"
	"golang.org/x/tools/go/analysis/passes/unsafeptr"
	"golang.org/x/tools/go/analysis/passes/unusedresult"
	"golang.org/x/tools/go/analysis/passes/waitgroup"
	"golang.org/x/tools/go/packages"
)

// vetSuite is the analyzers of the toolchain's `go vet` (cmd/vet/main.go;
// TestSuiteIsGoVets compares the names with `go tool vet help`).
var vetSuite = []*analysis.Analyzer{
	appends.Analyzer,
	asmdecl.Analyzer,
	assign.Analyzer,
	atomic.Analyzer,
	bools.Analyzer,
	buildtag.Analyzer,
	cgocall.Analyzer,
	composite.Analyzer,
	copylock.Analyzer,
	defers.Analyzer,
	directive.Analyzer,
	errorsas.Analyzer,
	framepointer.Analyzer,
	httpresponse.Analyzer,
	hostport.Analyzer,
	ifaceassert.Analyzer,
	loopclosure.Analyzer,
	lostcancel.Analyzer,
	nilfunc.Analyzer,
	printf.Analyzer,
	shift.Analyzer,
	sigchanyzer.Analyzer,
	slog.Analyzer,
	stdmethods.Analyzer,
	stdversion.Analyzer,
	stringintconv.Analyzer,
	structtag.Analyzer,
	tests.Analyzer,
	testinggoroutine.Analyzer,
	timeformat.Analyzer,
	unmarshal.Analyzer,
	unreachable.Analyzer,
	unsafeptr.Analyzer,
	unusedresult.Analyzer,
	waitgroup.Analyzer,
}

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "crossvet:", err)
		os.Exit(1)
	}
}

func run(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("crossvet", flag.ContinueOnError)
	goos := fs.String("goos", "", "the GOOS to load the packages for (required)")
	tags := fs.String("tags", "", "build tags, comma-separated")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *goos == "" || fs.NArg() == 0 {
		return fmt.Errorf("usage: crossvet -goos GOOS [-tags a,b] PATTERN...")
	}
	cfg := &packages.Config{
		Mode:  packages.LoadAllSyntax | packages.NeedModule,
		Tests: true,
		Env:   append(os.Environ(), "GOOS="+*goos),
	}
	if *tags != "" {
		cfg.BuildFlags = []string{"-tags=" + *tags}
	}
	pkgs, err := packages.Load(cfg, fs.Args()...)
	if err != nil {
		return fmt.Errorf("loading %s for GOOS=%s: %w", strings.Join(fs.Args(), " "), *goos, err)
	}
	if len(pkgs) == 0 {
		return fmt.Errorf("%s matched no packages", strings.Join(fs.Args(), " "))
	}
	// Type errors anywhere in the graph: what the compile would have failed on.
	if n := packages.PrintErrors(pkgs); n > 0 {
		return fmt.Errorf("GOOS=%s: %d errors loading or type-checking the packages (above)", *goos, n)
	}
	graph, err := checker.Analyze(vetSuite, pkgs, nil)
	if err != nil {
		return fmt.Errorf("vetting for GOOS=%s: %w", *goos, err)
	}
	var sb strings.Builder
	if err := graph.PrintText(&sb, -1); err != nil {
		return fmt.Errorf("printing the findings: %w", err)
	}
	if sb.Len() > 0 {
		fmt.Fprint(out, sb.String())
		return fmt.Errorf("GOOS=%s: go vet's analyzers found problems (above)", *goos)
	}
	fmt.Fprintf(out, "GOOS=%s: %d packages and test packages type-check and vet clean\n", *goos, len(pkgs))
	return nil
}
