// Package project is the post-processing step of the functional mechanism: the
// L² projection of a (noisy, truncated) expansion h = Σ_k c_k φ_k onto the convex
// set of regular functions
//
//	S = { h : αI ⪯ ∇²h(x) ⪯ βI and |∇h(x)| ≤ u for all x ∈ D },
//
// so that every released function is α-strongly convex, β-smooth and
// u-Lipschitz again. Because the basis is orthonormal, the L²(D) distance is the
// Euclidean distance of coefficient vectors, and the projection is the convex
// program
//
//	minimize ½‖c − c̃‖²  over c ∈ ℝ^K
//	subject to  α_g I ⪯ ∇²h_c(x_j) ⪯ β_g I,  |∇h_c(x_j)| ≤ u_g  at every grid node x_j,
//
// whose constraints are linear maps of c into closed convex sets (a spectral
// interval for the symmetric Hessian, a ball for the gradient). It is
// post-processing, so it preserves the mechanism's differential privacy.
//
// # Sufficient conditions and grid fineness
//
// The grid is the tensor product of the m Chebyshev nodes of the first kind
// cos((2j−1)π/(2m)), j = 1..m, mapped to each side of D. The Hessian entries of h
// are polynomials of total degree ≤ K−2 and the gradient entries of degree ≤ K−1
// (K the basis degree), and so is vᵀ∇²h(x)v, vᵀ∇h(x) for every fixed unit vector v.
// The Ehlich–Zeller inequality (Math. Z. 86, 1964) says that a univariate
// polynomial p of degree n < m satisfies
//
//	max_{[−1,1]} |p| ≤ sec(nπ/(2m)) · max_j |p(x_j)|
//
// on the m Chebyshev nodes (the tests check it against the exact worst case,
// computed by linear programming: for n = 2, m = 3 values between the nodes
// reach 5/3 of the node maximum, under the factor 2, so a margin is needed).
// Applied one axis at a time it gives
// the factor s_n = sec(nπ/(2m))^d on the tensor grid in d dimensions. Hence, if
// the constraints hold at the nodes with bounds (α_g, β_g, u_g), then everywhere
// on D, with s_H = s_{K−2}, s_G = s_{K−1} and r_g = (β_g − α_g)/2,
//
//	α_g − (s_H − 1) r_g  ⪯  ∇²h(x)  ⪯  β_g + (s_H − 1) r_g,    |∇h(x)| ≤ s_G u_g
//
// (apply the inequality to vᵀ∇²h v − (α_g+β_g)/2, whose node values lie in
// [−r_g, r_g], and to vᵀ∇h). These are the documented off-grid margins
// (Projector.Guaranteed). In the default Certified mode the node bounds are
// tightened so that the margins land exactly on S:
//
//	α_g = α + δ,  β_g = β − δ,  δ = (1 − 1/s_H)(β − α)/2,   u_g = u / s_G,
//
// which makes every output of Project a member of S on all of D, not only at the
// nodes. The grid must have m ≥ K nodes per axis (so that K−1 < m); finer grids
// shrink the margins like s_n − 1 ≈ d(nπ/(2m))²/2. The default m = 3K keeps
// s_H, s_G ≤ sec(π/6)^d (≤ 1.34 in 2-D, δ ≤ 0.125(β−α)).
//
// # Algorithm
//
// In 2-D the constraints are second-order cones: λ_min(H) ≥ α ⇔
// (h₁₁+h₂₂)/2 − α ≥ |((h₁₁−h₂₂)/2, h₁₂)|, λ_max(H) ≤ β ⇔ β − (h₁₁+h₂₂)/2 ≥
// |((h₁₁−h₂₂)/2, h₁₂)|, and |∇h| ≤ u; in 1-D they are intervals. The program is a
// convex QP over second-order cones, solved by a primal–dual interior-point
// method with Nesterov–Todd scaling and Mehrotra's predictor–corrector (the
// method of CVXOPT's coneqp). Each iteration solves one K×K system
// (I + Σ_j A_jᵀ B_j A_j) Δc = r, A_j the node's field rows and B_j its scaled cone
// blocks; on the full 2-D tensor grid the sum is assembled through the
// one-dimensional tables of the basis in O(m²K + mK²)-per-field-pair work instead
// of O(m²K²).
//
// An outer active-set loop keeps the program small when few nodes matter: it is
// first solved with the nodes violated by c̃ (all nodes once they are a large
// fraction), the solution is checked at every node, violated nodes are added and
// the program is solved again until no node is violated. The inner cones are
// shrunk by a relative margin of 1e-6 so that the returned c satisfies the node
// constraints exactly despite the solver's finite precision (so, precisely, c̃
// is projected onto the node set shrunk by that margin). A c̃ that already
// satisfies the node constraints is returned unchanged, so members of the set
// are fixed points and the projection is idempotent. Info.DistanceBound
// certifies the result: by weak duality ½‖c − c*‖² ≤ ½‖c − c̃‖² − D(z) for the
// exact projection c* onto the shrunk set and the solver's dual point z.
package project

import (
	"errors"
	"fmt"
	"math"

	"github.com/dpsolve/dpsolve/internal/inputerr"
	"github.com/dpsolve/dpsolve/mechanism/functional/basis"
)

// ErrInput is wrapped by every error caused by invalid arguments.
// It is the one dpsolve-wide sentinel (internal/inputerr), so
// errors.Is(err, ErrInput) holds for every package's bad-input errors.
var ErrInput = inputerr.ErrInput

// ErrNotConverged is returned when the solver stops at its iteration limit.
var ErrNotConverged = errors.New("project: projection did not converge")

func inputErrorf(format string, a ...any) error {
	return inputerr.Errorf("project", format, a...)
}

// Set describes S: Alpha ≤ eigenvalues of the Hessian ≤ Beta, |gradient| ≤ U.
type Set struct {
	Alpha, Beta, U float64
}

// Validate checks 0 ≤ Alpha < Beta < ∞ and 0 < U < ∞.
func (s Set) Validate() error {
	fin := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
	if !fin(s.Alpha) || !fin(s.Beta) || !fin(s.U) || s.Alpha < 0 || !(s.Alpha < s.Beta) || !(s.U > 0) {
		return inputErrorf("need 0 ≤ α < β < ∞ and 0 < u < ∞, got α=%v β=%v u=%v", s.Alpha, s.Beta, s.U)
	}
	return nil
}

// Mode selects how the node bounds relate to S.
type Mode int

const (
	// Certified tightens the node bounds so that outputs lie in S on all of D.
	Certified Mode = iota
	// GridOnly imposes S's bounds at the nodes only; off the nodes the
	// constraints hold within the Ehlich–Zeller margins (Projector.Guaranteed).
	GridOnly
)

// Options tune the projector; the zero value is the default.
type Options struct {
	// GridSize is the number m of Chebyshev nodes per axis (≥ K); 0 means 3K
	// (at least 4).
	GridSize int
	// Mode is Certified (default) or GridOnly.
	Mode Mode
	// Tol is the interior-point method's relative tolerance on residuals and
	// duality gap (default 1e-8).
	Tol float64
	// MaxIter bounds the interior-point iterations per solve (default 100).
	MaxIter int
}

// Projector projects coefficient vectors of one basis onto S. It is safe for
// concurrent use: Project allocates its own workspace.
type Projector struct {
	b          *basis.Basis
	target     Set
	node       Set // bounds imposed at the nodes
	guaranteed Set // bounds implied on all of D
	sH, sG     float64
	m          int
	nodes      [][]float64
	d, nf, K   int
	// rows[(j*nf+e)*K+k] = field e of φ_k at node j; fields are (h₁₁, h₁₂, h₂₂,
	// g₁, g₂) in 2-D and (h, g) in 1-D.
	rows []float64
	// tab[axis][order][j*(deg+1)+a] = ψ_a^{(order)}(node coordinate j) for the
	// tensor assembly (2-D only).
	tab   [2][3][]float64
	multi [][2]int // multi-indices (2-D)
	tol   float64
	iters int
	cones coneLayout
}

// Inflation returns the Ehlich–Zeller factor sec(nπ/(2m))^d bounding the sup of a
// degree-n polynomial on the box by its max on the tensor Chebyshev grid of m
// nodes per axis (1 for n ≤ 0). It is +Inf when n ≥ m.
func Inflation(n, m, d int) float64 {
	if n <= 0 {
		return 1
	}
	if n >= m {
		return math.Inf(1)
	}
	return math.Pow(1/math.Cos(float64(n)*math.Pi/(2*float64(m))), float64(d))
}

// ChebyshevNodes returns the m Chebyshev nodes of the first kind on [lo, hi],
// increasing.
func ChebyshevNodes(m int, lo, hi float64) []float64 {
	x := make([]float64, m)
	for j := 0; j < m; j++ {
		t := -math.Cos(float64(2*j+1) * math.Pi / float64(2*m))
		x[j] = (lo+hi)/2 + (hi-lo)/2*t
	}
	return x
}

// New returns a projector onto s for expansions in basis b (dimension 1 or 2,
// degree K ≥ 2).
func New(b *basis.Basis, s Set, opt *Options) (*Projector, error) {
	o, err := checkNew(b, s, opt)
	if err != nil {
		return nil, err
	}
	d, K := b.Dim(), b.Degree()
	p := &Projector{b: b, target: s, m: o.GridSize, d: d, K: b.Len(), tol: o.Tol, iters: o.MaxIter}
	p.nf = 5
	if d == 1 {
		p.nf = 2
	}
	total := 1
	for i := 0; i < d; i++ {
		total *= p.m
	}
	if total > 1<<18 {
		return nil, inputErrorf("grid of %d nodes per axis is too large", p.m)
	}
	if err := p.setBounds(s, o.Mode); err != nil {
		return nil, err
	}
	// A strongly convex function's gradient varies by at least α|x−y| across D,
	// so sup|∇h| ≥ α·diam/2: smaller u makes the node set (nearly) empty.
	box := b.Box()
	if p.node.U <= p.node.Alpha*box.Diameter()/2*(1+1e-6) {
		return nil, inputErrorf("empty set: every function with ∇²h ⪰ %.4g I on D has sup|∇h| ≥ %.4g ≥ u = %.4g at the nodes",
			p.node.Alpha, p.node.Alpha*box.Diameter()/2, p.node.U)
	}
	axes := make([][]float64, d)
	for i := 0; i < d; i++ {
		axes[i] = ChebyshevNodes(p.m, box.Lo[i], box.Hi[i])
	}
	p.nodes = tensorGrid(axes, p.m, total)
	w := b.NewWorkspace()
	if err := p.fieldRows(w); err != nil {
		return nil, err
	}
	if d == 2 {
		if err := p.axisTables(w, axes, K); err != nil {
			return nil, err
		}
	}
	p.cones = newConeLayout(d)
	return p, nil
}

// checkNew validates New's arguments and returns the options with their
// defaults filled in.
func checkNew(b *basis.Basis, s Set, opt *Options) (Options, error) {
	var o Options
	if b == nil {
		return o, inputErrorf("nil basis")
	}
	if err := s.Validate(); err != nil {
		return o, err
	}
	if d := b.Dim(); d > 2 {
		return o, inputErrorf("projection is implemented for dimension 1 and 2, got %d", d)
	}
	K := b.Degree()
	if K < 2 {
		return o, inputErrorf("basis degree must be ≥ 2 (a Hessian bound needs quadratic terms), got %d", K)
	}
	if opt != nil {
		o = *opt
	}
	if o.GridSize == 0 {
		o.GridSize = max(3*K, 4)
	}
	if o.GridSize < K {
		return o, inputErrorf("grid needs at least K = %d nodes per axis, got %d", K, o.GridSize)
	}
	if o.Tol == 0 {
		o.Tol = 1e-8
	}
	if !(o.Tol > 0 && o.Tol < 1e-3) {
		return o, inputErrorf("tolerance must be in (0, 1e-3), got %v", o.Tol)
	}
	if o.MaxIter == 0 {
		o.MaxIter = 100
	}
	if o.MaxIter < 0 {
		return o, inputErrorf("negative iteration limit")
	}
	return o, nil
}

// setBounds sets the node bounds and the guaranteed ones from the
// Ehlich–Zeller factors of the grid: Certified tightens S at the nodes so
// that S holds on all of D; GridOnly imposes S at the nodes and widens it
// on D.
func (p *Projector) setBounds(s Set, mode Mode) error {
	K, d := p.b.Degree(), p.d
	p.sH = Inflation(K-2, p.m, d)
	p.sG = Inflation(K-1, p.m, d)
	switch mode {
	case Certified:
		delta := (1 - 1/p.sH) * (s.Beta - s.Alpha) / 2
		p.node = Set{Alpha: s.Alpha + delta, Beta: s.Beta - delta, U: s.U / p.sG}
		p.guaranteed = s
	case GridOnly:
		p.node = s
		r := (s.Beta - s.Alpha) / 2
		p.guaranteed = Set{Alpha: s.Alpha - (p.sH-1)*r, Beta: s.Beta + (p.sH-1)*r, U: s.U * p.sG}
	default:
		return inputErrorf("unknown mode %d", mode)
	}
	return nil
}

// tensorGrid lists the total nodes of the tensor product of axes, the last
// axis fastest: j = j₁·m + j₂ (the order the 2-D tensor assembly assumes).
func tensorGrid(axes [][]float64, m, total int) [][]float64 {
	d := len(axes)
	nodes := make([][]float64, 0, total)
	idx := make([]int, d)
	for j := 0; j < total; j++ {
		x := make([]float64, d)
		for i := range x {
			x[i] = axes[i][idx[i]]
		}
		nodes = append(nodes, x)
		for i := d - 1; i >= 0; i-- {
			idx[i]++
			if idx[i] < m {
				break
			}
			idx[i] = 0
		}
	}
	return nodes
}

// fieldRows tabulates, at every node, the fields of every basis function:
// (h₁₁, h₁₂, h₂₂, g₁, g₂) in 2-D and (h, g) in 1-D, in p.rows.
func (p *Projector) fieldRows(w *basis.Workspace) error {
	d, b := p.d, p.b
	p.rows = make([]float64, len(p.nodes)*p.nf*p.K)
	grad := make([]float64, p.K*d)
	hess := make([]float64, p.K*d*d)
	for j, x := range p.nodes {
		if err := b.Derivatives(w, x, nil, grad, hess); err != nil {
			return err
		}
		for k := 0; k < p.K; k++ {
			r := p.rows[j*p.nf*p.K:]
			if d == 2 {
				r[0*p.K+k] = hess[k*4+0]
				r[1*p.K+k] = hess[k*4+1]
				r[2*p.K+k] = hess[k*4+3]
				r[3*p.K+k] = grad[k*2+0]
				r[4*p.K+k] = grad[k*2+1]
			} else {
				r[0*p.K+k] = hess[k]
				r[1*p.K+k] = grad[k]
			}
		}
	}
	return nil
}

// axisTables builds the one-dimensional tables ψ_a^{(o)}(x_j) for the 2-D
// tensor assembly, read off the basis functions ψ_a(x)·ψ_0(y) and
// ψ_0(x)·ψ_b(y) divided by the constant ψ_0 of the other axis, and the
// multi-indices of the basis.
func (p *Projector) axisTables(w *basis.Workspace, axes [][]float64, deg int) error {
	b := p.b
	box := b.Box()
	for ax := 0; ax < 2; ax++ {
		for o := 0; o < 3; o++ {
			p.tab[ax][o] = make([]float64, p.m*(deg+1))
		}
	}
	phi := make([]float64, p.K)
	grad := make([]float64, p.K*2)
	hess := make([]float64, p.K*4)
	pt := make([]float64, 2)
	for ax := 0; ax < 2; ax++ {
		psi0 := 1 / math.Sqrt(box.Hi[1-ax]-box.Lo[1-ax])
		for j := 0; j < p.m; j++ {
			pt[ax] = axes[ax][j]
			pt[1-ax] = (box.Lo[1-ax] + box.Hi[1-ax]) / 2
			if err := b.Derivatives(w, pt, phi, grad, hess); err != nil {
				return err
			}
			for k := 0; k < p.K; k++ {
				a := b.MultiIndex(k)
				if a[1-ax] != 0 {
					continue
				}
				n := a[ax]
				p.tab[ax][0][j*(deg+1)+n] = phi[k] / psi0
				p.tab[ax][1][j*(deg+1)+n] = grad[k*2+ax] / psi0
				p.tab[ax][2][j*(deg+1)+n] = hess[(k*2+ax)*2+ax] / psi0
			}
		}
	}
	p.multi = make([][2]int, p.K)
	for k := range p.multi {
		a := b.MultiIndex(k)
		p.multi[k] = [2]int{a[0], a[1]}
	}
	return nil
}

// Target is the set S the projector was built for.
func (p *Projector) Target() Set { return p.target }

// NodeBounds are the bounds imposed at the grid nodes.
func (p *Projector) NodeBounds() Set { return p.node }

// Guaranteed are the bounds every output satisfies on all of D (S itself in
// Certified mode; S widened by the Ehlich–Zeller margins in GridOnly mode).
func (p *Projector) Guaranteed() Set { return p.guaranteed }

// InflationFactors returns (s_H, s_G), the Ehlich–Zeller factors of the grid
// for the Hessian (degree K−2) and gradient (degree K−1) polynomials.
func (p *Projector) InflationFactors() (sH, sG float64) { return p.sH, p.sG }

// Nodes returns the grid nodes (shared; do not modify).
func (p *Projector) Nodes() [][]float64 { return p.nodes }

// GridSize is the number of nodes per axis.
func (p *Projector) GridSize() int { return p.m }

// Info reports what Project did.
type Info struct {
	// Moved is false when the input already satisfied the node constraints.
	Moved bool
	// Rounds of the active-set loop, and total interior-point iterations.
	Rounds, Iterations int
	// ActiveNodes is the number of nodes whose constraints were imposed.
	ActiveNodes int
	// Distance is ‖c − c̃‖₂, the L²(D) distance moved.
	Distance float64
	// DistanceBound bounds ‖c − c*‖₂ for the exact projection c* onto the node
	// set shrunk by the solver's relative margin 1e-6 (weak duality).
	DistanceBound float64
}

// checkCoef validates a coefficient vector.
func (p *Projector) checkCoef(c []float64) error {
	if len(c) != p.K {
		return inputErrorf("got %d coefficients, basis has %d", len(c), p.K)
	}
	for k, v := range c {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return inputErrorf("coefficient %d is not finite: %v", k, v)
		}
	}
	return nil
}

// fields writes the nf fields of h_c at node j into f.
func (p *Projector) fields(j int, c, f []float64) {
	K := p.K
	base := j * p.nf * K
	for e := 0; e < p.nf; e++ {
		row := p.rows[base+e*K : base+(e+1)*K]
		s := 0.0
		for k, v := range row {
			s += v * c[k]
		}
		f[e] = s
	}
}

// violation returns how far h_c violates the node bounds at node j, relative to
// their scale (≤ 0 when satisfied).
func (p *Projector) violation(j int, c, f []float64) float64 {
	p.fields(j, c, f)
	var lmin, lmax, gn float64
	if p.d == 2 {
		mean := (f[0] + f[2]) / 2
		rad := math.Hypot((f[0]-f[2])/2, f[1])
		lmin, lmax = mean-rad, mean+rad
		gn = math.Hypot(f[3], f[4])
	} else {
		lmin, lmax, gn = f[0], f[0], math.Abs(f[1])
	}
	r := (p.node.Beta - p.node.Alpha) / 2
	v := math.Max((p.node.Alpha-lmin)/r, (lmax-p.node.Beta)/r)
	return math.Max(v, (gn-p.node.U)/p.node.U)
}

// Contains reports whether h_c satisfies the node constraints, i.e. whether
// Project would return c unchanged. It returns an error for malformed c.
func (p *Projector) Contains(c []float64) (bool, error) {
	if err := p.checkCoef(c); err != nil {
		return false, err
	}
	f := make([]float64, p.nf)
	for j := range p.nodes {
		if p.violation(j, c, f) > 0 {
			return false, nil
		}
	}
	return true, nil
}

// Project returns the L² projection of the expansion with coefficients c onto
// the node-constrained set (a subset of S in Certified mode).
func (p *Projector) Project(c []float64) ([]float64, Info, error) {
	var info Info
	if err := p.checkCoef(c); err != nil {
		return nil, info, err
	}
	f := make([]float64, p.nf)
	inSet := make([]bool, len(p.nodes))
	var work []int
	for j := range p.nodes {
		if p.violation(j, c, f) > 0 {
			work = append(work, j)
			inSet[j] = true
		}
	}
	if len(work) == 0 {
		return append([]float64(nil), c...), info, nil
	}
	info.Moved = true
	// Once a large fraction of nodes is involved, solve on the full grid (whose
	// system assembles fastest through the tensor structure in 2-D).
	full := func() {
		work = work[:0]
		for j := range p.nodes {
			work = append(work, j)
			inSet[j] = true
		}
	}
	if 4*len(work) > len(p.nodes) {
		full()
	}
	for {
		info.Rounds++
		x, bound, it, err := p.solve(c, work)
		info.Iterations += it
		if err != nil {
			return nil, info, err
		}
		added := 0
		for j := range p.nodes {
			if !inSet[j] && p.violation(j, x, f) > 0 {
				work = append(work, j)
				inSet[j] = true
				added++
			}
		}
		if added == 0 {
			for _, j := range work {
				if p.violation(j, x, f) > 0 {
					return nil, info, fmt.Errorf("%w: node constraint violated after the interior-point solve", ErrNotConverged)
				}
			}
			info.ActiveNodes = len(work)
			d := 0.0
			for k := range x {
				d += (x[k] - c[k]) * (x[k] - c[k])
			}
			info.Distance = math.Sqrt(d)
			info.DistanceBound = bound
			return x, info, nil
		}
		if 4*len(work) > len(p.nodes) {
			full()
		}
	}
}
