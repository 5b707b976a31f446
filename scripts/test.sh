#!/usr/bin/env bash
# test.sh is the project's one test command (README): it installs what the
# tests need (the pinned provider programs, via npm; PostgreSQL's server
# programs, via apt; headless Chromium), then runs every check and every
# test tier CI runs. .ci/run calls exactly this script.
#
#   FUZZTIME=60s          how long each fuzz target runs (default 60s)
#   TEST_STEPS=a,b,...    run only these steps (names in the summary table,
#                         e.g. TEST_STEPS=vet-linux,unit); default: all.
#                         The installs are steps too (providers, system).
#
# The tiers (CONTRIBUTING.md, "Test tiers"): `go test ./...` is the unit
# tier; the others are opt-in by build tag, and the shared test support
# gates them (realpeers, pgtest, browser, e2etest under internal/testutil).
# Here every tier runs, each test once: unit, realpeers, postgres, e2e (with
# the browser tests), fuzz. With CI=true a tier that cannot run (a program,
# PostgreSQL or Chromium missing) fails the script, never skips.
#
# Besides the tests it runs four guards, each failing the script with what
# to do: go mod tidy drift, staticcheck (pinned below, config in
# staticcheck.conf), the race detector (every tier but the fuzz targets and
# the bench smoke runs under -race; the e2e tier builds the server with
# -race and fails on its race reports) and goroutine leaks
# (internal/testutil/leakcheck, run by the TestMain of every package that
# starts goroutines).
#
# Every step prints its name when it starts, a line every minute while it
# runs, and its wall time and CPU time (user+sys of everything it ran) when
# it ends; a table of all steps closes the run, failed or not. The installs
# run in the background while Go compiles (they wait on the network and
# npm/apt, the compiles on the CPU); their output is printed, whole, when the
# first step that needs them joins them. A failing step fails the script
# with its name.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

# The linter's version: changing it is a reviewed edit, never a drift.
STATICCHECK=honnef.co/go/tools/cmd/staticcheck@v0.8.2

logs=$(mktemp -d "${TMPDIR:-/tmp}/interop-test.XXXXXX")
summary=$logs/summary.tsv
started=$EPOCHREALTIME

# selected NAME: whether TEST_STEPS (a comma-separated list) names the step.
selected() { [[ -z "${TEST_STEPS:-}" || ",${TEST_STEPS// /}," == *",$1,"* ]]; }

# seconds START: the seconds since START (an $EPOCHREALTIME), rounded.
seconds() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN {printf "%.0f", b - a}'; }

# measure NAME CMD...: runs CMD (a command or a function, with errexit on),
# then prints and records the step's wall time and CPU time. Called in a
# subshell of its own, so the `times` of that subshell are the CPU of this
# step alone (user+sys of the shell and of every child it waited for; a
# background step's CPU is not counted in the foreground step it overlaps).
measure() {
	local name=$1 t0=$EPOCHREALTIME rc=0 ticker
	shift
	(while sleep 60 >/dev/null 2>&1; do printf '   ... %s: %ss, load %s\n' "$name" "$(seconds "$t0")" "$(cut -d' ' -f1 /proc/loadavg)"; done) &
	ticker=$!
	set +e
	(
		set -e
		"$@"
	)
	rc=$?
	set -e
	kill "$ticker" 2>/dev/null || true
	wait "$ticker" 2>/dev/null || true
	local wall cpu
	wall=$(seconds "$t0")
	# times prints "XmY.YYYs XmY.YYYs" for the shell, then its children;
	# into a file, as $(times) would report the substitution's own subshell.
	local tf=$logs/times.$BASHPID
	times >"$tf"
	cpu=$(awk '{for (i = 1; i <= NF; i++) {split($i, p, "m"); s += p[1] * 60 + p[2]}} END {printf "%.0f", s}' "$tf")
	printf '%s\t%s\t%s\t%s\n' "$name" "$wall" "$cpu" "$([[ $rc == 0 ]] && echo ok || echo "FAILED ($rc)")" >>"$summary"
	printf -- '-- %s: %s, %ss wall, %ss CPU\n' "$name" "$([[ $rc == 0 ]] && echo ok || echo "FAILED (exit $rc)")" "$wall" "$cpu"
	return "$rc"
}

print_summary() {
	[[ -s "$summary" ]] || return 0
	printf '\n== steps (wall and CPU seconds; CPU is user+sys of the step'"'"'s processes)\n'
	awk -F'\t' -v total="$(seconds "$started")" '
		BEGIN {printf "%-14s %6s %6s  %s\n", "step", "wall", "CPU", "result"}
		{printf "%-14s %6s %6s  %s\n", $1, $2, $3, $4; cpu += $3}
		END {printf "%-14s %6s %6s  (wall: the whole run; CPU: the sum of the steps)\n", "total", total, cpu}' "$summary"
}
# pg_unlend stops the PostgreSQL cluster pg_lend (below) started, if any.
pg_cluster_pid=
pg_unlend() {
	[[ -n "$pg_cluster_pid" ]] || return 0
	kill -TERM "$pg_cluster_pid" 2>/dev/null || true
	pg_cluster_pid=
	unset INTEROP_TEST_PG
	join pg-cluster
}
trap 'pg_unlend; print_summary; rm -rf "$logs"' EXIT

# run NAME DESCRIPTION HINT CMD...: a foreground step; its output streams.
# On failure the script stops, naming the step and saying what to do (HINT).
run() {
	local name=$1 desc=$2 hint=$3
	shift 3
	selected "$name" || return 0
	printf '\n== %s: %s\n' "$name" "$desc"
	# Not `measure ... || fail`: under || bash ignores errexit in every
	# function the step calls.
	local rc=0
	set +e
	(measure "$name" "$@")
	rc=$?
	set -e
	((rc == 0)) || fail "$name" "$hint"
}

# start NAME DESCRIPTION CMD...: a background step, its output kept in
# $logs/NAME.log; join NAME waits for it and prints that output.
declare -A bg_pid bg_desc
start() {
	local name=$1 desc=$2
	shift 2
	selected "$name" || return 0
	printf '\n== %s: %s (in the background; its output follows when a step needs it)\n' "$name" "$desc"
	(measure "$name" "$@") >"$logs/$name.log" 2>&1 &
	bg_pid[$name]=$!
	bg_desc[$name]=$desc
}
join() {
	local name=$1 rc=0
	[[ -n "${bg_pid[$name]:-}" ]] || return 0
	wait "${bg_pid[$name]}" || rc=$?
	printf '\n== %s: %s (ran in the background)\n' "$name" "${bg_desc[$name]}"
	cat "$logs/$name.log"
	unset "bg_pid[$name]"
	((rc == 0)) || fail "$name" "see its output above"
}

fail() {
	printf '\nFAILED: step %s: %s\n' "$1" "$2" >&2
	exit 1
}

# --- installs, in the background -----------------------------------------

start providers "install the pinned provider programs (npm)" scripts/install-providers.sh

# The desk's browser tests drive Debian's headless Chromium. Install it when
# missing (as root, through apt-get); when that is not possible, the tests
# skip with how to install it, except with CI=true, where they fail.
install_chromium() {
	if command -v chromium >/dev/null 2>&1 || [[ -n "${INTEROP_TEST_CHROMIUM:-}" ]]; then
		echo "chromium: $(command -v chromium || echo "$INTEROP_TEST_CHROMIUM")"
	elif [[ "$(id -u)" == 0 ]] && command -v apt-get >/dev/null 2>&1; then
		apt-get update -qq
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
		echo "chromium: $(command -v chromium)"
	elif [[ "${CI:-}" == "true" ]]; then
		echo "chromium is missing and cannot be installed here (needs root and apt-get); the desk's browser tests need it" >&2
		return 1
	else
		echo "chromium is missing: the desk's browser tests will skip (install it with: apt-get install -y chromium)"
	fi
}
# One step for both apt installs: apt holds one lock, so they run in turn.
install_system() {
	scripts/install-postgres.sh
	install_chromium
}
start system "PostgreSQL server programs (team-store tests start throw-away clusters) and headless Chromium (apt)" install_system

# --- checks ----------------------------------------------------------------

gofmt_check() {
	local unformatted
	unformatted=$(gofmt -l $(git ls-files -co --exclude-standard '*.go'))
	if [[ -n "$unformatted" ]]; then
		echo "gofmt would change:"
		echo "$unformatted"
		return 1
	fi
}
run gofmt "gofmt" "run gofmt -w on the files above" gofmt_check

run tidy "go mod tidy: go.mod and go.sum are what the imports need" \
	"go.mod/go.sum drifted from the imports (diff above); run: go mod tidy" \
	go mod tidy -diff

# One vet per OS, and each file vetted at least once: vet type-checks every
# package with its tests, so it also covers what a test-link per OS would.
#  - Linux: with -race and every tier's tag. -race makes vet compile the
#    dependencies race-instrumented, the very compiles staticcheck and the
#    -race test tiers below reuse from the build cache (a plain vet
#    compiled every dependency a second time, for nothing else). The tags
#    vet the tier files (tier_on.go, the tests behind realpeers, postgres,
#    browser, e2e) that an untagged vet never read. What this vet does not
#    read (files for !race or a missing tag: e2etest's race_off.go and
#    tier_off.go) the untagged Windows and macOS vets below read.
#  - Windows, macOS: untagged, by internal/testutil/crossvet: go vet's
#    analyzers on every package with its tests, each package and every
#    dependency parsed and type-checked from source for that GOOS (nothing
#    compiled or linked). A type error fails it as the build would. On an
#    empty build cache the two steps took 246 s of CPU (Windows 170 s with
#    the checker's own build, macOS 76 s; load 30) where `GOOS=… go vet
#    ./...` then `go build ./...` took 853 s (453 + 400, a quiet machine),
#    compiling every dependency once more per OS; it peaks at about 3.5 GB of memory (every package's
#    syntax and types at once). What only a compile or link finds (a
#    body-less function without assembly, a bad go:linkname) it does not:
#    the module has neither.
run vet-linux "go vet -race -tags realpeers,postgres,browser,e2e ./... (GOOS=linux)" \
	"go vet found problems (above)" \
	go vet -race -tags realpeers,postgres,browser,e2e ./...

# staticcheck type-checks the packages from source and their dependencies
# from export data, which it has `go list -export` compile. With -race in
# GOFLAGS those compiles are the race-instrumented ones the vet above made
# and the unit tier reuses (the types are the same; only the race tag's
# files differ, as for vet). The linter itself is built without -race.
staticcheck() {
	GOBIN="$logs/bin" go install "$STATICCHECK"
	GOFLAGS="$(go env GOFLAGS) -race" "$logs/bin/staticcheck" ./...
}
run staticcheck "staticcheck (${STATICCHECK#*@}, staticcheck.conf)" \
	"staticcheck found problems (above); fix them in the code, or in gen/ for generated files" \
	staticcheck

# The checker is built without -race (a race build type-checks several
# times slower); its compiles of the standard library and golang.org/x/tools
# are the ones interopgen, ent and ddl below reuse.
other_os() {
	go build -o "$logs/bin/crossvet" ./internal/testutil/crossvet
	"$logs/bin/crossvet" -goos "$1" ./...
}
for goos in windows darwin; do
	run "os-$goos" "go vet's analyzers and a type-check from source of ./... with tests, GOOS=$goos (crossvet)" \
		"the code does not type-check or vet for $goos (above)" \
		other_os "$goos"
done

run interopgen "interopgen check (generated code, snapshots, docs, budgets)" \
	"run: go run ./cmd/interopgen generate" \
	go run ./cmd/interopgen check

ent_current() {
	go generate ./ent
	if [[ -n "$(git status --porcelain -- ent)" ]]; then
		echo "ent/ drifted from ent/schema; run: go generate ./ent"
		git status --short -- ent
		return 1
	fi
}
run ent "ent generated code is current" "run: go generate ./ent" ent_current

# CGO_ENABLED=0: schemagen links modernc's SQLite (pure Go, the same schema
# either way), and the benchmark steps below, which build without cgo (see
# bench_env), reuse this compile of it instead of making one of their own.
ddl_current() {
	CGO_ENABLED=0 go generate ./internal/store
	if [[ -n "$(git status --porcelain -- internal/store)" ]]; then
		echo "internal/store DDL drifted from ent/schema; run: go generate ./internal/store"
		git status --short -- internal/store
		return 1
	fi
}
run ddl "store DDL is current (schema.sql, schema_postgres.sql)" "run: go generate ./internal/store" ddl_current

# One reachable reflect method lookup (text/template, ent's field
# descriptors) makes the linker keep every exported method of every type:
# a 20% larger binary, and more of it touched at every start.
run linker "the runtime binary keeps the linker's method dead-code elimination (no reflect method lookup linked)" \
	"see the test's message: remove the lookup from the binary" \
	go test -tags e2e -count=1 -run '^TestNoReflectMethodInTheBinary$' ./internal/archtest

# --- test tiers -------------------------------------------------------------

# The packages whose test binary links a tier's test support, by go list.
module=$(go list -m)
linking() {
	go list -test -f '{{if .ForTest}}{{.ForTest}}{{range .Deps}}{{if eq . "'"$module/$1"'"}} X{{end}}{{end}}{{end}}' ./... |
		awk '$2 == "X" {print $1}' | sort -u | grep -vxF -e "$module/internal/e2e" -e "$module/internal/bench" -e "$module/cmd/interop-bench"
}
# tier_run TAGS GATE PKG...: -run and the pattern of the tests of PKG that
# can reach the tier's gate package, by internal/testutil/tiertests; the
# other tests of those packages ran, the same, in the unit tier, and a tier
# runs only what the unit tier could not (each test once per CI pass).
tier_run() {
	local pattern
	pattern=$(go run ./internal/testutil/tiertests -tags "$1" -gate "$module/$2" "${@:3}")
	printf '%s\n' -run "$pattern"
}
real_pkgs=() pg_pkgs=() real_run=() pg_run=()
if selected realpeers; then
	mapfile -t real_pkgs < <(linking internal/testutil/realpeers)
	((${#real_pkgs[@]} == 0)) || mapfile -t real_run < <(tier_run realpeers internal/testutil/realpeers "${real_pkgs[@]}")
fi
if selected postgres; then
	mapfile -t pg_pkgs < <(linking internal/testutil/pgtest; echo "$module/internal/testutil/pgtest")
	mapfile -t pg_run < <(tier_run postgres,e2e internal/testutil/pgtest "${pg_pkgs[@]}")
fi
if { selected realpeers && ((${#real_run[@]} != 2)); } || { selected postgres && ((${#pg_run[@]} != 2)); }; then
	fail "tier packages" "could not find the packages or tests of the realpeers and postgres tiers (go list or tiertests above)"
fi

# go test's own per-package timeout (10 minutes) measures the machine, not
# the code: on a loaded 2-core machine a package of real-program tests ran
# past it while every test in it was making progress (realagents, load 35).
# The tests bound each wait themselves and name what they waited for; this
# bound only catches a package that hangs outright, and stays well inside
# CI's 90 minutes.
test_timeout=-timeout=30m

# go test runs a curated subset of go vet's analyzers on every package it
# tests, each tier with its own tags, so each a type-check of its own. The
# vet-linux step above ran every analyzer on every package with its tests
# and every tier's tag (and crossvet the untagged files for Windows and
# macOS), so here it would check nothing new: the tiers run with -vet=off.
# Measured on a warm build cache, the unit tier's `-run '^$'` pass: 98 s of
# CPU with go test's vet, 47 s without. `go test ./...` alone keeps it.
novet=-vet=off

run unit "unit tier, under -race: go test -race ./... (no real program, PostgreSQL, browser or process-killing test)" \
	"a failing test, a DATA RACE report, or leakcheck naming goroutines left running (above)" \
	go test -race "$test_timeout" "$novet" -count=1 ./...

join providers
run realpeers "realpeers tier, under -race: the tests of ${#real_pkgs[@]} packages that drive the real provider programs (${real_pkgs[*]##*/})" \
	"a failing test or a DATA RACE report (above)" \
	go test -race "$test_timeout" "$novet" -tags realpeers -count=1 "${real_run[@]}" "${real_pkgs[@]}"

join system

# One throw-away PostgreSQL cluster for every test binary of the tiers that
# use one (postgres, e2e, bench-smoke): pgtest attaches to it through
# INTEROP_TEST_PG instead of running initdb and starting a server per test
# binary (a dozen of them); each test still gets a database of its own. The
# server's CPU is the step pg-cluster's, reported when the last of those
# tiers ended.
pg_cluster() {
	go build -o "$logs/bin/pgcluster" ./internal/testutil/pgtest/pgcluster
	exec "$logs/bin/pgcluster" "$logs/pg.env"
}
pg_lend() {
	selected postgres || selected e2e || selected bench-smoke || return 0
	local desc="one throw-away PostgreSQL cluster, lent to the postgres, e2e and bench-smoke tiers"
	printf '\n== pg-cluster: %s (in the background; its output follows when the last of them ended)\n' "$desc"
	(measure pg-cluster pg_cluster) >"$logs/pg-cluster.log" 2>&1 &
	bg_pid[pg-cluster]=$!
	bg_desc[pg-cluster]=$desc
	until [[ -s $logs/pg.env ]]; do
		if ! kill -0 "${bg_pid[pg-cluster]}" 2>/dev/null; then
			join pg-cluster
			fail pg-cluster "the cluster did not start (above)"
		fi
		sleep 0.2
	done
	export "$(sed -n 1p "$logs/pg.env")"
	pg_cluster_pid=$(sed -n 2p "$logs/pg.env")
}
pg_lend
run postgres "postgres tier, under -race: the store-backed tests of ${#pg_pkgs[@]} packages on a throw-away PostgreSQL team store (${pg_pkgs[*]##*/})" \
	"a failing test or a DATA RACE report (above)" \
	go test -race "$test_timeout" "$novet" -tags postgres,e2e -count=1 "${pg_run[@]}" "${pg_pkgs[@]}"

# The e2e tier outside internal/e2e is these multi-process tests (their
# PostgreSQL halves ran in the postgres tier, which has the e2e tag too).
e2e_tests='^(TestIdempotencyAcrossProcesses|TestAcquireAcrossProcesses|TestDurabilityAcrossSIGKILL|TestVerifyTimeoutAndKillEscalation|TestBuildLogsRacesOfItsRuns)$'
run e2e-processes "e2e tier, under -race: multi-process and kill tests on SQLite" \
	"a multi-process test failed (above)" \
	go test -race "$test_timeout" "$novet" -tags e2e -count=1 -run "$e2e_tests" ./internal/conversations ./internal/claims ./internal/store ./internal/workflow ./internal/testutil/e2etest

# The two fuzz targets run at the same time, one fuzzing worker each, for
# FUZZTIME: one minute of wall time instead of two, and half the CPU. Each
# target gets as many executions as 30 s with two workers did; in CI logs
# the first 30 s found about 80% of a minute's new inputs (FuzzValidators
# 338 of 416, FuzzFrames 235 of 262). The seed corpora run in the unit tier.
# -fuzz compiles every package of the test binary coverage-instrumented
# (the standard library too, so nothing the other steps compiled is reused),
# and on an empty cache that build was most of this step's CPU. So each
# target lives in a small package whose test imports only the code under
# test and its oracle: internal/catalogtest (the catalogs, argv and
# santhosh-tekuri/jsonschema; the catalog invariants, which read the spec
# and parse Go, are internal/catalogtest/invariants) and internal/stdio/frame
# (the frame layer and the SDK's decoder, not the SDK's server, net/http or
# crypto). And the two test binaries are built one after the other (go test
# -c -fuzz: the cache entries go test -fuzz makes), the second reusing the
# packages the first instrumented, where two go test -fuzz started together
# compiled them twice at once; then both fuzz together, each in its package
# directory (where testdata/fuzz is read and a failing input is written),
# with the corpus cache go test -fuzz uses. On an empty cache (load 30):
# the two builds took 139 s of CPU before (both targets' packages as they
# were, at once), 50 s now (42 + 7); the whole step 214 s before, 81 s now.
# The smaller binaries also have fewer coverage counters to reset and
# compare per execution: built, and run side by side with the old ones,
# FuzzValidators made 105,065 executions on 18 s of CPU (74,352 on 19 s
# before), FuzzFrames 245,535 on 16 s (101,106 on 18 s).
fuzz() {
	local bin=$logs/fuzz pids=() rc=0 pid target pkg
	local -A targets=([FuzzValidators]=internal/catalogtest [FuzzFrames]=internal/stdio/frame)
	mkdir -p "$bin"
	for target in FuzzValidators FuzzFrames; do
		go test -c -fuzz "^$target\$" -o "$bin/$target.test" "./${targets[$target]}"
	done
	for target in FuzzValidators FuzzFrames; do
		pkg=${targets[$target]}
		(
			cd "$pkg"
			exec "$bin/$target.test" -test.paniconexit0 -test.run '^$' -test.fuzz "^$target\$" \
				-test.fuzztime "${FUZZTIME:-60s}" -test.fuzzminimizetime 200x -test.parallel 1 \
				-test.fuzzcachedir "$(go env GOCACHE)/fuzz/$module/$pkg"
		) 2>&1 | sed -u "s/^/$target: /" &
		pids+=($!)
	done
	for pid in "${pids[@]}"; do
		wait "$pid" || rc=1
	done
	return "$rc"
}
# The fuzz step runs in the background beside the e2e tier: that tier
# mostly waits on the real programs and Chromium (329 s of wall time for
# 120 s of CPU in a cold CI run), and the fuzzers run for a fixed wall time,
# so together they take the e2e tier's time instead of both. A failing
# input fails the script when the step is joined, after the e2e tier.
start fuzz "fuzz tier: the generated validators against santhosh-tekuri/jsonschema, the stdio frame layer against the SDK's decoder (${FUZZTIME:-60s}, at the same time)" \
	fuzz

run e2e "e2e tier, under -race: internal/e2e with the real programs, PostgreSQL and the browser (the server built with -race)" \
	"a failing test, or a data race the -race server reported (above)" \
	go test -race "$test_timeout" "$novet" -tags e2e,realpeers,postgres,browser -count=1 ./internal/e2e
join fuzz

# The benchmark harness measures a runtime it builds; a race build would
# measure nothing and its reports would go unread, so this runs without
# -race (its other tests ran under -race in the unit tier).
#
# bench_env CMD...: runs CMD of one of the three benchmark steps with
# CGO_ENABLED=0, the way the harness builds the servers it measures
# (internal/bench.Build, as the README builds the runtime): the test binary,
# interop-bench and the two servers then share one compile of the
# dependency graph (every package that imports net, modernc's SQLite among
# them, differs with cgo on), which the ddl step above started. The two
# servers are built once, by the first of the steps, into $logs/bench-bin,
# which bench.Build uses instead of linking them again ($INTEROP_BENCH_BIN).
bench_env() {
	local bin=$logs/bench-bin
	if [[ ! -x $bin/interop-runtime || ! -x $bin/minimalserver ]]; then
		CGO_ENABLED=0 go build -o "$bin/" ./cmd/interop-runtime ./internal/bench/minimalserver
	fi
	CGO_ENABLED=0 INTEROP_BENCH_BIN=$bin "$@"
}
run bench-smoke "e2e tier: the scale benchmark's smoke tests on SQLite and PostgreSQL" \
	"the scale benchmark's smoke test failed (above)" \
	bench_env go test "$novet" -tags e2e,postgres -count=1 -run '^(TestScaleSmokeOnBothStores|TestScaleOnAGivenServer)$' ./internal/bench

# -scale 100000: get_work_graph and list_work_items limit=100 on 100,000
# works of every graph shape, seeded once and copied per shape (about 15 s
# of CPU): the step took 50 s wall and 40 s of CPU with both cores kept
# busy (16–22 s wall before; see docs/benchmarks.md, "The graph calls in
# the gate").
run bench-gate "benchmark gate: spawn → initialize, call p50, peak RSS and the graph calls at 100,000 works as ratios to the minimal go-sdk server, HTTP call p50 to stdio's, all of the same run" \
	"a ratio to the minimal go-sdk server, or HTTP's to stdio's, is past its limit (above)" \
	bench_env go run ./cmd/interop-bench -gate -q -n 5 -calls 2000 -profiles full -read-only=false -inittrace=false -scale 100000

pg_unlend

run handoff "handoff benchmark gate: three tasks on the real providers, zero duplicate sends, deliveries or event reads" \
	"a duplicate send, delivery or event read (above)" \
	bench_env go run ./cmd/interop-bench check -q


# A background step no step joined (TEST_STEPS without its users) still
# reports.
for name in "${!bg_pid[@]}"; do join "$name"; done
