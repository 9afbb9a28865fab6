package sdp

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/internal/inputerr"
	"github.com/dpsolve/dpsolve/internal/psd"
	"github.com/dpsolve/dpsolve/internal/symdense"
)

// Form selects which of the programs of Yuan et al. (KDD 2016) to build.
type Form int

const (
	// Approx is Eq. (2) of Yuan et al. (KDD 2016), appendix §1.1
	// (approximate DP, p = 2):
	//   min tr(Y)  s.t.  diag(X) ≤ 1,  [[X, Wᵀ], [W, Y]] ⪰ 0.
	// It is exact: its optimal value is min tr(V X⁻¹) over diag(X) ≤ 1.
	Approx Form = iota + 1
	// Exact is Eq. (3) of Yuan et al. (KDD 2016), appendix §1.2 (exact DP,
	// p = 1), written as the paper states it:
	//   min tr(Y)  s.t.  ‖A‖₁,∞ ≤ 1,  [[X, Wᵀ], [W, Y]] ⪰ 0,  [[X, Aᵀ], [A, I]] ⪰ 0,
	// with A square (n×n). See the package documentation: as stated it
	// does not bound X, so its infimum is 0.
	Exact
	// ExactBounded is Eq. (3) with the constraint diag(X) ≤ 1 added. The
	// constraint is valid for the exact-DP problem (X = AᵀA and
	// ‖A‖₁,∞ ≤ 1 give diag(X)ᵢ = ‖aᵢ‖₂² ≤ ‖aᵢ‖₁² ≤ 1), so this is still a
	// relaxation of it, and unlike Eq. (3) its value is a non-trivial lower
	// bound on the ε-DP error of every strategy.
	ExactBounded
)

// String returns "approx", "exact" or "exact-bounded".
func (f Form) String() string {
	switch f {
	case Approx:
		return "approx"
	case Exact:
		return "exact"
	case ExactBounded:
		return "exact-bounded"
	}
	return fmt.Sprintf("Form(%d)", int(f))
}

// ParseForm is the inverse of Form.String.
func ParseForm(s string) (Form, error) {
	for _, f := range []Form{Approx, Exact, ExactBounded} {
		if s == f.String() {
			return f, nil
		}
	}
	return 0, inputerr.Errorf("sdp", "unknown form %q (want approx, exact or exact-bounded)", s)
}

// Formulation is one of those programs built for a workload, together
// with the map from SDP variables back to X, Y and A.
type Formulation struct {
	Form    Form
	N       int        // domain size n
	M       int        // rows of the workload factor used (m)
	W       *mat.Dense // the m×n workload (or factor of V) in the program
	Problem *Problem   // the SDP in SDPA form

	nX, nY int // numbers of X and Y variables (upper triangles)
}

// Build writes form f for the workload matrix W (m×n, finite entries). The
// program has n(n+1)/2 + m(m+1)/2 variables (plus 2n² for Exact forms) and a
// block of size n+m, so for m > n prefer FromGram, which uses an n×n factor
// with the same Gram and hence the same optimum.
func Build(f Form, w *mat.Dense) (*Formulation, error) {
	if err := checkBuild(f, w); err != nil {
		return nil, err
	}
	m, n := w.Dims()
	fm := &Formulation{Form: f, N: n, M: m, W: mat.DenseCopyOf(w)}
	fm.nX = n * (n + 1) / 2
	fm.nY = m * (m + 1) / 2
	nvar := fm.nX + fm.nY
	if f != Approx {
		nvar += 2 * n * n // A (n×n) and the bounds T ≥ |A|
	}
	fm.Problem = &Problem{C: make([]float64, nvar)}
	for i := 0; i < m; i++ {
		fm.Problem.C[fm.yVar(i, i)] = 1 // tr(Y)
	}
	fm.addWorkloadBlock(w)
	if f == Approx {
		fm.addUnitDiagonal()
		fm.Problem.Comment = fmt.Sprintf("dpsolve: Yuan et al. KDD 2016 Eq. (2), approximate DP: min tr(Y) s.t. diag(X) <= 1, [[X, W'], [W, Y]] psd; n=%d m=%d; vars X upper (row-major) then Y upper", n, m)
		return fm, nil
	}
	fm.addStrategyBlock()
	fm.addSensitivityBounds()
	extra := ""
	if f == ExactBounded {
		extra = ", diag(X) <= 1"
	}
	fm.Problem.Comment = fmt.Sprintf("dpsolve: Yuan et al. KDD 2016 Eq. (3), exact DP relaxation: min tr(Y) s.t. ||A||_{1,inf} <= 1%s, [[X, W'], [W, Y]] psd, [[X, A'], [A, I]] psd; n=%d m=%d; vars X upper, Y upper, A row-major, T=|A| bound row-major", extra, n, m)
	return fm, nil
}

// checkBuild refuses a missing or non-finite W and an unknown form.
func checkBuild(f Form, w *mat.Dense) error {
	if w == nil {
		return inputerr.Errorf("sdp", "nil workload matrix")
	}
	m, n := w.Dims()
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			if x := w.At(i, j); math.IsNaN(x) || math.IsInf(x, 0) {
				return inputerr.Errorf("sdp", "workload entry (%d,%d) is %v", i, j, x)
			}
		}
	}
	switch f {
	case Approx, Exact, ExactBounded:
		return nil
	}
	return inputerr.Errorf("sdp", "unknown form %v", f)
}

// add appends the entry (i, j) (0-based) of matrix mat (0: F₀) in block blk.
func (p *Problem) add(mat, blk, i, j int, v float64) {
	p.Entries = append(p.Entries, Entry{Mat: mat, Block: blk, I: i + 1, J: j + 1, Value: v})
}

// addWorkloadBlock writes block 1: [[X, Wᵀ], [W, Y]] ⪰ 0, size n+m. Σ yᵢFᵢ
// supplies X and Y; −F₀ supplies the constant W in the lower-left
// (upper-right: Wᵀ) corner.
func (fm *Formulation) addWorkloadBlock(w *mat.Dense) {
	p, n, m := fm.Problem, fm.N, fm.M
	p.Blocks = append(p.Blocks, n+m)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			p.add(fm.xVar(i, j)+1, 1, i, j, 1)
		}
	}
	for i := 0; i < m; i++ {
		for j := i; j < m; j++ {
			p.add(fm.yVar(i, j)+1, 1, n+i, n+j, 1)
		}
	}
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			if v := w.At(i, j); v != 0 {
				p.add(0, 1, j, n+i, -v)
			}
		}
	}
}

// addUnitDiagonal writes Approx's block 2 (diagonal): 1 − X_ii ≥ 0, the
// unit column norms of a strategy with X = AᵀA.
func (fm *Formulation) addUnitDiagonal() {
	p, n := fm.Problem, fm.N
	p.Blocks = append(p.Blocks, -n)
	for i := 0; i < n; i++ {
		p.add(fm.xVar(i, i)+1, 2, i, i, -1)
		p.add(0, 2, i, i, -1)
	}
}

// addStrategyBlock writes the exact forms' block 2: [[X, Aᵀ], [A, I]] ⪰ 0
// (X ⪰ AᵀA), size 2n.
func (fm *Formulation) addStrategyBlock() {
	p, n := fm.Problem, fm.N
	p.Blocks = append(p.Blocks, 2*n)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			p.add(fm.xVar(i, j)+1, 2, i, j, 1)
		}
	}
	for k := 0; k < n; k++ {
		for j := 0; j < n; j++ {
			p.add(fm.aVar(k, j)+1, 2, j, n+k, 1)
		}
		p.add(0, 2, n+k, n+k, -1)
	}
}

// addSensitivityBounds writes the exact forms' block 3 (diagonal): T − A ≥ 0,
// T + A ≥ 0 entrywise, and for each column j, 1 − Σ_k T_kj ≥ 0; together
// ‖A‖₁,∞ = max_j Σ_k |A_kj| ≤ 1. With ExactBounded also 1 − X_jj ≥ 0.
func (fm *Formulation) addSensitivityBounds() {
	p, n := fm.Problem, fm.N
	rows := 2*n*n + n
	if fm.Form == ExactBounded {
		rows += n
	}
	p.Blocks = append(p.Blocks, -rows)
	r := 0
	for k := 0; k < n; k++ {
		for j := 0; j < n; j++ {
			a, t := fm.aVar(k, j)+1, fm.tVar(k, j)+1
			p.add(t, 3, r, r, 1)
			p.add(a, 3, r, r, -1)
			r++
			p.add(t, 3, r, r, 1)
			p.add(a, 3, r, r, 1)
			r++
		}
	}
	for j := 0; j < n; j++ {
		for k := 0; k < n; k++ {
			p.add(fm.tVar(k, j)+1, 3, r, r, -1)
		}
		p.add(0, 3, r, r, -1)
		r++
	}
	if fm.Form == ExactBounded {
		for j := 0; j < n; j++ {
			p.add(fm.xVar(j, j)+1, 3, r, r, -1)
			p.add(0, 3, r, r, -1)
			r++
		}
	}
}

// FromGram builds form f for a workload given only by its Gram V = WᵀW,
// using the n×n factor R of FactorGram (RᵀR = V) in place of W. The optimal
// value is the same because the program depends on W only through WᵀW
// (tr(Y) at the optimum is tr(W X⁻¹ Wᵀ) = tr(V X⁻¹)).
func FromGram(f Form, v *mat.SymDense) (*Formulation, error) {
	r, err := FactorGram(v)
	if err != nil {
		return nil, err
	}
	return Build(f, r)
}

// FactorGram returns an n×n matrix R with RᵀR = V: internal/psd's factor
// (V's Cholesky factor when V is definite, otherwise Λ^{1/2}Qᵀ from V = QΛQᵀ
// over the eigenvalues above psd.Tol = 32·n·ε·λ_max) with a zero row for
// each dropped direction. A V with an eigenvalue below −psd.Tol is not a
// Gram matrix and is rejected (an error wrapping ErrInput).
func FactorGram(v *mat.SymDense) (*mat.Dense, error) {
	if v == nil {
		return nil, inputerr.Errorf("sdp", "nil Gram matrix")
	}
	n := v.SymmetricDim()
	if n == 0 {
		return nil, inputerr.Errorf("sdp", "empty Gram matrix")
	}
	f, k, err := psd.Factor(symdense.ToGeneral(v))
	if errors.Is(err, psd.ErrNotPSD) {
		return nil, fmt.Errorf("sdp: the Gram matrix is not of the form WᵀW: %w", err)
	}
	if err != nil {
		return nil, fmt.Errorf("sdp: Gram matrix: %w", err)
	}
	r := mat.NewDense(n, n, nil)
	for i := 0; i < k; i++ {
		copy(r.RawRowView(i), f.Data[i*f.Stride:i*f.Stride+n])
	}
	return r, nil
}

// NumVars is the number of SDP variables.
func (f *Formulation) NumVars() int { return len(f.Problem.C) }

// xVar, yVar, aVar, tVar are 0-based variable indices (the SDPA matrix
// number is one more). X and Y are stored as their upper triangles, row by
// row; A and T row-major.
func (f *Formulation) xVar(i, j int) int {
	if i > j {
		i, j = j, i
	}
	return i*f.N - i*(i-1)/2 + (j - i)
}

func (f *Formulation) yVar(i, j int) int {
	if i > j {
		i, j = j, i
	}
	return f.nX + i*f.M - i*(i-1)/2 + (j - i)
}

func (f *Formulation) aVar(k, j int) int { return f.nX + f.nY + k*f.N + j }
func (f *Formulation) tVar(k, j int) int { return f.nX + f.nY + f.N*f.N + k*f.N + j }

// Point is a value of the program's variables mapped back to matrices.
type Point struct {
	// X is the n×n strategy Gram variable.
	X *mat.SymDense
	// Y is the m×m variable bounding W X⁻¹ Wᵀ.
	Y *mat.SymDense
	// A is the n×n strategy variable of Eq. (3); nil for Approx.
	A *mat.Dense
	// Objective is cᵀy = tr(Y).
	Objective float64
}

// Recover maps a solution vector y (len NumVars) back to X, Y and A.
func (f *Formulation) Recover(y []float64) (*Point, error) {
	if len(y) != f.NumVars() {
		return nil, inputerr.Errorf("sdp", "solution has %d variables, the %v program has %d", len(y), f.Form, f.NumVars())
	}
	for i, v := range y {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, inputerr.Errorf("sdp", "solution variable %d is %v", i+1, v)
		}
	}
	pt := &Point{X: mat.NewSymDense(f.N, nil), Y: mat.NewSymDense(f.M, nil)}
	for i := 0; i < f.N; i++ {
		for j := i; j < f.N; j++ {
			pt.X.SetSym(i, j, y[f.xVar(i, j)])
		}
	}
	for i := 0; i < f.M; i++ {
		for j := i; j < f.M; j++ {
			pt.Y.SetSym(i, j, y[f.yVar(i, j)])
		}
	}
	for i, c := range f.Problem.C {
		pt.Objective += c * y[i]
	}
	if f.Form != Approx {
		pt.A = mat.NewDense(f.N, f.N, nil)
		for k := 0; k < f.N; k++ {
			for j := 0; j < f.N; j++ {
				pt.A.Set(k, j, y[f.aVar(k, j)])
			}
		}
	}
	return pt, nil
}
