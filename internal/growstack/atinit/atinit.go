// Package atinit grows the main goroutine's stack before the initializers
// of the other packages run; internal/cli (every command of the binary) imports it for that alone.
//
// Go runs the package initializers on the main goroutine, which starts
// with a few KiB of stack. Deep initializers (x/text's tables, gob's type
// registry, jsonschema's reflection, modernc's libc) grow it several
// times, and every growth reads the stack map of each frame then on it,
// in pages of the binary's function table (pclntab) that nothing reads
// again: the kernel maps them, and their neighbours, into the process for
// good. Go initializes first the packages that import nothing left to
// initialize, in import-path order, so this one, which imports only
// growstack (no initializer), runs right after the runtime, while the only
// frames on the stack are the runtime's.
package atinit

import "github.com/agent-interop/runtime/internal/growstack"

func init() { growstack.Grow() }
