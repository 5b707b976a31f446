//go:build !e2e

package e2etest

// tierEnabled is false without the build tag e2e.
const tierEnabled = false
