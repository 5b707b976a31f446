#!/usr/bin/env bash
# test.sh is the project's one test command (README): it installs what the
# tests need (the pinned provider programs, via npm; PostgreSQL's server
# programs, via apt, for the team-store tests), then runs every check CI
# runs. .ci/run calls exactly this script.
#
#   FUZZTIME=60s   how long the validator fuzz target runs (default 60s)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

step() { printf '\n== %s\n' "$*"; }

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

step "go vet"
go vet ./...

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

step "go test"
go test -count=1 ./...

step "store-backed suites once more on a PostgreSQL team store (INTEROP_TEST_STORE=postgres)"
INTEROP_TEST_STORE=postgres go test -count=1 ./internal/workflow ./internal/conversations ./internal/claims \
	./internal/events ./internal/delivery ./internal/providers/registry ./internal/desk

step "handoff benchmark gate: three tasks on the real providers, zero duplicate sends, deliveries or event reads"
go run ./cmd/interop-bench check -q

step "fuzz the generated validators against santhosh-tekuri/jsonschema (${FUZZTIME:-60s})"
go test -run '^$' -fuzz '^FuzzValidators$' -fuzztime "${FUZZTIME:-60s}" -fuzzminimizetime 200x ./internal/catalogtest

step "fuzz the stdio frame layer against the SDK's decoder (${FUZZTIME:-60s})"
go test -run '^$' -fuzz '^FuzzFrames$' -fuzztime "${FUZZTIME:-60s}" -fuzzminimizetime 200x ./internal/stdio
