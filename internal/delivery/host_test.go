package delivery

import (
	"context"
	"errors"
	"testing"

	"github.com/agent-interop/runtime/internal/providers"
	"github.com/agent-interop/runtime/internal/providers/registry"
	"github.com/agent-interop/runtime/internal/providers/registry/registrytest"
	"github.com/agent-interop/runtime/internal/store"
	"github.com/agent-interop/runtime/internal/testutil/pgtest"
)

// TestSendToAnotherHostsSessionIsRefusedUnrecorded: on a team store a send
// to a session that runs on another machine fails with the host named,
// records no operation and reaches no adapter (no silent redirect).
func TestSendToAnotherHostsSessionIsRefusedUnrecorded(t *testing.T) {
	pgtest.EachDialect(t, func(t *testing.T, location string) {
		ctx := context.Background()
		open := func(host, native string) (*store.Store, *registrytest.Adapter, *registry.Registry, *Service) {
			st, err := store.Open(ctx, location)
			if err != nil {
				t.Fatal(err)
			}
			fake := &registrytest.Adapter{Provider: providers.Codex, EndpointName: "stdio:" + host}
			fake.SetSessions([]providers.Session{fake.Session(native, host)}, nil)
			fake.SendFunc = func(context.Context, string, string, providers.SendOptions) (providers.Receipt, error) {
				return queued("r")
			}
			reg, err := registry.New(st, []providers.Adapter{fake}, registry.Options{Host: host})
			if err != nil {
				t.Fatal(err)
			}
			svc := New(st, reg, Options{})
			t.Cleanup(func() { svc.Close(); st.Close() })
			return st, fake, reg, svc
		}
		st, alphaCodex, _, alpha := open("alpha", "a1")
		_, betaCodex, betaReg, _ := open("beta", "b1")
		if _, err := betaReg.ListSessions(ctx, ""); err != nil {
			t.Fatal(err)
		}
		_, err := alpha.Send(ctx, SendRequest{Provider: "codex", NativeID: "b1", Text: "hello", IdempotencyKey: "k1"})
		var other *registry.OtherHostError
		if !errors.As(err, &other) || other.Host != "beta" {
			t.Fatalf("send to beta's session from alpha: %v", err)
		}
		if n := st.Client().Operation.Query().CountX(ctx); n != 0 {
			t.Fatalf("%d operations recorded for a refused send", n)
		}
		if alphaCodex.CallCount("send")+betaCodex.CallCount("send") != 0 {
			t.Fatal("a refused send reached an adapter")
		}
		if _, err := alpha.Send(ctx, SendRequest{Provider: "codex", NativeID: "a1", Text: "hello", IdempotencyKey: "k2"}); err != nil {
			t.Fatalf("send to alpha's own session: %v", err)
		}
	})
}
