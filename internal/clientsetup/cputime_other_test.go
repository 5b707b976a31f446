//go:build !unix

package clientsetup

import "time"

func cpuTime() time.Duration { return 0 }
