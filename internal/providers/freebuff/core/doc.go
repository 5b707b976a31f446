// Package core is what the Freebuff service and its two backends (package
// desktop, the Desktop orchestrator client; package cli, the managed
// terminal UI) share: the records they answer with, the errors that carry
// a reason to the client, the one Config and a few JSON helpers. It
// imports neither backend nor the service.
package core
