//go:build windows

package interrupt

import "os"

// testSignal is never sent on Windows: a process cannot send itself one.
var testSignal = os.Interrupt
