package workload

import "github.com/dpsolve/dpsolve/internal/inputerr"

// ErrInput is wrapped by every error this package returns for input the
// caller can fix; it is the one dpsolve-wide sentinel (internal/inputerr), so
// errors.Is(err, workload.ErrInput) and errors.Is(err, newton.ErrInput) agree.
var ErrInput = inputerr.ErrInput
