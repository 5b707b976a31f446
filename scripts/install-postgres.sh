#!/usr/bin/env bash
# install-postgres.sh makes PostgreSQL's server programs (initdb, postgres)
# available for the team-store tests, which start their own throw-away
# clusters (internal/testutil/pgtest). It installs Debian's postgresql
# package when they are missing and this runs as root; it never starts,
# creates or configures a system cluster. Without root (and outside CI) it
# only says how to install: the PostgreSQL tests then skip with that hint.
set -euo pipefail

have_server() {
	[[ -n "${INTEROP_PG_BINDIR:-}" && -x "$INTEROP_PG_BINDIR/initdb" ]] && return 0
	command -v initdb >/dev/null 2>&1 && command -v postgres >/dev/null 2>&1 && return 0
	compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null
}

if have_server; then
	echo "PostgreSQL server programs found"
	exit 0
fi
if [[ $(id -u) -ne 0 ]] || ! command -v apt-get >/dev/null 2>&1; then
	echo "PostgreSQL server programs not found: install them (Debian: sudo apt-get install postgresql)," \
		"or set INTEROP_PG_BINDIR; the team-store tests skip until then${CI:+ (and fail under CI=true)}"
	[[ "${CI:-}" == "true" ]] && exit 1
	exit 0
fi
# The package would create and start a "main" cluster; the tests need none.
mkdir -p /etc/postgresql-common
if [[ ! -e /etc/postgresql-common/createcluster.conf ]]; then
	echo "create_main_cluster = false" >/etc/postgresql-common/createcluster.conf
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends -o Dpkg::Options::=--force-confold postgresql >/dev/null
have_server || { echo "postgresql installed but initdb was not found"; exit 1; }
echo "PostgreSQL server programs installed"
