// Package version holds the runtime's version string.
package version

// Version is the runtime version reported by `version`, initialize and
// get_runtime_status.
const Version = "1.0.0-dev"
