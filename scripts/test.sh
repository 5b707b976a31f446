#!/usr/bin/env bash
# test.sh is the project's one test command (README): it installs what the
# tests need (the pinned provider programs, via npm; PostgreSQL's server
# programs, via apt, for the team-store tests), then runs every check CI
# runs. .ci/run calls exactly this script.
#
#   FUZZTIME=60s   how long the validator fuzz target runs (default 60s)
#
# Besides the tests it runs four guards, each failing the script with what
# to do: go mod tidy drift, staticcheck (pinned below, config in
# staticcheck.conf), the race detector (every package's tests run under
# -race, once) and goroutine leaks (internal/testutil/leakcheck, run by the
# TestMain of every package that starts goroutines).
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

step "go vet"
go vet ./...

step "staticcheck (${STATICCHECK#*@}, staticcheck.conf)"
go run "$STATICCHECK" ./... || fail "staticcheck found problems (above); fix them in the code, or in gen/ for generated files"

step "cross-build, vet and compile the tests for Windows and macOS"
for goos in windows darwin; do
	GOOS=$goos go build ./...
	GOOS=$goos go vet ./...
	# Links every test binary without running it (-exec /bin/true).
	GOOS=$goos go test -count=1 -run '^$' -exec /bin/true ./... >/dev/null
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

# Every package's tests run once, under the race detector; the TestMain of
# each package that starts goroutines (internal/testutil/leakcheck) fails it
# when a goroutine outlives its tests. The packages whose tests drive the
# real provider programs are those whose test binary links
# internal/testutil/realpeers; they run second, as their own step, so a
# failure says which kind of test it is. Both sets are under -race: measured
# on 2 cores, it keeps .ci/run well inside its 30 minutes (README).
realpeers="$(go list -m)/internal/testutil/realpeers"
mapfile -t real_pkgs < <(go list -test -f '{{if .ForTest}}{{.ForTest}}{{range .Deps}}{{if eq . "'"$realpeers"'"}} real{{end}}{{end}}{{end}}' ./... | awk '$2 == "real" {print $1}' | sort -u)
mapfile -t other_pkgs < <(go list ./... | grep -vxF -f <(printf '%s\n' "${real_pkgs[@]}"))
((${#real_pkgs[@]} > 0 && ${#other_pkgs[@]} > 0)) || fail "could not split the packages by internal/testutil/realpeers (go list above)"

step "go test -race: ${#other_pkgs[@]} packages without the real provider programs"
go test -race -count=1 "${other_pkgs[@]}" ||
	fail "go test -race failed (above): a failing test, a DATA RACE report, or leakcheck naming goroutines left running"

step "go test -race: ${#real_pkgs[@]} packages driving the real provider programs (${real_pkgs[*]##*/})"
go test -race -count=1 "${real_pkgs[@]}" ||
	fail "go test -race on the real-provider packages failed (above): a failing test, a DATA RACE report, or leakcheck naming goroutines left running"

step "store-backed suites once more on a PostgreSQL team store (INTEROP_TEST_STORE=postgres)"
INTEROP_TEST_STORE=postgres go test -count=1 ./internal/workflow ./internal/conversations ./internal/claims \
	./internal/events ./internal/delivery ./internal/providers/registry ./internal/desk

step "handoff benchmark gate: three tasks on the real providers, zero duplicate sends, deliveries or event reads"
go run ./cmd/interop-bench check -q

step "fuzz the generated validators against santhosh-tekuri/jsonschema (${FUZZTIME:-60s})"
go test -run '^$' -fuzz '^FuzzValidators$' -fuzztime "${FUZZTIME:-60s}" -fuzzminimizetime 200x ./internal/catalogtest

step "fuzz the stdio frame layer against the SDK's decoder (${FUZZTIME:-60s})"
go test -run '^$' -fuzz '^FuzzFrames$' -fuzztime "${FUZZTIME:-60s}" -fuzzminimizetime 200x ./internal/stdio
