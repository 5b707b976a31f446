//go:build unix

package procgroup

import (
	"bufio"
	"errors"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// TestKillReachesGrandchildren starts a shell that starts a sleep in the
// background, kills the shell's group and sees the sleep gone too.
func TestKillReachesGrandchildren(t *testing.T) {
	for name, stop := range map[string]func(int) error{"Terminate": Terminate, "Kill": Kill} {
		t.Run(name, func(t *testing.T) {
			cmd := exec.Command("sh", "-c", "sleep 60 & echo $!; wait")
			Set(cmd)
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			line, err := bufio.NewReader(out).ReadString('\n')
			if err != nil {
				t.Fatal(err)
			}
			grandchild, err := strconv.Atoi(strings.TrimSpace(line))
			if err != nil {
				t.Fatal(err)
			}
			if err := stop(cmd.Process.Pid); err != nil {
				t.Fatal(err)
			}
			_ = cmd.Wait()
			// The leader is reaped; the grandchild (reparented to init, which
			// reaps it) must be gone or a zombie about to be reaped: signal 0
			// fails with ESRCH once it is. Wait for that condition.
			for i := 0; ; i++ {
				err := syscall.Kill(grandchild, 0)
				if errors.Is(err, syscall.ESRCH) {
					break
				}
				if i > 2000 {
					t.Fatalf("grandchild %d still there after %s: %v", grandchild, name, err)
				}
				if b, _ := exec.Command("ps", "-o", "stat=", "-p", strconv.Itoa(grandchild)).Output(); strings.HasPrefix(strings.TrimSpace(string(b)), "Z") || len(strings.TrimSpace(string(b))) == 0 {
					break // a zombie is dead; only its parent's reaping is left
				}
			}
			if err := Kill(cmd.Process.Pid); err != nil {
				t.Fatalf("killing a gone group should be a no-op, got %v", err)
			}
		})
	}
}
