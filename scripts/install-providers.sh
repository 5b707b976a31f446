#!/usr/bin/env bash
# install-providers.sh installs the pinned provider programs used by the
# real-peer tests into a cache folder, one npm prefix per package version:
#
#   $INTEROP_PROVIDER_CACHE/<pkg>@<version>   (default: $REPO/.cache/providers)
#
# It is idempotent: a package whose prefix holds the marker file
# .installed-ok is skipped. Any npm failure stops the script with a non-zero
# status. Run with --print to only print the locations.
set -euo pipefail

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$script_dir/.." && pwd)
cache=${INTEROP_PROVIDER_CACHE:-$repo/.cache/providers}

# name@version  binary-name
packages=(
	"opencode-ai@1.18.33 opencode"
	"@openai/codex@0.171.0 codex"
	"@agentclientprotocol/claude-agent-acp@0.49.0 claude-agent-acp"
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
	if ((print_only == 1)); then
		echo "$spec -> $dir/node_modules/.bin/$bin"
		continue
	fi
	if [[ -f "$marker" && -x "$dir/node_modules/.bin/$bin" ]]; then
		echo "install-providers: $spec already installed: $dir/node_modules/.bin/$bin"
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
	if [[ ! -x "$dir/node_modules/.bin/$bin" ]]; then
		echo "install-providers: $spec installed but $dir/node_modules/.bin/$bin is missing" >&2
		exit 1
	fi
	printf '%s\n' "$spec" >"$marker"
	echo "install-providers: installed $spec: $dir/node_modules/.bin/$bin"
done

echo "install-providers: cache at $cache"
