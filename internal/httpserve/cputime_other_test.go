//go:build !unix

package httpserve

import "time"

// cpuTime is not measured here: the benchmark reports 0 CPU per call.
func cpuTime() time.Duration { return 0 }
