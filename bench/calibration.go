package bench

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/dpsolve/dpsolve/model/domain"
	"github.com/dpsolve/dpsolve/model/workload"
	"github.com/dpsolve/dpsolve/newton"
	"github.com/dpsolve/dpsolve/pipeline/publish"
	"github.com/dpsolve/dpsolve/pipeline/release"
	"github.com/dpsolve/dpsolve/privacy/calibrate"
	"github.com/dpsolve/dpsolve/privacy/noise"
)

// calibrationSDs is how far, in the ratio's standard deviations, a
// calibration row may stray from 1 before it fails: beyond 4 sd a correct
// release fails with probability about 6e-5 (normal tails; the mean of R
// squared-error totals is close to normal for the R used here).
const calibrationSDs = 4

// calibration is the statistic of a calibration row: the empirical mean of
// R total squared errors ‖ŷ − Wx‖² (one per repetition with fresh noise)
// against the expected total E‖ŷ − Wx‖² the release promised.
type calibration struct {
	// Mean is the empirical mean total squared error, Expected the promise.
	Mean, Expected float64
	// Ratio is Mean/Expected (1 for a calibrated release).
	Ratio float64
	// SD is the ratio's standard deviation: the larger of EmpiricalSD
	// and ChiSquareSD.
	SD float64
	// EmpiricalSD is the sample sd of the R totals / (√R·Expected).
	EmpiricalSD float64
	// ChiSquareSD is √(2/(R·m)), the ratio's sd if the m answers' errors
	// were independent Gaussians (the total is then Expected/m times a
	// chi-square with m degrees of freedom). Correlated answers (prefix
	// sums, overlapping marginals) have fewer effective degrees of freedom
	// and a larger sd; for Gaussian noise √(2/(R·m)) is a lower bound.
	ChiSquareSD float64
	R, M        int
}

// calibrationOf computes the statistic of totals (one total squared error
// per repetition) against the promised expected total over m answers.
func calibrationOf(totals []float64, expected float64, m int) (calibration, error) {
	r := len(totals)
	if r < 2 || m < 1 || !(expected > 0) || math.IsInf(expected, 0) {
		return calibration{}, fmt.Errorf("calibration needs at least 2 repetitions, 1 answer and a positive finite expected error (have %d, %d, %g)", r, m, expected)
	}
	var mean float64
	for _, t := range totals {
		mean += t
	}
	mean /= float64(r)
	var ss float64
	for _, t := range totals {
		ss += (t - mean) * (t - mean)
	}
	c := calibration{Mean: mean, Expected: expected, Ratio: mean / expected, R: r, M: m,
		ChiSquareSD: math.Sqrt(2 / float64(r*m))}
	c.EmpiricalSD = math.Sqrt(ss/float64(r-1)) / (math.Sqrt(float64(r)) * expected)
	c.SD = math.Max(c.EmpiricalSD, c.ChiSquareSD)
	return c, nil
}

// fail says why the statistic is outside its tolerance ("" when inside).
func (c calibration) fail() string {
	if d := math.Abs(c.Ratio - 1); d > calibrationSDs*c.SD {
		return fmt.Sprintf("FAIL: the empirical error is %.1f sd from the promise (tolerance %d sd)", d/c.SD, calibrationSDs)
	}
	return ""
}

// row is the suite's row of the statistic.
func (c calibration) row(caseName, versus string) SuiteRow {
	return SuiteRow{Area: "release calibration", Case: caseName, Versus: versus, Metric: "sq error",
		Ours: c.Mean, Peer: c.Expected, SD: c.SD, Fail: c.fail()}
}

// calibrationSpec is the multi-attribute release of the suite: a 4-way
// domain of 96 cells with a Kronecker term (cumulative a by b) and the
// two-way marginals; calibrationMarginals is its marginals alone, for the
// marginals plan (whose template takes only marginals workloads).
const (
	calibrationSpec = `{"domain": [{"name": "a", "size": 8}, {"name": "b", "size": 3}, {"name": "c", "size": 2}, {"name": "d", "size": 2}],
 "workload": [{"name": "cum", "product": {"a": "prefix", "b": "identity"}},
              {"name": "pairs", "marginals": {"k": 2}}]}`
	calibrationMarginals = `{"domain": [{"name": "a", "size": 8}, {"name": "b", "size": 3}, {"name": "c", "size": 2}, {"name": "d", "size": 2}],
 "workload": [{"name": "pairs", "marginals": {"k": 2}}]}`
)

// calibrationHistogram returns a fixed, non-uniform histogram of n cells
// (counts 0–9): the errors do not depend on the data, but the answers are
// computed from them.
func calibrationHistogram(n int) []float64 {
	x := make([]float64, n)
	for i := range x {
		x[i] = float64((i*7 + i*i) % 10)
	}
	return x
}

// suiteCalibration releases the suite's spec (templates union and kron) and a
// dense prefix answer repeatedly through the library's release entry points
// (publish.Run, publish.RunHistogram) with seeded simulation noise (not
// private), and compares the empirical mean squared error of the answers
// (before any post-processing) with the error each release promised.
func suiteCalibration(ctx context.Context, reps int, add func(SuiteRow)) error {
	rho, err := calibrate.ZCDP(0.5)
	if err != nil {
		return err
	}
	eps, err := calibrate.PureDP(1)
	if err != nil {
		return err
	}
	for _, c := range []struct {
		name, spec, template string
		budget               calibrate.Budget
	}{
		{"spec of 96 cells (prefix×identity, 2-way marginals)", calibrationSpec, "kron", rho},
		{"spec of 96 cells (prefix×identity, 2-way marginals)", calibrationSpec, "union", eps},
		{"2-way marginals of the same 96 cells", calibrationMarginals, "marginals", rho},
	} {
		k, err := domain.ParseSpec(strings.NewReader(c.spec), ".", workload.Blocks)
		if err != nil {
			return err
		}
		cal, desc, err := calibrateSpec(ctx, k, c.template, c.budget, reps)
		if err != nil {
			return err
		}
		add(cal.row(fmt.Sprintf("%s, %s, %s, R=%d", c.name, desc, c.budget, reps), "the release's expected error"))
	}
	cal, err := calibrateDense(ctx, 64, rho, reps)
	if err != nil {
		return err
	}
	add(cal.row(fmt.Sprintf("answer: prefix n=64, newton strategy, %s, R=%d", rho, reps), "the release's expected error"))
	return nil
}

// calibrateSpec releases k reps times under template and budget with the
// noise seeded 1, 2, …, and returns the statistic and the plan's parts
// ("kron + marginals parts").
func calibrateSpec(ctx context.Context, k *domain.Kron, template string, b calibrate.Budget, reps int) (calibration, string, error) {
	w, err := k.DenseMatrix(k.Cells())
	if err != nil {
		return calibration{}, "", err
	}
	x := calibrationHistogram(k.Cells())
	truth := make([]float64, k.Queries())
	for i := range truth {
		for j, v := range x {
			truth[i] += w.At(i, j) * v
		}
	}
	// DenseMatrix's rows carry the terms' weights; the released answers
	// do not.
	weight := make([]float64, 0, k.Queries())
	for _, t := range k.Terms() {
		for q := 0; q < t.Queries(); q++ {
			weight = append(weight, t.Weight)
		}
	}
	var expected float64
	var desc string
	totals := make([]float64, reps)
	for r := range totals {
		res, err := publish.Run(ctx, publish.Request{Workload: k, Budget: b, Template: template,
			Data: publish.Data{Histogram: x}, Noise: noise.NewSeededInsecure(uint64(r + 1))})
		if err != nil {
			return calibration{}, "", err
		}
		if res.Tables == nil || res.Tables.PostProcessed {
			return calibration{}, "", fmt.Errorf("the %s release returned no least-squares answers", template)
		}
		if r == 0 {
			var kinds []string
			for _, p := range res.Parts.Parts() {
				expected += p.Release.ExpectedTotalSquaredError()
				kinds = append(kinds, p.Plan)
			}
			desc = strings.Join(kinds, "; ")
		}
		i := 0
		for _, ans := range res.Tables.Answers {
			for _, a := range ans {
				d := a - truth[i]/weight[i]
				totals[r] += d * d
				i++
			}
		}
		if i != len(truth) {
			return calibration{}, "", fmt.Errorf("the release answered %d queries, the workload has %d", i, len(truth))
		}
	}
	c, err := calibrationOf(totals, expected, len(truth))
	return c, desc, err
}

// calibrateDense releases the prefix workload over n cells through
// newton's optimal strategy reps times (publish.RunHistogram, the
// transaction of dpsolve answer) and returns the statistic.
func calibrateDense(ctx context.Context, n int, b calibrate.Budget, reps int) (calibration, error) {
	w, err := workload.Parse("prefix", n)
	if err != nil {
		return calibration{}, err
	}
	s, err := newton.Solve(ctx, w.Gram(), &newton.Options{Tol: 1e-8})
	if err != nil {
		return calibration{}, err
	}
	x := calibrationHistogram(n)
	truth, err := release.Answer(w, x)
	if err != nil {
		return calibration{}, err
	}
	var expected float64
	totals := make([]float64, reps)
	for r := range totals {
		res, err := publish.RunHistogram(ctx, publish.HistogramRequest{Release: release.Request{
			Strategy: s.A, Budget: b, Data: x, Workload: w, Noise: noise.NewSeededInsecure(uint64(r + 1))}})
		if err != nil {
			return calibration{}, err
		}
		expected = res.Release.Expected.Total
		for i, a := range res.Release.Answers {
			d := a - truth[i]
			totals[r] += d * d
		}
	}
	return calibrationOf(totals, expected, len(truth))
}
