#!/usr/bin/env bash
# install-providers.sh installs the pinned provider programs used by the
# real-peer tests into a cache folder, one npm prefix per package version:
#
#   $INTEROP_PROVIDER_CACHE/<pkg>@<version>   (default: $REPO/.cache/providers)
#
# Besides the provider programs it installs the client libraries the tests
# drive the runtime with (the official MCP TypeScript SDK, for the HTTP
# tests); a library has no binary, so its entry names "-" and its
# package.json is checked instead.
#
# It is idempotent: a package whose prefix holds the marker file
# .installed-ok is skipped. Any npm failure stops the script with a non-zero
# status. Run with --print to only print the locations.
set -euo pipefail

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$script_dir/.." && pwd)
cache=${INTEROP_PROVIDER_CACHE:-$repo/.cache/providers}

# name@version  binary-name ("-" for a library)
packages=(
	"opencode-ai@1.18.33 opencode"
	"@openai/codex@0.171.0 codex"
	"@agentclientprotocol/claude-agent-acp@0.49.0 claude-agent-acp"
	"@modelcontextprotocol/sdk@1.32.2 -"
	"@qwen-code/qwen-code@0.24.4 qwen"
	"@zed-industries/codex-acp@0.16.0 codex-acp"
	"@google/gemini-cli@0.61.0 gemini"
)

print_only=0
if [[ "${1:-}" == "--print" ]]; then
	print_only=1
fi

if ((print_only == 0)) && ! command -v npm >/dev/null 2>&1; then
	echo "install-providers: npm not found on PATH (install Node.js 20+)" >&2
	exit 1
fi

mkdir -p "$cache"

for entry in "${packages[@]}"; do
	spec=${entry% *}
	bin=${entry#* }
	# A scoped name "@scope/name@1.2.3" becomes the folder "@scope+name@1.2.3".
	dir="$cache/${spec//\//+}"
	marker="$dir/.installed-ok"
	if [[ "$bin" == "-" ]]; then
		# A library: its package.json under node_modules/<name>.
		target="$dir/node_modules/${spec%@*}/package.json"
		present() { [[ -f "$target" ]]; }
	else
		target="$dir/node_modules/.bin/$bin"
		present() { [[ -x "$target" ]]; }
	fi
	if ((print_only == 1)); then
		echo "$spec -> $target"
		continue
	fi
	if [[ -f "$marker" ]] && present; then
		echo "install-providers: $spec already installed: $target"
		continue
	fi
	echo "install-providers: installing $spec into $dir ..."
	mkdir -p "$dir"
	# --prefix keeps each version in its own tree; the marker is written only
	# after npm succeeded and the binary is present.
	if ! npm install --prefix "$dir" --no-audit --no-fund --loglevel=error "$spec"; then
		echo "install-providers: npm install of $spec FAILED (see the npm output above)" >&2
		exit 1
	fi
	if ! present; then
		echo "install-providers: $spec installed but $target is missing" >&2
		exit 1
	fi
	printf '%s\n' "$spec" >"$marker"
	echo "install-providers: installed $spec: $target"
done

echo "install-providers: cache at $cache"
