package workload

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/internal/inputerr"
	"github.com/dpsolve/dpsolve/internal/resources"
	"github.com/dpsolve/dpsolve/kron"
	"github.com/dpsolve/dpsolve/model/domain"
)

// DenseKron is a multi-attribute workload (a *domain.Kron) on a domain
// small enough for the single-histogram tools: it is a Workload with a
// dense Gram matrix, so a spec file is solved, compared, answered and
// released by the same commands and functions as any other workload. Load
// returns one for a Source with a SpecFile; FromKron makes one from any
// *domain.Kron. Its Gram is built structurally (Σⱼ wⱼ²·⊗ᵢ Vᵢⱼ, entry by
// entry from the per-attribute Grams), its answers by Kronecker products
// applied factor by factor, without the query matrix; Matrix forms W for
// the tools that need it. A domain whose dense Gram would not fit in memory
// is refused: plan it with package plan (dpsolve plan), which never forms
// the n×n Gram.
type DenseKron struct {
	k    *domain.Kron
	name string
}

// FromKron returns k as a DenseKron named label (empty: k.Name()). It
// refuses, with an error wrapping ErrInput that names the cell count, a
// domain whose n×n Gram does not fit in the memory available to the
// process (internal/resources: the cgroup limit, physical memory or
// DPSOLVE_MEMORY_LIMIT).
func FromKron(label string, k *domain.Kron) (*DenseKron, error) {
	if k == nil {
		return nil, inputerr.Errorf("workload", "nil workload")
	}
	name := label
	if name == "" {
		name = k.Name()
	}
	cells := k.Cells()
	n := float64(cells)
	if err := checkN(cells); err != nil {
		return nil, inputerr.Errorf("workload", "%s: the domain has %d cells, too many for a dense Gram matrix: plan it with dpsolve plan --spec, which never forms it", name, cells)
	}
	if err := resources.Check(8*n*n, resources.Available(), fmt.Sprintf("the dense %d×%d Gram matrix", cells, cells)); err != nil {
		return nil, inputerr.Errorf("workload", "%s: the domain has %d cells: %v; plan it with dpsolve plan --spec, which never forms the n×n Gram", name, cells, err)
	}
	// Every block has an explicit query matrix (domain.QuerySet has one),
	// so Matrix and Answer cannot fail later.
	return &DenseKron{k: k, name: name}, nil
}

// Kron returns the structured workload.
func (d *DenseKron) Kron() *domain.Kron { return d.k }

// Name returns the name given to FromKron (for Load: "spec:" and the file).
func (d *DenseKron) Name() string { return d.name }

// Domain returns the number of cells.
func (d *DenseKron) Domain() int { return d.k.Cells() }

// Queries returns the number of queries of all terms.
func (d *DenseKron) Queries() int { return d.k.Queries() }

// Gram returns V = Σⱼ wⱼ²·⊗ᵢ Vᵢⱼ (n×n), a new matrix on every call. Entry
// (r, c) of a Kronecker product is the product of the factors' entries at
// the attribute values of cells r and c, so V is accumulated in place,
// product by product, in one n×n array (no n×n temporary per product).
func (d *DenseKron) Gram() *mat.SymDense {
	k := d.k
	n := k.Cells()
	attrs := k.Attributes()
	// vals[r·a + i] is attribute i's value in cell r (row-major, the first
	// attribute slowest).
	a := len(attrs)
	vals := make([]int, n*a)
	for r := 0; r < n; r++ {
		rem := r
		for i := a - 1; i >= 0; i-- {
			vals[r*a+i] = rem % attrs[i].Size
			rem /= attrs[i].Size
		}
	}
	v := mat.NewSymDense(n, nil)
	raw := v.RawSymmetric()
	gs := make([]mat.RawSymmetricer, a)
	for _, p := range k.Products() {
		w2 := k.Weight2(p)
		if w2 == 0 {
			continue
		}
		for i, b := range p.Blocks {
			gs[i] = b.Gram()
		}
		grams := make([]blasSym, a)
		for i := range gs {
			g := gs[i].RawSymmetric()
			grams[i] = blasSym{data: g.Data, stride: g.Stride}
		}
		for r := 0; r < n; r++ {
			vr := vals[r*a : r*a+a]
			row := raw.Data[r*raw.Stride:]
			for c := r; c < n; c++ {
				vc := vals[c*a : c*a+a]
				e := w2
				for i := 0; i < a && e != 0; i++ {
					e *= grams[i].at(vr[i], vc[i])
				}
				row[c] += e
			}
		}
	}
	return v
}

// blasSym reads a symmetric matrix stored in its upper triangle.
type blasSym struct {
	data   []float64
	stride int
}

func (s blasSym) at(i, j int) float64 {
	if i > j {
		i, j = j, i
	}
	return s.data[i*s.stride+j]
}

// Matrix returns the query matrix W (queries × cells) with the weights
// applied, rows in term and product order (as domain.Kron.DenseMatrix). It
// may be large: a command checks its memory first.
func (d *DenseKron) Matrix() *mat.Dense {
	w, err := d.k.DenseMatrix(math.MaxInt)
	if err != nil {
		// Every block has an explicit matrix (domain.QuerySet) and no
		// size is over the limit math.MaxInt.
		panic(err)
	}
	return w
}

// Answer returns W·x in Matrix's row order: each product's answers are
// its Kronecker factors applied to x one attribute at a time (package
// kron), scaled by the term's weight, without forming W.
func (d *DenseKron) Answer(x []float64) ([]float64, error) {
	if err := checkHistogram(d, x); err != nil {
		return nil, err
	}
	out := make([]float64, 0, d.k.Queries())
	terms := d.k.Terms()
	for _, p := range d.k.Products() {
		fs := make([]mat.Matrix, len(p.Blocks))
		for i, b := range p.Blocks {
			m, err := b.Matrix()
			if err != nil {
				return nil, err
			}
			fs[i] = m
		}
		kp, err := kron.New(fs...)
		if err != nil {
			return nil, err
		}
		y, err := kp.MulVec(x)
		if err != nil {
			return nil, err
		}
		w := terms[p.Term].Weight
		for _, v := range y {
			out = append(out, w*v)
		}
	}
	return out, nil
}
