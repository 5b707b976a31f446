//go:build !browser

package browser

// tierEnabled is false without the build tag browser: no test starts
// Chromium.
const tierEnabled = false
