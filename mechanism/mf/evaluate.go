package mf

import (
	"math"

	gblas "gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/blas"
	"github.com/dpsolve/dpsolve/internal/symdense"
	"github.com/dpsolve/dpsolve/model/workload"
)

// ParseWorkload builds the training workload named spec (read by
// workload.ParseTraining, the one parser of workload names: "prefix" or
// "momentum:β", optionally with ",cooldown:S[:F]") for n steps.
func ParseWorkload(spec string, n int) (*Workload, error) {
	t, err := workload.ParseTraining(spec)
	if err != nil {
		return nil, err
	}
	return FromTraining(t, n)
}

// FromTraining builds the training workload t for n steps: Momentum with
// t.Momentum and, if t.Cooldown, the learning rates of LinearCooldown.
func FromTraining(t workload.Training, n int) (*Workload, error) {
	var lr []float64
	if t.Cooldown {
		var err error
		if lr, err = LinearCooldown(n, t.CooldownSteps, t.CooldownFinal); err != nil {
			return nil, err
		}
	}
	w, err := Momentum(n, t.Momentum, lr)
	if err != nil {
		return nil, err
	}
	w.Name = t.Spec
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
// C⁻¹ explicitly). A strategy planned by Solve is scored without its
// copies by Result.Evaluate.
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
	sens, err := StrategySensitivity(mat.NewSymDense(n, x.Data), s)
	if err != nil {
		return nil, err
	}
	// X's Cholesky factor U proves the strategy nonsingular, and decodes
	// when C is not lower triangular (B·Bᵀ = A X⁻¹ Aᵀ = (A U⁻¹)(A U⁻¹)ᵀ).
	if !blas.Cholesky(x) {
		return nil, inputErr("strategy is singular: CᵀC is not positive definite")
	}
	tri, side := x, gblas.Upper
	if lower {
		tri, side = cg, gblas.Lower
	}
	if w.Released() == 0 {
		f, ok := upperFactor(symdense.ToGeneral(w.V))
		if !ok {
			return nil, inputErr("cannot factor the Gram")
		}
		blas.Trsm(gblas.Right, gblas.Upper, gblas.NoTrans, gblas.NonUnit, 1, x, f)
		return scored(&Evaluation{Sensitivity: sens, Objective: dot(f.Data, f.Data)}), nil
	}
	return scored(&Evaluation{Sensitivity: sens, PerStep: decoderErrors(w, tri, side)}), nil
}

// Evaluate scores the planned strategy: the per-step errors of B = A·C⁻¹
// by triangular solves with r.C in blocks of A's rows (no n×n matrix is
// allocated), r.Objective where only the Gram is known.
func (r *Result) Evaluate(w *Workload) (*Evaluation, error) {
	if w == nil || r == nil || r.C == nil {
		return nil, inputErr("nil workload or result")
	}
	n := w.N()
	if k, _ := r.C.Dims(); k != n {
		return nil, inputErr("strategy is %d×%d, workload has n = %d steps", k, k, n)
	}
	ev := &Evaluation{Sensitivity: r.Sensitivity, Objective: r.Objective}
	if w.Released() > 0 {
		raw := r.C.RawTriangular()
		c := blas.General{Rows: n, Cols: n, Stride: raw.Stride, Data: raw.Data}
		ev.PerStep = decoderErrors(w, c, gblas.Lower)
	}
	return scored(ev), nil
}

// scored fills the error totals from PerStep (or the objective) and the
// sensitivity.
func scored(ev *Evaluation) *Evaluation {
	if ev.PerStep != nil {
		ev.Objective = 0
		for _, e := range ev.PerStep {
			ev.Objective += e
		}
	}
	ev.Error = ev.Objective * ev.Sensitivity.Squared
	for i := range ev.PerStep {
		ev.PerStep[i] *= ev.Sensitivity.Squared
		ev.Max = math.Max(ev.Max, ev.PerStep[i])
		ev.Mean += ev.PerStep[i] / float64(len(ev.PerStep))
	}
	ev.RMS = math.Sqrt(ev.Mean)
	return ev
}

// decoderErrors returns the squared row norms of B = A·T⁻¹ for the n×n
// triangle T (lower: C; upper: U with UᵀU = CᵀC), rowBlock rows of A at a
// time.
func decoderErrors(w *Workload, t blas.General, uplo gblas.Uplo) []float64 {
	m, n := w.Released(), w.N()
	out := make([]float64, m)
	blk := blas.NewGeneral(min(rowBlock, m), n)
	for i0 := 0; i0 < m; i0 += blk.Rows {
		b := blk
		b.Rows = min(blk.Rows, m-i0)
		w.rowsInto(i0, b)
		blas.Trsm(gblas.Right, uplo, gblas.NoTrans, gblas.NonUnit, 1, t, b)
		for i := 0; i < b.Rows; i++ {
			rw := b.Data[i*n : (i+1)*n]
			out[i0+i] = dot(rw, rw)
		}
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
