//go:build realpeers

package realpeers

// tierEnabled is set by the build tag realpeers: the real-program tier runs.
const tierEnabled = true
