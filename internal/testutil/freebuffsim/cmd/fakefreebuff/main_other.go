//go:build !unix

// Command fakefreebuff fakes the freebuff terminal UI through a Unix PTY;
// on this system it only says so (the Freebuff PTY tests skip here).
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "fakefreebuff needs a Unix pseudo-terminal")
	os.Exit(1)
}
