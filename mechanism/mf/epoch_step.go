package mf

import (
	"math"

	gblas "gonum.org/v1/gonum/blas"

	"github.com/dpsolve/dpsolve/blas"
	"github.com/dpsolve/dpsolve/progress"
)

// solveSystem solves 𝒜ν = −½·𝒯*(X) by preconditioned conjugate
// gradients to a relative residual that tightens as Newton converges,
// warm-started from the previous iteration's multipliers: they converge to
// the optimum's (ν = −X⁻¹VX⁻¹ on the pattern, where the step vanishes), so
// near the optimum the residual they leave is far below the right-hand
// side, against which the target stays relative. (Measured at n = 512:
// CG products 386 → 188 on momentum 0.9 k = 16, 95 → 58 at k = 4, 33 → 25
// on prefix k = 4, in the same Newton iterations.)
func (e *epochSolver) solveSystem(pc *blockJacobi, eta float64, rebuild bool) ([]float64, int) {
	if rebuild || pc.inT { // a retry's line search overwrote e.t
		pc.build()
	}
	m := e.b * e.perPattern()
	rhs := make([]float64, m)
	e.adjointOf(e.x, rhs)
	for i := range rhs {
		rhs[i] *= -0.5
	}
	nu := make([]float64, m)
	steps := 0
	if e.nu != nil {
		r0 := math.Sqrt(dot(rhs, rhs))
		e.apply(e.nu, nu)
		steps++
		for i := range rhs {
			rhs[i] -= nu[i]
		}
		clear(nu)
		if res := math.Sqrt(dot(rhs, rhs)); res > eta*r0 {
			steps += pcg(e.apply, pc.apply, nu, rhs, eta*r0/res, 500)
		}
		for i := range nu {
			nu[i] += e.nu[i]
		}
	} else {
		steps = pcg(e.apply, pc.apply, nu, rhs, eta, 500)
	}
	e.nu = append(e.nu[:0], nu...)
	return nu, steps
}

// forcing is CG's relative residual target, min(1e-3, 0.1·relative
// decrement): tight enough that the exact projection of the step onto the
// constraints keeps it a descent direction. (Measured at n = 256: looser
// targets, min(1e-2, 0.1·√dec) or min(0.1, √dec), cost 1–2.5× more Newton
// iterations and more CG products in all of prefix k = 4, k = 16 and
// momentum 0.9 k = 8, unlike the banded solver, whose steps need no
// projection.)
func (e *epochSolver) forcing() float64 {
	if e.lastRel == 0 {
		return 1e-3
	}
	return math.Min(1e-3, math.Max(1e-11, 0.1*e.lastRel))
}

// adjointOf writes 𝒯*(A) for a symmetric A in full storage.
func (e *epochSolver) adjointOf(a blas.General, out []float64) {
	n, b, k, m := e.n, e.b, e.k, e.perPattern()
	for i := range out {
		out[i] = 0
	}
	for i := 0; i < n; i++ {
		r, p := i%b, i/b
		out[r*m] += a.Data[i*n+i]
		for q := p + 1; q < k; q++ {
			out[r*m+pairIndex(p, q, k)] += 2 * a.Data[i*n+r+q*b]
		}
	}
}

// direction forms the Newton step D = Z·D̂·Zᵀ, D̂ = K∘(Λ + ZᵀNZ), in e.s,
// projected exactly onto the constraints' null space (pattern entries off
// the diagonal zero, each pattern's diagonal summing to zero), and returns
// the model decrease ⟨Λ,D̂⟩ − ½⟨D̂, K⁻¹∘D̂⟩ and the slope ⟨Λ,D̂⟩ = −F'(X)[D].
func (e *epochSolver) direction(nu []float64) (dec, slope float64) {
	e.zNz(nu)
	n := e.n
	for i := 0; i < n; i++ {
		e.s.Data[i*n+i] += 0.5
	}
	quad := 0.0
	for i := 0; i < n; i++ {
		slope += e.lam[i] * e.s.Data[i*n+i]
		for j := 0; j < n; j++ {
			d := e.s.Data[i*n+j]
			kv := 1 / (e.lam[i] + e.lam[j])
			quad += d * d / kv
		}
	}
	dec = slope - 0.5*quad
	blas.Gemm(gblas.NoTrans, gblas.NoTrans, 1, e.z, e.s, 0, e.w)
	blas.Gemm(gblas.NoTrans, gblas.Trans, 1, e.w, e.z, 0, e.s)
	e.project(e.s)
	e.lastRel = math.Max(dec, 0) / trace(e.lam)
	return dec, slope
}

// project makes the symmetric direction d feasible exactly.
func (e *epochSolver) project(d blas.General) {
	n, b := e.n, e.b
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			v := 0.5 * (d.Data[i*n+j] + d.Data[j*n+i])
			if i%b == j%b {
				v = 0
			}
			d.Data[i*n+j], d.Data[j*n+i] = v, v
		}
	}
	for r := 0; r < b; r++ {
		mean := 0.0
		for i := r; i < n; i += b {
			mean += d.Data[i*n+i]
		}
		mean /= float64(e.k)
		for i := r; i < n; i += b {
			d.Data[i*n+i] -= mean
		}
	}
}

func trace(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s
}

// lineSearch backtracks from the full step until X + αD is definite and
// decreases F by at least 1e-4·α·slope (Armijo); when the full step is
// accepted it tries α = 2, 4, … while F keeps falling. Far from the
// optimum F behaves like 1/t along the directions X must grow in, where
// Newton's full step only multiplies t by 3/2; the extrapolation recovers
// several such steps for one objective evaluation each. It leaves e.x,
// e.u, e.t at the accepted point; false if no α ≥ 2⁻³⁰ decreases F.
func (e *epochSolver) lineSearch(obj, slope float64) (float64, bool) {
	return lineSearch(e.x, e.s, e.w, obj, slope, func(x blas.General) (float64, bool) {
		return objective(e.f, x, e.u, e.t)
	})
}

// lineSearch is the step rule shared by the solvers: x + α·d for the
// direction d with −F'(x)[d] = slope > 0; w is scratch, eval scores a
// point (leaving its factorization behind, so the accepted point is
// evaluated last).
func lineSearch(x, d, w blas.General, obj, slope float64, eval func(blas.General) (float64, bool)) (float64, bool) {
	try := func(a float64) (float64, bool) {
		for i, xv := range x.Data {
			w.Data[i] = xv + a*d.Data[i]
		}
		return eval(w)
	}
	a := 1.0
	for ; a >= 0x1p-30; a /= 2 {
		if f, ok := try(a); ok && f <= obj-1e-4*a*slope {
			obj = f
			break
		}
	}
	if a < 0x1p-30 {
		f, _ := eval(x)
		return f, false
	}
	best, last := a, a
	for a == 1 && best < 64 {
		last = 2 * best
		f, ok := try(last)
		if !ok || f >= obj {
			break
		}
		best = last
		obj = f
	}
	if last != best { // leave the accepted point's factorization behind
		obj, _ = try(best)
	}
	blas.Copy(x, w)
	return obj, true
}

// boundAt certifies the current X (consumes e.t).
func (e *epochSolver) boundAt() (float64, bool) {
	b, ok := e.certify()
	return hooked(b), ok
}

func (e *epochSolver) report(res *Result, it int) {
	if e.opt == nil || e.opt.Progress == nil {
		return
	}
	e.opt.Progress(progress.Event{Stage: "mf", Step: it, Inner: res.CGSteps,
		Objective: res.Objective, Bound: res.LowerBound,
		Gap: (res.Objective - res.LowerBound) / res.Objective, Note: "fixed-epoch"})
}
