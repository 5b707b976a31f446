// Package realpeers locates the real provider programs installed by
// scripts/install-providers.sh and prepares isolated environments for tests
// that drive them against the fake model server (package fakemodel).
//
// The real programs are a test tier of their own: [Require] skips the test
// unless the build tag realpeers is set (go test -tags realpeers ...;
// scripts/test.sh sets it), so `go test ./...` never starts one. With the
// tag, a test asks for a program with [Require]. When the program is missing
// the test is skipped with a message saying how to install it, except when the
// environment variable CI is "true": then a missing program fails the test, so
// CI never silently skips. The lookup order is the program's override
// variable (INTEROP_TEST_OPENCODE, INTEROP_TEST_CODEX, INTEROP_TEST_CLAUDE_ACP,
// INTEROP_TEST_QWEN, INTEROP_TEST_CODEX_ACP, INTEROP_TEST_GEMINI),
// then the install cache ($INTEROP_PROVIDER_CACHE, default
// <module root>/.cache/providers/<pkg>@<version>/node_modules/.bin/<bin>).
//
// Environments built here never inherit the caller's environment beyond
// PATH and locale: every program gets its own HOME and XDG directories and
// points at a loopback fake model, so no test reads a developer's
// credentials or reaches the network.
package realpeers

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Program is a provider program the installer pins.
type Program int

// The pinned programs.
const (
	OpenCode  Program = iota // opencode-ai, binary "opencode"
	Codex                    // @openai/codex, binary "codex"
	ClaudeACP                // @agentclientprotocol/claude-agent-acp, binary "claude-agent-acp"
	// MCPTypeScriptSDK is a library, not a program: the official MCP
	// TypeScript SDK the HTTP tests run a client with (under node). Find
	// returns its node_modules folder.
	MCPTypeScriptSDK
	QwenCode  // @qwen-code/qwen-code, binary "qwen" (ACP with --acp)
	CodexACP  // @zed-industries/codex-acp, binary "codex-acp"
	GeminiCLI // @google/gemini-cli, binary "gemini" (ACP with --acp)
)

// Spec describes how a program is installed and overridden.
type Spec struct {
	Name    string // short name used in messages
	Package string // npm package
	Version string // pinned version
	Bin     string // name under node_modules/.bin ("" for a library)
	EnvVar  string // variable that overrides the path
}

// Spec returns the program's installation facts.
func (p Program) Spec() Spec {
	switch p {
	case OpenCode:
		return Spec{"opencode", "opencode-ai", "1.18.33", "opencode", "INTEROP_TEST_OPENCODE"}
	case Codex:
		return Spec{"codex", "@openai/codex", "0.171.0", "codex", "INTEROP_TEST_CODEX"}
	case ClaudeACP:
		return Spec{"claude-agent-acp", "@agentclientprotocol/claude-agent-acp", "0.49.0", "claude-agent-acp", "INTEROP_TEST_CLAUDE_ACP"}
	case MCPTypeScriptSDK:
		return Spec{"@modelcontextprotocol/sdk", "@modelcontextprotocol/sdk", "1.32.2", "", "INTEROP_TEST_MCP_TS_SDK"}
	case QwenCode:
		return Spec{"qwen", "@qwen-code/qwen-code", "0.24.4", "qwen", "INTEROP_TEST_QWEN"}
	case CodexACP:
		return Spec{"codex-acp", "@zed-industries/codex-acp", "0.16.0", "codex-acp", "INTEROP_TEST_CODEX_ACP"}
	case GeminiCLI:
		return Spec{"gemini", "@google/gemini-cli", "0.61.0", "gemini", "INTEROP_TEST_GEMINI"}
	}
	return Spec{Name: fmt.Sprintf("program(%d)", int(p))}
}

func (p Program) String() string { return p.Spec().Name }

// ErrNotInstalled is wrapped by Find when a program is missing.
var ErrNotInstalled = errors.New("not installed")

// ModuleRoot walks up from the working directory to the folder holding go.mod.
func ModuleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("working directory: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}

// CacheDir is the install cache: $INTEROP_PROVIDER_CACHE, else
// <module root>/.cache/providers.
func CacheDir() (string, error) {
	if d := os.Getenv("INTEROP_PROVIDER_CACHE"); d != "" {
		return d, nil
	}
	root, err := ModuleRoot()
	if err != nil {
		return "", err
	}
	return filepath.Join(root, ".cache", "providers"), nil
}

// InstallDir is where install-providers.sh puts the program: the cache
// folder "<pkg>@<version>", a scoped name's "/" written as "+".
func (p Program) InstallDir() (string, error) {
	cache, err := CacheDir()
	if err != nil {
		return "", err
	}
	s := p.Spec()
	return filepath.Join(cache, strings.ReplaceAll(s.Package, "/", "+")+"@"+s.Version), nil
}

// Find returns the program's path: the override variable when set (it must
// name an executable file), else the install cache. A missing program is an
// error wrapping ErrNotInstalled. For a library (no Bin) it returns the
// node_modules folder that holds the package.
func Find(p Program) (string, error) {
	s := p.Spec()
	if s.Bin == "" {
		return findLibrary(p)
	}
	if v := os.Getenv(s.EnvVar); v != "" {
		if err := executable(v); err != nil {
			return "", fmt.Errorf("%s from %s: %w", s.Name, s.EnvVar, err)
		}
		return v, nil
	}
	dir, err := p.InstallDir()
	if err != nil {
		return "", fmt.Errorf("locating %s: %w", s.Name, err)
	}
	path := filepath.Join(dir, "node_modules", ".bin", s.Bin)
	if err := executable(path); err != nil {
		return "", fmt.Errorf("%s: %w", s.Name, err)
	}
	return path, nil
}

// findLibrary returns the node_modules folder holding a library package:
// the override variable's folder, else the install cache's.
func findLibrary(p Program) (string, error) {
	s := p.Spec()
	modules := os.Getenv(s.EnvVar)
	if modules == "" {
		dir, err := p.InstallDir()
		if err != nil {
			return "", fmt.Errorf("locating %s: %w", s.Name, err)
		}
		modules = filepath.Join(dir, "node_modules")
	}
	manifest := filepath.Join(modules, filepath.FromSlash(s.Package), "package.json")
	if _, err := os.Stat(manifest); errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("%s: %s: %w", s.Name, manifest, ErrNotInstalled)
	} else if err != nil {
		return "", err
	}
	return modules, nil
}

func executable(path string) error {
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("%s: %w", path, ErrNotInstalled)
	case err != nil:
		return err
	case fi.IsDir() || fi.Mode()&0o111 == 0:
		return fmt.Errorf("%s is not an executable file: %w", path, ErrNotInstalled)
	}
	return nil
}

// InCI reports whether the environment says it is CI (CI=true).
func InCI() bool { return strings.EqualFold(os.Getenv("CI"), "true") || os.Getenv("CI") == "1" }

// TierSkip is why a real-program test is skipped without the build tag.
const TierSkip = "real-program tier: run with -tags realpeers (scripts/test.sh does)"

// Require returns the program's path, or ends the test: without the build
// tag realpeers it is skipped (TierSkip); with it, a missing program skips
// it with the install hint, or fails it when CI=true.
func Require(tb testing.TB, p Program) string {
	tb.Helper()
	return require(tb, p, tierEnabled)
}

// require is Require with the tier's gate as a parameter, for its test.
func require(tb testing.TB, p Program, tier bool) string {
	tb.Helper()
	if !tier {
		tb.Skip(TierSkip)
		return ""
	}
	path, err := Find(p)
	if err == nil {
		return path
	}
	msg := fmt.Sprintf("%s not installed; run scripts/install-providers.sh (%v)", p.Spec().Name, err)
	if InCI() {
		tb.Fatal(msg + "; CI=true never skips")
	} else {
		tb.Skip(msg)
	}
	return ""
}
