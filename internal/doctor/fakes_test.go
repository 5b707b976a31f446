package doctor

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/coder/quartz"

	"github.com/agent-interop/runtime/internal/providers"
	"github.com/agent-interop/runtime/internal/testutil/testclock"
)

// fakeAdapter is a hand-written providers.Adapter whose Capabilities (and
// optional Probe) are scripted. Only ID, Capabilities and Close are used by
// doctor; the other methods answer "unsupported".
type fakeAdapter struct {
	id   providers.ID
	caps func(ctx context.Context) providers.Capabilities
	// closeFn, when set, runs inside Close.
	closeFn func() error
	closed  atomic.Int32
}

func (f *fakeAdapter) ID() providers.ID { return f.id }

func (f *fakeAdapter) Roles() providers.Roles { return providers.Roles{} }

func (f *fakeAdapter) Capabilities(ctx context.Context) providers.Capabilities {
	c := f.caps(ctx)
	c.Provider = f.id
	return c
}

func (f *fakeAdapter) Close() error {
	f.closed.Add(1)
	if f.closeFn != nil {
		return f.closeFn()
	}
	return nil
}

func (f *fakeAdapter) unsupported(op string) error {
	return &providers.UnsupportedError{Provider: f.id, Operation: op, Reason: "fake"}
}

func (f *fakeAdapter) ListSessions(context.Context) ([]providers.Session, error) {
	return nil, f.unsupported("list")
}
func (f *fakeAdapter) GetSession(context.Context, string) (*providers.Session, error) {
	return nil, f.unsupported("get")
}
func (f *fakeAdapter) CreateSession(context.Context, providers.CreateOptions) (providers.Session, error) {
	return providers.Session{}, f.unsupported("create")
}
func (f *fakeAdapter) ResumeSession(context.Context, string) (providers.Session, error) {
	return providers.Session{}, f.unsupported("resume")
}
func (f *fakeAdapter) Send(context.Context, string, string, providers.SendOptions) (providers.Receipt, error) {
	return providers.Receipt{}, f.unsupported("send")
}
func (f *fakeAdapter) Cancel(context.Context, string) (providers.Receipt, error) {
	return providers.Receipt{}, f.unsupported("cancel")
}
func (f *fakeAdapter) Subscribe(context.Context, string) (<-chan providers.NativeEvent, error) {
	return nil, f.unsupported("events")
}
func (f *fakeAdapter) Diff(context.Context, string, providers.DiffOptions) (any, error) {
	return nil, f.unsupported("diff")
}
func (f *fakeAdapter) PendingPermissions(context.Context) ([]providers.PermissionRequest, error) {
	return nil, f.unsupported("permissions")
}
func (f *fakeAdapter) RespondPermission(context.Context, string, string, string) (providers.Receipt, error) {
	return providers.Receipt{}, f.unsupported("permissions")
}
func (f *fakeAdapter) SetModel(context.Context, string, providers.Model) (providers.Receipt, error) {
	return providers.Receipt{}, f.unsupported("model")
}
func (f *fakeAdapter) SetReasoning(context.Context, string, string) (providers.Receipt, error) {
	return providers.Receipt{}, f.unsupported("reasoning")
}

// probingAdapter adds a scripted Probe.
type probingAdapter struct {
	*fakeAdapter
	probe func(ctx context.Context) error
}

func (p *probingAdapter) Probe(ctx context.Context) error { return p.probe(ctx) }

func (p *probingAdapter) Roles() providers.Roles { return providers.Roles{Handshake: p} }

// allCaps sets every capability to c.
func allCaps(c providers.Capability) providers.Capabilities {
	return providers.Capabilities{Authorization: "unknown",
		Discovery: c, Sessions: c, SendMessage: c, Steer: c, Cancel: c,
		Events: c, Diff: c, Permissions: c, Model: c, Reasoning: c}
}

// readyCaps is a provider where everything but steer and diff works.
func readyCaps(program, version string) providers.Capabilities {
	ok := providers.Capability{Supported: true, State: providers.Available, Transport: "stdio", Protocol: "fake-rpc"}
	c := allCaps(ok)
	c.Program, c.ProviderVersion, c.AdapterVersion, c.Authorization = program, version, "1.0.0", "authorized"
	c.Steer = providers.Capability{State: providers.Unavailable, Transport: "stdio", Protocol: "fake-rpc", Reason: "no steer in fake-rpc"}
	c.Diff = providers.Capability{Supported: true, State: providers.Degraded, Transport: "stdio", Protocol: "fake-rpc", Reason: "latest diff only"}
	c.Limitations = []string{"a fake\nwith two lines"}
	return c
}

// missing is a provider whose program is not installed.
func missing(id providers.ID) *probingAdapter {
	reason := string(id) + " program not found on PATH"
	fix := "npm install -g " + string(id) + "@1.0.0"
	return &probingAdapter{
		fakeAdapter: &fakeAdapter{id: id, caps: func(context.Context) providers.Capabilities {
			return allCaps(providers.Capability{State: providers.Unavailable, Reason: reason, Fix: fix})
		}},
		probe: func(context.Context) error { return errors.New(reason) },
	}
}

// skipErr is a Probe error that says the handshake was not attempted.
type skipErr struct{ msg string }

func (e *skipErr) Error() string          { return e.msg }
func (e *skipErr) HandshakeSkipped() bool { return true }

// newFakeClock is a manual clock: timers fire when the test advances it.
func newFakeClock(t quartz.TestingT) *quartz.Mock {
	return testclock.At(t, time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))
}
