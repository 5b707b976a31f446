package desk

import (
	"context"
	"net/http"
	"strings"
	"testing"
)

// TestProviderFilterListsEveryKnownAgent: the sessions filter offers the
// ids it is given (built-ins and user agents) and filters by a user
// agent's id; an id it was not given is no filter.
func TestProviderFilterListsEveryKnownAgent(t *testing.T) {
	f := newFixture(t, func(o *Options) { o.Providers = []string{"codex", "claude-code", "my-agent"} })
	if _, err := f.ent().ProviderSession.Create().SetProvider("my-agent").SetNativeID("mine-1").SetFirstSeenAt(f.now).SetLastSeenAt(f.now).
		Save(context.Background()); err != nil {
		t.Fatal(err)
	}
	f.addSession("codex-1")
	res, body := f.get("/desk/sessions", bearer...)
	if res.StatusCode != http.StatusOK || !strings.Contains(body, `value="my-agent"`) || strings.Contains(body, `value="opencode"`) {
		t.Fatalf("sessions page %d does not offer exactly the given ids:\n%s", res.StatusCode, body)
	}
	_, body = f.get("/desk/sessions?provider=my-agent", bearer...)
	if !strings.Contains(body, "mine-1") || strings.Contains(body, "codex-1") {
		t.Fatalf("filter by a user agent:\n%s", body)
	}
	_, body = f.get("/desk/sessions?provider=opencode", bearer...)
	if !strings.Contains(body, "mine-1") || !strings.Contains(body, "codex-1") {
		t.Fatalf("an id not offered filtered the list:\n%s", body)
	}
	// Without Options.Providers the built-in catalog is offered.
	d := newFixture(t)
	if _, body := d.get("/desk/receipts", bearer...); !strings.Contains(body, `value="opencode"`) || strings.Contains(body, `value="my-agent"`) {
		t.Fatalf("default filter:\n%s", body)
	}
}
