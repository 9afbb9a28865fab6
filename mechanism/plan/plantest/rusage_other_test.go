//go:build !unix

package plantest

import "time"

// cpuNow falls back to 0 where getrusage is unavailable (CPU columns then
// read 0).
func cpuNow() time.Duration { return 0 }
