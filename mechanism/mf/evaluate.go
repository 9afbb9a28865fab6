package mf

import (
	"math"
	"strconv"
	"strings"

	gblas "gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/blas"
	"github.com/dpsolve/dpsolve/internal/symdense"
)

// ParseWorkload reads a workload spec for n steps: "prefix",
// "momentum:β", optionally followed by ",cooldown:S" or ",cooldown:S:F"
// (learning rates falling linearly to F, default 0.1, over the last S
// steps).
func ParseWorkload(spec string, n int) (*Workload, error) {
	parts := strings.Split(spec, ",")
	beta := 0.0
	switch head := parts[0]; {
	case head == "prefix":
	case strings.HasPrefix(head, "momentum:"):
		b, err := strconv.ParseFloat(strings.TrimPrefix(head, "momentum:"), 64)
		if err != nil {
			return nil, inputErr("workload %q: momentum %v", spec, err)
		}
		beta = b
	default:
		return nil, inputErr("workload %q: want prefix or momentum:β[,cooldown:S[:F]]", spec)
	}
	var lr []float64
	for _, p := range parts[1:] {
		if !strings.HasPrefix(p, "cooldown:") {
			return nil, inputErr("workload %q: unknown option %q", spec, p)
		}
		f := strings.Split(strings.TrimPrefix(p, "cooldown:"), ":")
		steps, err := strconv.Atoi(f[0])
		if err != nil || len(f) > 2 {
			return nil, inputErr("workload %q: cooldown wants S or S:F", spec)
		}
		final := 0.1
		if len(f) == 2 {
			if final, err = strconv.ParseFloat(f[1], 64); err != nil {
				return nil, inputErr("workload %q: cooldown final rate: %v", spec, err)
			}
		}
		if lr, err = LinearCooldown(n, steps, final); err != nil {
			return nil, err
		}
	}
	w, err := Momentum(n, beta, lr)
	if err != nil {
		return nil, err
	}
	w.Name = spec
	return w, nil
}

// Evaluation scores a strategy under a schema.
type Evaluation struct {
	// Objective is tr(V X⁻¹) at unit sensitivity; Error = Objective·sens²
	// is the total squared error over the released quantities per unit
	// noise variance σ² at the schema's sensitivity.
	Objective, Error float64
	Sensitivity      Sensitivity
	// PerStep is the squared error of each released quantity (row of A)
	// per unit σ², with its mean, maximum and root mean square; nil when
	// the workload is a Gram only.
	PerStep        []float64
	Mean, Max, RMS float64
}

// Evaluate scores the lower-triangular (or any square invertible) strategy
// C under the schema: sens² from X = CᵀC and the error of the decoder
// B = A·C⁻¹ (row norms², computed by a triangular solve, never forming
// C⁻¹ explicitly).
func Evaluate(w *Workload, c mat.Matrix, s Schema) (*Evaluation, error) {
	if w == nil || c == nil {
		return nil, inputErr("nil workload or strategy")
	}
	n := w.N()
	if r, k := c.Dims(); r != n || k != n {
		return nil, inputErr("strategy is %d×%d, workload has n = %d steps", r, k, n)
	}
	cg := blas.NewSquare(n)
	lower := true
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			v := c.At(i, j)
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, inputErr("strategy entry (%d,%d) is %v", i, j, v)
			}
			cg.Data[i*n+j] = v
			lower = lower && (j <= i || v == 0)
		}
	}
	x := blas.NewSquare(n)
	blas.Gemm(gblas.Trans, gblas.NoTrans, 1, cg, cg, 0, x)
	xs := symdense.ToSym(x)
	sens, err := StrategySensitivity(xs, s)
	if err != nil {
		return nil, err
	}
	u := blas.NewSquare(n)
	blas.Copy(u, x)
	if !blas.Cholesky(u) {
		return nil, inputErr("strategy is singular: CᵀC is not positive definite")
	}
	ev := &Evaluation{Sensitivity: sens}
	if w.A == nil {
		f, ok := upperFactor(symdense.ToGeneral(w.V))
		if !ok {
			return nil, inputErr("cannot factor the Gram")
		}
		blas.Trsm(gblas.Right, gblas.Upper, gblas.NoTrans, gblas.NonUnit, 1, u, f)
		for _, v := range f.Data {
			ev.Objective += v * v
		}
	} else {
		ev.PerStep = decoderErrors(w.A, cg, u, lower)
		for _, e := range ev.PerStep {
			ev.Objective += e
		}
	}
	ev.Error = ev.Objective * sens.Squared
	for i := range ev.PerStep {
		ev.PerStep[i] *= sens.Squared
		ev.Max = math.Max(ev.Max, ev.PerStep[i])
		ev.Mean += ev.PerStep[i] / float64(len(ev.PerStep))
	}
	ev.RMS = math.Sqrt(ev.Mean)
	return ev, nil
}

// decoderErrors returns the squared row norms of B = A·C⁻¹: by a
// triangular solve with C when it is lower triangular, else with the
// Cholesky factor U of CᵀC (B·Bᵀ = A X⁻¹ Aᵀ = (A U⁻¹)(A U⁻¹)ᵀ).
func decoderErrors(a *mat.Dense, c, u blas.General, lower bool) []float64 {
	r, n := a.Dims()
	b := blas.NewGeneral(r, n)
	for i := 0; i < r; i++ {
		for j := 0; j < n; j++ {
			b.Data[i*n+j] = a.At(i, j)
		}
	}
	if lower {
		blas.Trsm(gblas.Right, gblas.Lower, gblas.NoTrans, gblas.NonUnit, 1, c, b)
	} else {
		blas.Trsm(gblas.Right, gblas.Upper, gblas.NoTrans, gblas.NonUnit, 1, u, b)
	}
	out := make([]float64, r)
	for i := range out {
		rw := b.Data[i*n : (i+1)*n]
		out[i] = dot(rw, rw)
	}
	return out
}

// Bands returns the n×b matrix of a b-banded lower-triangular C's
// diagonals: Bands[t][j] = C[t][t−j] (0 where t < j).
func Bands(c *mat.TriDense, b int) *mat.Dense {
	n, _ := c.Dims()
	out := mat.NewDense(n, b, nil)
	for t := 0; t < n; t++ {
		for j := 0; j < b && j <= t; j++ {
			out.Set(t, j, c.At(t, t-j))
		}
	}
	return out
}
