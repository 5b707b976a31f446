#!/usr/bin/env bash
# test.sh is the project's one test command (README): it installs what the
# tests need (the pinned provider programs, via npm; PostgreSQL's server
# programs, via apt; headless Chromium), then runs every check and every
# test tier CI runs. .ci/run calls exactly this script.
#
#   FUZZTIME=60s   how long each fuzz target runs (default 60s)
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
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

# The linter's version: changing it is a reviewed edit, never a drift.
STATICCHECK=honnef.co/go/tools/cmd/staticcheck@v0.8.2

step() { printf '\n== %s\n' "$*"; }
fail() { printf '\nFAILED: %s\n' "$*" >&2; exit 1; }

step "install pinned provider programs"
scripts/install-providers.sh

step "PostgreSQL server programs (team-store tests start throw-away clusters)"
scripts/install-postgres.sh
# The desk's browser tests drive Debian's headless Chromium. Install it when
# missing (as root, through apt-get); when that is not possible, the tests
# skip with how to install it, except with CI=true, where they fail.
step "headless Chromium for the desk's browser tests"
if command -v chromium >/dev/null 2>&1 || [[ -n "${INTEROP_TEST_CHROMIUM:-}" ]]; then
	echo "chromium: $(command -v chromium || echo "$INTEROP_TEST_CHROMIUM")"
elif [[ "$(id -u)" == 0 ]] && command -v apt-get >/dev/null 2>&1; then
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
	echo "chromium: $(command -v chromium)"
elif [[ "${CI:-}" == "true" ]]; then
	echo "chromium is missing and cannot be installed here (needs root and apt-get); the desk's browser tests need it" >&2
	exit 1
else
	echo "chromium is missing: the desk's browser tests will skip (install it with: apt-get install -y chromium)"
fi

step "gofmt"
unformatted=$(gofmt -l $(git ls-files -co --exclude-standard '*.go'))
if [[ -n "$unformatted" ]]; then
	echo "gofmt would change:"; echo "$unformatted"; exit 1
fi

step "go mod tidy: go.mod and go.sum are what the imports need"
go mod tidy -diff || fail "go.mod/go.sum drifted from the imports (diff above); run: go mod tidy"

# go vet type-checks every package with its tests, so one vet per OS
# covers what a test-link per OS would (dropped: it cost minutes and
# checked nothing vet does not); the Windows and macOS builds share the
# build cache with their vet.
for goos in linux windows darwin; do
	step "go vet, GOOS=$goos"
	GOOS=$goos go vet ./...
done

step "staticcheck (${STATICCHECK#*@}, staticcheck.conf)"
go run "$STATICCHECK" ./... || fail "staticcheck found problems (above); fix them in the code, or in gen/ for generated files"

for goos in windows darwin; do
	step "go build, GOOS=$goos"
	GOOS=$goos go build ./...
done

step "interopgen check (generated code, snapshots, docs, budgets)"
go run ./cmd/interopgen check

step "ent generated code is current"
go generate ./ent
if [[ -n "$(git status --porcelain -- ent)" ]]; then
	echo "ent/ drifted from ent/schema; run: go generate ./ent"; git status --short -- ent; exit 1
fi

step "store DDL is current (schema.sql, schema_postgres.sql)"
go generate ./internal/store
if [[ -n "$(git status --porcelain -- internal/store)" ]]; then
	echo "internal/store DDL drifted from ent/schema; run: go generate ./internal/store"; git status --short -- internal/store; exit 1
fi

# The packages whose test binary links a tier's test support, by go list.
module=$(go list -m)
linking() {
	go list -test -f '{{if .ForTest}}{{.ForTest}}{{range .Deps}}{{if eq . "'"$module/$1"'"}} X{{end}}{{end}}{{end}}' ./... |
		awk '$2 == "X" {print $1}' | sort -u | grep -vxF -e "$module/internal/e2e" -e "$module/internal/bench" -e "$module/cmd/interop-bench"
}
mapfile -t real_pkgs < <(linking internal/testutil/realpeers)
mapfile -t pg_pkgs < <(linking internal/testutil/pgtest; echo "$module/internal/testutil/pgtest")
((${#real_pkgs[@]} > 0 && ${#pg_pkgs[@]} > 0)) || fail "could not find the packages of the realpeers and postgres tiers (go list above)"

step "unit tier, under -race: go test -race ./... (no real program, PostgreSQL, browser or process-killing test)"
go test -race -count=1 ./... ||
	fail "unit tier failed (above): a failing test, a DATA RACE report, or leakcheck naming goroutines left running"

step "realpeers tier, under -race: ${#real_pkgs[@]} packages against the real provider programs (${real_pkgs[*]##*/})"
go test -race -tags realpeers -count=1 "${real_pkgs[@]}" ||
	fail "realpeers tier failed (above)"

step "postgres tier, under -race: ${#pg_pkgs[@]} store-backed packages on a throw-away PostgreSQL team store (${pg_pkgs[*]##*/})"
go test -race -tags postgres,e2e -count=1 "${pg_pkgs[@]}" ||
	fail "postgres tier failed (above)"

# The e2e tier outside internal/e2e is these multi-process tests (their
# PostgreSQL halves ran in the postgres tier, which has the e2e tag too).
e2e_tests='^(TestIdempotencyAcrossProcesses|TestAcquireAcrossProcesses|TestDurabilityAcrossSIGKILL|TestVerifyTimeoutAndKillEscalation|TestBuildLogsRacesOfItsRuns)$'
step "e2e tier, under -race: multi-process and kill tests on SQLite"
go test -race -tags e2e -count=1 -run "$e2e_tests" ./internal/conversations ./internal/claims ./internal/store ./internal/workflow ./internal/testutil/e2etest ||
	fail "e2e tier (multi-process tests) failed (above)"

step "e2e tier, under -race: internal/e2e with the real programs, PostgreSQL and the browser (the server built with -race)"
go test -race -tags e2e,realpeers,postgres,browser -count=1 ./internal/e2e ||
	fail "e2e tier failed (above): a failing test, or a data race the -race server reported"

# The benchmark harness measures a runtime it builds; a race build would
# measure nothing and its reports would go unread, so this runs without
# -race (its other tests ran under -race in the unit tier).
step "e2e tier: the scale benchmark's smoke tests on SQLite and PostgreSQL"
go test -tags e2e,postgres -count=1 -run '^(TestScaleSmokeOnBothStores|TestScaleOnAGivenServer)$' ./internal/bench ||
	fail "the scale benchmark's smoke test failed (above)"

step "benchmark gate: spawn → initialize, call p50 and peak RSS as ratios to the minimal go-sdk server, HTTP call p50 to stdio's, all of the same run"
go run ./cmd/interop-bench -gate -q -n 5 -calls 2000 -profiles full -read-only=false -inittrace=false ||
	fail "the benchmark gate failed (above): a ratio to the minimal go-sdk server is past its limit"

step "handoff benchmark gate: three tasks on the real providers, zero duplicate sends, deliveries or event reads"
go run ./cmd/interop-bench check -q

step "fuzz tier: the generated validators against santhosh-tekuri/jsonschema (${FUZZTIME:-60s})"
go test -run '^$' -fuzz '^FuzzValidators$' -fuzztime "${FUZZTIME:-60s}" -fuzzminimizetime 200x ./internal/catalogtest

step "fuzz tier: the stdio frame layer against the SDK's decoder (${FUZZTIME:-60s})"
go test -run '^$' -fuzz '^FuzzFrames$' -fuzztime "${FUZZTIME:-60s}" -fuzzminimizetime 200x ./internal/stdio
