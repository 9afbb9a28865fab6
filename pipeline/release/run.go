package release

import (
	"context"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/internal/ctxwait"
	"github.com/dpsolve/dpsolve/model/workload"
	"github.com/dpsolve/dpsolve/privacy/calibrate"
	"github.com/dpsolve/dpsolve/privacy/noise"
)

// Request is one private release of a workload's answers: the strategy to
// measure, the budget, the histogram, the workload to answer, the noise
// source and the optional post-processing.
type Request struct {
	// Strategy is A (p×n, full column rank, or the rank-deficient optimum
	// of a singular workload), as for New.
	Strategy mat.Matrix
	// Budget is the privacy budget the noise is calibrated for.
	Budget calibrate.Budget
	// Data is the histogram x: n finite, non-negative counts.
	Data []float64
	// Workload is W, answered from the reconstruction; its domain must be n.
	Workload workload.Workload
	// Noise draws the noise; noise.NewSecure makes the answers private.
	Noise noise.Source
	// PostProcess is applied to x̂ before the workload is answered.
	PostProcess Cleanup
}

// Result is what a release produced. Everything in it except Expected
// is post-processing of the private measurements.
type Result struct {
	// Mechanism is the calibrated mechanism that measured the data
	// (sensitivity, grid, noise scale).
	Mechanism *Mechanism
	// Expected is the expected error of the answers before
	// post-processing.
	Expected ExpectedError
	// XHat is the reconstructed histogram, after PostProcess.
	XHat []float64
	// Answers are W x̂, in the row order of the workload's query matrix.
	Answers []float64
}

// GridError reports a budget too large for the data: the noise scale, and
// so its snapping grid (about scale·2^-40), is finer than measurements as
// large as Peak can be represented on (package noise bounds |v/grid| by
// noise.MaxGridUnits). It wraps ErrInput; nothing was drawn.
type GridError struct {
	// Peak is the largest |(A x)_i|.
	Peak float64
	// MinScale is the smallest noise scale the data allows
	// (Peak·2^42/noise.MaxGridUnits: one binary order of margin).
	MinScale float64
	// Scale, Sigma and Sensitivity are the mechanism's (see Mechanism).
	Scale, Sigma, Sensitivity float64
}

func (e *GridError) Error() string {
	return fmt.Sprintf("release: the noise scale %.3g is finer than measurements as large as %.6g allow (it must be at least %.3g)", e.Scale, e.Peak, e.MinScale)
}

// Unwrap makes a GridError an ErrInput.
func (e *GridError) Unwrap() error { return ErrInput }

// Run releases the answers of req.Workload on req.Data: it calibrates the
// mechanism for req.Strategy under req.Budget, computes the expected error,
// checks that the measurements are representable on the noise grid
// (*GridError otherwise), and only then draws the noise, reconstructs x̂,
// post-processes it and answers the workload (Prepare, then Prepared.Draw).
//
// Every failure and every cancellation of ctx happens before the noise is
// drawn, so an error means nothing was released and, for a private source,
// no budget was spent. Calibration and the expected error cost O(n³); when
// ctx is cancelled during them Run returns context.Cause(ctx) at once and
// leaves that computation to finish in the background (it writes nothing,
// and its result is discarded).
func Run(ctx context.Context, req Request) (*Result, error) {
	p, err := Prepare(ctx, req)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, context.Cause(ctx)
	}
	return p.Draw(req.Noise)
}

// Prepared is a release whose every check passed: the mechanism is
// calibrated, the data checked against it and the noise grid, and the
// expected error computed. Nothing is drawn yet.
type Prepared struct {
	req      Request
	mech     *Mechanism
	expected ExpectedError
}

// Prepare runs every check of Run that can refuse, without drawing noise
// (req.Noise is not used). When ctx is cancelled during the O(n³) steps it
// returns context.Cause(ctx) at once (the computation is abandoned).
func Prepare(ctx context.Context, req Request) (*Prepared, error) {
	m, err := ctxwait.Abandon(ctx, func() (*Mechanism, error) { return New(req.Strategy, req.Budget) })
	if err != nil {
		return nil, err
	}
	if err := m.CheckData(req.Data); err != nil {
		return nil, err
	}
	exp, err := ctxwait.Abandon(ctx, func() (ExpectedError, error) { return m.ExpectedError(req.Workload) })
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, context.Cause(ctx)
	}
	if err := m.checkGrid(req.Data); err != nil {
		return nil, err
	}
	return &Prepared{req: req, mech: m, expected: exp}, nil
}

// Mechanism is the prepared release's calibrated mechanism.
func (p *Prepared) Mechanism() *Mechanism { return p.mech }

// Expected is the prepared release's expected error.
func (p *Prepared) Expected() ExpectedError { return p.expected }

// Draw measures the data with noise from src (the one step that spends
// the budget), reconstructs x̂, post-processes it and answers the
// workload. An error after the measurement means the noise was drawn.
func (p *Prepared) Draw(src noise.Source) (*Result, error) {
	m, req := p.mech, p.req
	y, err := m.Measure(req.Data, src)
	if err != nil {
		return nil, err
	}
	// From here on everything is post-processing of y.
	xhat, err := m.Reconstruct(y)
	if err != nil {
		return nil, err
	}
	req.PostProcess.Apply(xhat)
	answers, err := Answer(req.Workload, xhat)
	if err != nil {
		return nil, err
	}
	return &Result{Mechanism: m, Expected: p.expected, XHat: xhat, Answers: answers}, nil
}

// checkGrid returns a *GridError when some measurement (A x)_i is too large
// for the noise grid: a very large budget makes the noise, and so its grid,
// finer than the data's magnitude allows.
func (m *Mechanism) checkGrid(x []float64) error {
	y := mat.NewVecDense(m.p, nil)
	y.MulVec(m.a, mat.NewVecDense(m.n, append([]float64(nil), x...)))
	peak := 0.0
	for i := 0; i < m.p; i++ {
		peak = math.Max(peak, math.Abs(y.AtVec(i)))
	}
	if peak/m.Grid() < noise.MaxGridUnits {
		return nil
	}
	// The grid is the noise scale times 2^-41 … 2^-40 (noise.Grid), so a
	// scale of peak·2^41/MaxGridUnits fits; one binary order of margin.
	return &GridError{Peak: peak, MinScale: peak * 0x1p42 / noise.MaxGridUnits, Scale: m.Scale(), Sigma: m.Sigma(), Sensitivity: m.Sensitivity()}
}
