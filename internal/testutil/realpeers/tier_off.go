//go:build !realpeers

package realpeers

// tierEnabled is false without the build tag realpeers: Require skips, so
// `go test ./...` (the unit tier) never starts a real provider program.
const tierEnabled = false
