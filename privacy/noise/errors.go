package noise

import "github.com/dpsolve/dpsolve/internal/inputerr"

// ErrInput is wrapped by every error this package returns for a bad scale,
// grid or value; it is the one dpsolve-wide sentinel (internal/inputerr), so
// errors.Is(err, noise.ErrInput) and errors.Is(err, workload.ErrInput) agree.
var ErrInput = inputerr.ErrInput
