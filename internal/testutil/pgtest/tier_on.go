//go:build postgres

package pgtest

// tierEnabled is set by the build tag postgres: the PostgreSQL tier runs.
const tierEnabled = true
