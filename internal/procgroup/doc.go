// Package procgroup starts child programs in a process group of their own
// and signals that whole group, so the helpers a provider program starts
// (a Node shim's native binary, an ACP adapter's claude child) end with it.
//
// Each operating system does this its own way, one small file each:
//   - Unix (Linux, macOS, the BSDs): Setpgid, then kill(-pgid, sig).
//   - Linux also asks the kernel to signal the child when the runtime
//     dies (Pdeathsig); macOS has no such request, so there a crashed
//     runtime leaves a managed child running until it exits by itself.
//   - Windows: a new process group (CREATE_NEW_PROCESS_GROUP); Terminate
//     sends CTRL_BREAK_EVENT to the group, Kill ends the process and every
//     descendant found in the system's process list. Windows has no
//     parent-death signal either.
package procgroup
