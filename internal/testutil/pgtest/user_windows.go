package pgtest

import (
	"os"
	"os/exec"
)

// osUser is the account the server programs run as: always the current
// one on Windows.
type osUser struct{}

func serverUser() (*osUser, error)  { return nil, nil }
func (*osUser) own(string) error    { return nil }
func (*osUser) apply(*exec.Cmd)     {}
func interrupt(p *os.Process) error { return p.Kill() }
