#!/usr/bin/env bash
# vendor.sh fetches the desk's front-end libraries from the npm registry at
# pinned versions, checks each package against its pinned integrity, and
# writes the files the page serves (and their licences) to vendor/. The
# output is committed and embedded in the binary; the page loads nothing
# from the network. Re-run it only to change a version:
#
#   internal/desk/assets/vendor.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

# package@version  integrity  file-in-package  name-in-vendor
pins=(
	"htmx.org@2.0.11 sha512-Thx/WtpeOQqSrqBCw/A1cwGJGg4UrVa3+sW0GmrM3p4gJgO89ecH4qtbnyzDDWFvBTqjnIMCgELTNt636dtamA== dist/htmx.min.js htmx.min.js"
	"htmx-ext-sse@2.2.4 sha512-LJmxVhykyflBWgh5PvbRidcyuqMHlgfajmmzumvKctv9puvsufeH6OaejSMZTNTnEI8O2wXXn4ZZtBdpEMqmEQ== dist/sse.min.js sse.min.js"
	"mermaid@11.17.2 sha512-V6K3C8EBdEsPFZXSKMJe6ppQOENxuHARr9GvHX4hh47lAbhMRD9qf4oEK7LoaRQxULMa80/qt5gHO73aCleBBg== dist/mermaid.min.js mermaid.min.js"
)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
: > vendor/VERSIONS.new
for pin in "${pins[@]}"; do
	read -r spec integrity file name <<<"$pin"
	pkg=${spec%@*}
	tgz=$(cd "$work" && npm pack --silent "$spec")
	got="sha512-$(openssl dgst -sha512 -binary "$work/$tgz" | base64 -w0)"
	if [[ "$got" != "$integrity" ]]; then
		echo "vendor.sh: $spec integrity $got, pinned $integrity" >&2
		exit 1
	fi
	mkdir -p "$work/$pkg"
	tar xzf "$work/$tgz" -C "$work/$pkg" "package/$file" package/LICENSE
	cp "$work/$pkg/package/$file" "vendor/$name"
	cp "$work/$pkg/package/LICENSE" "vendor/LICENSE.${pkg}"
	echo "$spec $integrity $file -> $name" >> vendor/VERSIONS.new
done
mv vendor/VERSIONS.new vendor/VERSIONS
