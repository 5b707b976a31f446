//go:build !postgres

package pgtest

// tierEnabled is false without the build tag postgres: no test starts a
// PostgreSQL server, so `go test ./...` (the unit tier) needs none.
const tierEnabled = false
