package freebuff

import (
	"github.com/agent-interop/runtime/internal/providers/freebuff/cli"
	"github.com/agent-interop/runtime/internal/providers/freebuff/core"
)

// The records, errors and settings of the Service's methods are declared
// in package core, which the Desktop and CLI backends share; they are
// named here too so that a caller of the Service needs this package only.
type (
	Config              = core.Config
	Status              = core.Status
	Project             = core.Project
	ThreadSummary       = core.ThreadSummary
	ThreadDetail        = core.ThreadDetail
	ActiveThread        = core.ActiveThread
	FileContent         = core.FileContent
	ModelList           = core.ModelList
	ProgressQuery       = core.ProgressQuery
	ProgressEvent       = core.ProgressEvent
	ProgressSnapshot    = core.ProgressSnapshot
	Gap                 = core.Gap
	CreateThreadOptions = core.CreateThreadOptions

	NotFoundError    = core.NotFoundError
	ReadOnlyError    = core.ReadOnlyError
	UnavailableError = core.UnavailableError
	InputError       = core.InputError
	ScreenError      = cli.ScreenError
)

// Environment variables read through Config.LookupEnv.
const (
	EnvCLIMode         = core.EnvCLIMode
	EnvCLIPath         = core.EnvCLIPath
	EnvProjectRoot     = core.EnvProjectRoot
	EnvProjectKey      = core.EnvProjectKey
	EnvOrchestratorURL = core.EnvOrchestratorURL
	EnvLaunchID        = core.EnvLaunchID
	EnvReadinessFile   = core.EnvReadinessFile
	EnvReadyPattern    = core.EnvReadyPattern
	EnvTakeover        = core.EnvTakeover
)

// Reasons a write or an operation is refused, with the 0.3.x texts.
const (
	ReasonDesktopUnverified = core.ReasonDesktopUnverified
	ReasonUnavailable       = core.ReasonUnavailable
	ReasonCLIModel          = cli.ReasonCLIModel
	ReasonCLIReasoning      = cli.ReasonCLIReasoning
)
