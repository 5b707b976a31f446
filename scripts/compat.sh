#!/usr/bin/env bash
# compat.sh runs the real-program tests of the ACP agents against several
# released versions of each agent program and writes docs/compatibility.md
# (agent × version × pass/fail, with the failing tests). It is not part of
# CI's default run: it installs packages from the npm registry.
#
#   scripts/compat.sh                      # each agent: the pinned version and the newest published
#   scripts/compat.sh qwen=0.24.4,0.25.0   # given versions of given agents
#   scripts/compat.sh codex-acp            # one agent: pinned and newest
#
# Agents: claude-code, qwen, codex-acp, opencode-acp, gemini. Each version is
# installed into $INTEROP_PROVIDER_CACHE/<pkg>@<version> (as
# install-providers.sh does) and the table-driven test
# internal/providers/acp/realagents TestRealAgents/<agent> runs against it
# through the program's INTEROP_TEST_* override.
set -euo pipefail

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$script_dir/.." && pwd)
cache=${INTEROP_PROVIDER_CACHE:-$repo/.cache/providers}
out=${COMPAT_OUT:-$repo/docs/compatibility.md}

# agent  npm-package  binary  override-variable  pinned-version
agents=(
	"claude-code @agentclientprotocol/claude-agent-acp claude-agent-acp INTEROP_TEST_CLAUDE_ACP 0.49.0"
	"qwen @qwen-code/qwen-code qwen INTEROP_TEST_QWEN 0.24.4"
	"codex-acp @zed-industries/codex-acp codex-acp INTEROP_TEST_CODEX_ACP 0.16.0"
	"opencode-acp opencode-ai opencode INTEROP_TEST_OPENCODE 1.18.33"
	"gemini @google/gemini-cli gemini INTEROP_TEST_GEMINI 0.61.0"
)

declare -A wanted=()
for arg in "$@"; do
	if [[ "$arg" == *=* ]]; then
		wanted[${arg%%=*}]=${arg#*=}
	else
		wanted[$arg]=default
	fi
done

rows=()
for entry in "${agents[@]}"; do
	read -r id pkg bin var pinned <<<"$entry"
	if (($# > 0)) && [[ -z "${wanted[$id]:-}" ]]; then
		continue
	fi
	versions=${wanted[$id]:-default}
	if [[ "$versions" == default ]]; then
		newest=$(npm view "$pkg" version 2>/dev/null || true)
		versions=$pinned
		if [[ -n "$newest" && "$newest" != "$pinned" ]]; then
			versions="$pinned,$newest"
		fi
	fi
	IFS=, read -r -a list <<<"$versions"
	for v in "${list[@]}"; do
		dir="$cache/${pkg//\//+}@$v"
		target="$dir/node_modules/.bin/$bin"
		if [[ ! -x "$target" ]]; then
			echo "compat: installing $pkg@$v ..."
			mkdir -p "$dir"
			if ! npm install --prefix "$dir" --no-audit --no-fund --loglevel=error "$pkg@$v"; then
				rows+=("| $id | $v | install failed | npm install $pkg@$v | — |")
				continue
			fi
		fi
		echo "compat: testing $id $v ..."
		log=$(mktemp)
		status=pass
		if ! (cd "$repo" && env "$var=$target" INTEROP_PROVIDER_CACHE="$cache" \
			go test -count=1 -tags realpeers -run "TestRealAgents/$id\$" -v ./internal/providers/acp/realagents/ >"$log" 2>&1); then
			status=fail
		fi
		failing=$(grep -E '^\s+--- FAIL: ' "$log" | sed -E 's/^\s+--- FAIL: ([^ ]+).*/\1/' | tr '\n' ' ' || true)
		# Steps skipped as a declared gap (the table's gaps): named, never
		# counted as passing.
		gaps=$(grep -E '^\s+--- SKIP: TestRealAgents/[^/]+/' "$log" | sed -E 's/^\s+--- SKIP: TestRealAgents\/[^/]+\/([^ ]+).*/\1/' | tr '\n' ' ' || true)
		if grep -q -- '--- SKIP' "$log" && ! grep -q -- '--- PASS' "$log"; then
			status=skipped
		fi
		rows+=("| $id | $v | $status | ${failing:-—} | ${gaps:-—} |")
		rm -f "$log"
	done
done

# Rows of earlier runs for agent versions not tested now are kept, so
# agents can be run one at a time.
if [[ -f "$out" ]]; then
	while IFS= read -r line; do
		[[ "$line" =~ ^\|\ ([a-z0-9-]+)\ \|\ ([^ |]+)\ \| ]] || continue
		key="| ${BASH_REMATCH[1]} | ${BASH_REMATCH[2]} |"
		[[ "${BASH_REMATCH[1]}" == agent ]] && continue
		fresh=0
		for r in "${rows[@]}"; do
			[[ "$r" == "$key"* ]] && fresh=1
		done
		((fresh == 0)) && rows+=("$line")
	done <"$out"
fi
mapfile -t rows < <(printf '%s\n' "${rows[@]}" | sort -t'|' -k2,2 -k3,3V)

{
	echo "# Compatibility"
	echo
	echo "The real-program tests (\`internal/providers/acp/realagents\`, offline against the fake model) run against released"
	echo "versions of each ACP agent by \`scripts/compat.sh\`, on $(date -u +%Y-%m-%d). The pinned version is in"
	echo "[agents.md](agents.md); \`doctor\` warns when an installed version is outside the tested range."
	echo
	echo "Known gaps are steps the test table skips with their reason (see docs/agents.md); they are not counted as passing."
	echo
	echo "| agent | version | result | failing tests | known gaps (skipped steps) |"
	echo "|---|---|---|---|---|"
	printf '%s\n' "${rows[@]}"
} >"$out"
echo "compat: wrote $out"
