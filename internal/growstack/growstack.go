// Package growstack gives a goroutine that is about to use the store the
// stack it will need, in one step.
//
// The SQLite engine is C translated to Go (modernc.org/sqlite): its
// functions have large frames and call deep. A goroutine starts with a few
// KiB of stack, so its first store call grows the stack several times, and
// every growth copies the stack and reads the stack map of each frame on
// it. For SQLite's frames those maps sit in pages of the binary's function
// table (pclntab) that nothing else reads; the kernel maps them and their
// neighbours into the process, and they stay resident. Growing the stack
// once, before the first SQLite frame is on it, copies only the caller's
// few frames. Measured with interop-bench: 0.6–0.8 MiB less peak RSS at
// idle (the start-up settlement's first store read) and after 2,000 calls
// (docs/benchmarks.md).
//
// A grown stack is the goroutine's until the collector shrinks it (when
// under a quarter of it is in use) or the goroutine ends.
package growstack

// Room is the stack Grow makes room for, in bytes. The runtime doubles a
// stack until the frame fits, so the stack becomes 128 KiB: the deepest
// store call measured (SQLite preparing and running a query) fits in it.
// It stays under the compiler's limit for a stack-allocated variable
// (128 KiB), above which the array would move to the heap and the stack
// would not grow.
const Room = 64 << 10

// Grow makes the calling goroutine's stack at least Room bytes larger
// than what it uses now, unless it already is. It costs clearing Room
// bytes of stack (about a microsecond) and, the first time on a
// goroutine, one copy of its stack.
//
//go:noinline
func Grow() {
	var room [Room]byte
	touch(room[:])
}

// touch keeps room on the stack: the compiler cannot see that it is not
// read.
//
//go:noinline
func touch(b []byte) { b[len(b)-1] = 1 }
