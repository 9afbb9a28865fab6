//go:build !unix

package newton_test

import "time"

// cpuTime is not measured on this platform.
func cpuTime() (user, sys time.Duration) { return 0, 0 }
