//go:build !linux

package security

// platformOpener is the portable per-component opener.
var platformOpener opener = rootOpener{}
