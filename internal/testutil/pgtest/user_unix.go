//go:build unix

package pgtest

import (
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"strconv"
	"syscall"
)

// osUser is the account the server programs run as; nil runs them as the
// current user.
type osUser struct{ cred syscall.Credential }

// serverUser is the current user, or "nobody" for root: postgres refuses
// to run as root.
func serverUser() (*osUser, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("nobody")
	if err != nil {
		return &osUser{syscall.Credential{Uid: 65534, Gid: 65534}}, nil
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err1 != nil || err2 != nil {
		return nil, fmt.Errorf("pgtest: user nobody has ids %s:%s", u.Uid, u.Gid)
	}
	return &osUser{syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}, nil
}

// own hands path to the user.
func (u *osUser) own(path string) error {
	if u == nil {
		return nil
	}
	return os.Chown(path, int(u.cred.Uid), int(u.cred.Gid))
}

// apply makes cmd run as the user (after procgroup set its attributes).
func (u *osUser) apply(cmd *exec.Cmd) {
	if u == nil {
		return
	}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cred := u.cred
	cmd.SysProcAttr.Credential = &cred
}

// interrupt asks the server for a fast shutdown.
func interrupt(p *os.Process) error { return p.Signal(syscall.SIGINT) }
