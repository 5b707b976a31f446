// Package handlers answers the MCP tools: one file per tool group, each a
// thin mapping from a generated, validated input (package catalogs) to the
// service that owns the capability, and back to a JSON-object answer.
// Tools whose capability is not wired into this build are answered by the
// embedded catalogs.Unimplemented with an honest error naming what is
// missing.
package handlers

import (
	"github.com/agent-interop/runtime/catalogs"
)

// Handlers implements catalogs.Handlers.
type Handlers struct {
	catalogs.Unimplemented
	deps Deps
}

// Deps are the services the handlers call. A nil service means its
// capability is not available in this process.
type Deps struct {
	Runtime RuntimeInfo
}

// RuntimeInfo describes the running server for get_runtime_status.
type RuntimeInfo struct {
	Version            string
	Profile            string
	ProfileDescription string
	ReadOnly           bool
	Tools              int
	StorePath          string
}

// New returns handlers over deps.
func New(deps Deps) *Handlers { return &Handlers{deps: deps} }

var _ catalogs.Handlers = (*Handlers)(nil)
