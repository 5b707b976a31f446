// Package proctest answers, for tests, whether a process or a process
// group still exists, on every system the runtime builds for.
package proctest
