// Package handlers answers the MCP tools: one file per tool group, each a
// thin mapping from a generated, validated input (package catalogs) to the
// service that owns the capability, and back to a JSON-object answer.
//
// Handlers embeds one value per tool group (WorkflowTools, ClaimTools, ...);
// their methods implement catalogs.Handlers. catalogs.Unimplemented sits one
// level deeper, so it only answers a tool no group implements, with an
// honest error naming the missing capability.
package handlers

import (
	"github.com/agent-interop/runtime/catalogs"
	"github.com/agent-interop/runtime/internal/claims"
	"github.com/agent-interop/runtime/internal/conversations"
	"github.com/agent-interop/runtime/internal/delivery"
	"github.com/agent-interop/runtime/internal/events"
	"github.com/agent-interop/runtime/internal/providers/freebuff"
	"github.com/agent-interop/runtime/internal/providers/registry"
	"github.com/agent-interop/runtime/internal/store"
	"github.com/agent-interop/runtime/internal/workflow"
)

// Handlers implements catalogs.Handlers.
type Handlers struct {
	unimplemented
	WorkflowTools
	ClaimTools
	ConversationTools
	FreebuffTools
	SessionTools
	deps Deps
}

// unimplemented keeps catalogs.Unimplemented's methods below the groups'.
type unimplemented struct{ catalogs.Unimplemented }

// Deps are the services the handlers call; New needs every one.
type Deps struct {
	Runtime       RuntimeInfo
	Store         *store.Store
	Workflow      *workflow.Service
	Claims        *claims.Service
	Conversations *conversations.Service
	Freebuff      *freebuff.Service
	Registry      *registry.Registry
	Delivery      *delivery.Service
	Events        *events.Hub
}

// RuntimeInfo describes the running server for get_runtime_status.
type RuntimeInfo struct {
	Version            string
	Profile            string
	ProfileDescription string
	ReadOnly           bool
	Tools              int
	// StorePath names the store: its file, or a team store's URL without
	// the password.
	StorePath string
	// Host is this machine's name on a team store ("" on a local store).
	Host string
}

// New returns handlers over deps.
func New(deps Deps) *Handlers {
	return &Handlers{
		WorkflowTools:     WorkflowTools{Svc: deps.Workflow, Usage: deps.Delivery},
		ClaimTools:        ClaimTools{Svc: deps.Claims},
		ConversationTools: ConversationTools{Svc: deps.Conversations, Registry: deps.Registry, Usage: deps.Delivery},
		FreebuffTools:     FreebuffTools{Svc: deps.Freebuff, Delivery: deps.Delivery},
		SessionTools:      SessionTools{Registry: deps.Registry, Delivery: deps.Delivery, Events: deps.Events, Claims: deps.Claims, Workflow: deps.Workflow},
		deps:              deps,
	}
}

var _ catalogs.Handlers = (*Handlers)(nil)
