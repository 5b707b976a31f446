// Package kit is the adapter kit: the parts every provider adapter needs
// and used to write for itself, one small package per job.
//
//   - [supervise]: start a provider program in a process group of its own
//     with the environment the runtime gives provider programs, keep the
//     tail of its stderr for error messages, ask the kernel to end it with
//     the runtime (Linux), and stop it gracefully, then kill it, on the
//     injected clock.
//   - [pending]: the operations sent to a peer whose outcome is not known
//     yet, kept per connection by a Tracker; a lost connection settles
//     every one of them as delivery_unknown in one place.
//   - [sse]: a server-sent events reader over the runtime's one line
//     reader (internal/jsonrpc.ReadLine), with a bound per event.
//   - [fanout]: the subscriptions of each session (Subscribe), fed
//     without blocking the reader; a subscription that falls behind is
//     ended, not fed with gaps.
//
// The kit imports only foundation packages and the provider contract
// (internal/providers); every adapter may import it, it imports no
// adapter.
//
// [supervise]: https://pkg.go.dev/github.com/agent-interop/runtime/internal/providers/kit/supervise
// [pending]: https://pkg.go.dev/github.com/agent-interop/runtime/internal/providers/kit/pending
// [sse]: https://pkg.go.dev/github.com/agent-interop/runtime/internal/providers/kit/sse
// [fanout]: https://pkg.go.dev/github.com/agent-interop/runtime/internal/providers/kit/fanout
package kit
