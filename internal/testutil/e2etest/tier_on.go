//go:build e2e

package e2etest

// tierEnabled is set by the build tag e2e: the end-to-end tier runs.
const tierEnabled = true
