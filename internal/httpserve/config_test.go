package httpserve

import (
	"path/filepath"
	"slices"
	"testing"
)

func TestConfigFromEnv(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		want    Config
		wantErr string
	}{
		{name: "defaults", env: nil, want: Config{Host: "127.0.0.1", Port: 8788, AllowedOrigins: []string{"http://127.0.0.1", "http://localhost"}, RateLimit: DefaultRateLimit}},
		{name: "canonical names", env: map[string]string{
			"AGENT_INTEROP_HTTP_TOKEN": "t1", "AGENT_INTEROP_HTTP_HOST": "localhost", "AGENT_INTEROP_HTTP_PORT": "9001",
			"AGENT_INTEROP_HTTP_ALLOWED_ORIGINS": " https://a.example:8443 , ,HTTP://B.example:80", "AGENT_INTEROP_HTTP_ALLOW_REMOTE": "1",
			"AGENT_INTEROP_HTTP_TOKEN_FILE": "/run/t", "AGENT_INTEROP_HTTP_RATE_LIMIT": "0",
		}, want: Config{Token: "t1", Host: "localhost", Port: 9001, AllowedOrigins: []string{"https://a.example:8443", "http://b.example"}, AllowRemote: true, TokenFile: "/run/t"}},
		{name: "aliases", env: map[string]string{
			"FREEBUFF_MCP_TOKEN": "t2", "FREEBUFF_MCP_HOST": "::1", "FREEBUFF_MCP_PORT": "0",
			"FREEBUFF_MCP_ALLOWED_ORIGINS": "http://x", "FREEBUFF_MCP_ALLOW_REMOTE": "1",
		}, want: Config{Token: "t2", Host: "::1", Port: 0, AllowedOrigins: []string{"http://x"}, AllowRemote: true, RateLimit: DefaultRateLimit}},
		{name: "canonical wins over alias", env: map[string]string{
			"AGENT_INTEROP_HTTP_TOKEN": "canonical", "FREEBUFF_MCP_TOKEN": "alias", "AGENT_INTEROP_HTTP_PORT": "1", "FREEBUFF_MCP_PORT": "2",
		}, want: Config{Token: "canonical", Host: "127.0.0.1", Port: 1, AllowedOrigins: []string{"http://127.0.0.1", "http://localhost"}, RateLimit: DefaultRateLimit}},
		{name: "empty canonical falls back to the alias", env: map[string]string{"AGENT_INTEROP_HTTP_TOKEN": " ", "FREEBUFF_MCP_TOKEN": "alias"},
			want: Config{Token: "alias", Host: "127.0.0.1", Port: 8788, AllowedOrigins: []string{"http://127.0.0.1", "http://localhost"}, RateLimit: DefaultRateLimit}},
		{name: "allow-remote other than 1", env: map[string]string{"AGENT_INTEROP_HTTP_ALLOW_REMOTE": "yes"},
			want: Config{Host: "127.0.0.1", Port: 8788, AllowedOrigins: []string{"http://127.0.0.1", "http://localhost"}, RateLimit: DefaultRateLimit}},
		{name: "every bad value named", env: map[string]string{"AGENT_INTEROP_HTTP_PORT": "x", "FREEBUFF_MCP_ALLOWED_ORIGINS": "localhost", "AGENT_INTEROP_HTTP_RATE_LIMIT": "lots"},
			wantErr: "AGENT_INTEROP_HTTP_PORT: must be a port number from 0 to 65535, not \"x\"\nFREEBUFF_MCP_ALLOWED_ORIGINS: \"localhost\" is not an origin (scheme://host[:port], http or https, no path)\nAGENT_INTEROP_HTTP_RATE_LIMIT: must be a whole number of requests per minute, 0 for no limit, not \"lots\""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ConfigFromEnv(func(k string) (string, bool) { v, ok := tt.env[k]; return v, ok })
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("error %v\nwant %s", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Token != tt.want.Token || got.Host != tt.want.Host || got.Port != tt.want.Port || !slices.Equal(got.AllowedOrigins, tt.want.AllowedOrigins) ||
				got.AllowRemote != tt.want.AllowRemote || got.TokenFile != tt.want.TokenFile || got.RateLimit != tt.want.RateLimit {
				t.Fatalf("config %+v\nwant   %+v", got, tt.want)
			}
		})
	}
}

func TestValidateHost(t *testing.T) {
	for host, ok := range map[string]bool{"127.0.0.1": true, "localhost": true, "::1": true, "[::1]": true, "0.0.0.0": false, "127.0.0.2": false, "example.com": false, "": false} {
		err := Config{Host: host}.Validate()
		if (err == nil) != ok {
			t.Errorf("host %q: %v", host, err)
		}
		if !ok && host != "" && (err == nil || err.Error() != RemoteRefused) {
			t.Errorf("host %q: %v, want %q", host, err, RemoteRefused)
		}
		if err := (Config{Host: host, AllowRemote: true}).Validate(); host != "" && err != nil {
			t.Errorf("host %q with AllowRemote: %v", host, err)
		}
	}
	if got := EndpointURL("::1", 8788); got != "http://[::1]:8788/mcp" {
		t.Errorf("EndpointURL = %s", got)
	}
	if DefaultTokenFile("/home/u", 8788) != filepath.Join("/home/u", ".agent-interop-runtime", "http-8788.token") {
		t.Errorf("DefaultTokenFile = %s", DefaultTokenFile("/home/u", 8788))
	}
}
