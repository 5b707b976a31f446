//go:build browser

package browser

// tierEnabled is set by the build tag browser: the browser tier runs.
const tierEnabled = true
