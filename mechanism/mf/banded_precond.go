package mf

import "math"

// columnBlocks preconditions the banded Newton system by its diagonal
// blocks, one per column j of the band (the unknowns u_ij, j < i < j+b, of
// D = Σ u_ij (e_i e_jᵀ + e_j e_iᵀ)): with P = X⁻¹ the Hessian's bilinear
// form is
//
//	h(E_ij, E_kl) = 2·(P_jk M_li + P_jl M_ki + P_ik M_lj + P_il M_kj),
//
// so within column j (l = j) the block is
// 2·(P_jk M_ji + P_jj M_ki + P_ik M_jj + P_ij M_kj). A Jacobi
// preconditioner keeps only its diagonal; the blocks also capture the
// strong coupling of entries sharing a column.
type columnPrecond struct {
	n, bw  int
	blocks [][]float64 // lower Cholesky factors, size m_j = min(bw−1, n−1−j)
}

func (s *bandSolver) columnBlocks() *columnPrecond {
	n, bw := s.n, s.bw
	p, m := s.xinv.Data, s.m.Data
	pc := &columnPrecond{n: n, bw: bw, blocks: make([][]float64, n)}
	for j := 0; j < n; j++ {
		sz := min(bw-1, n-1-j)
		if sz <= 0 {
			continue
		}
		blk := make([]float64, sz*sz)
		for a := 0; a < sz; a++ {
			i := j + 1 + a
			for c := 0; c <= a; c++ {
				k := j + 1 + c
				v := 2 * (p[j*n+k]*m[j*n+i] + p[j*n+j]*m[k*n+i] + p[i*n+k]*m[j*n+j] + p[i*n+j]*m[k*n+j])
				blk[a*sz+c], blk[c*sz+a] = v, v
			}
		}
		if !lowerChol(blk, sz) { // fall back on the diagonal
			for a := 0; a < sz; a++ {
				i := j + 1 + a
				d := 2 * (p[i*n+i]*m[j*n+j] + p[j*n+j]*m[i*n+i] + 2*p[i*n+j]*m[i*n+j])
				for c := 0; c < sz; c++ {
					blk[a*sz+c] = 0
				}
				blk[a*sz+a] = math.Sqrt(math.Max(d, 1e-300))
			}
		}
		pc.blocks[j] = blk
	}
	return pc
}

// apply sets z = B⁻¹(2r) on the band's lower entries, mirrored (r and z
// are full symmetric n×n matrices, zero off the band).
func (pc *columnPrecond) apply(r, z []float64) {
	n := pc.n
	for j, l := range pc.blocks {
		sz := int(math.Sqrt(float64(len(l))))
		if sz == 0 {
			continue
		}
		x := make([]float64, sz)
		for a := 0; a < sz; a++ {
			x[a] = 2 * r[(j+1+a)*n+j]
		}
		lowerCholSolve(l, sz, x)
		for a := 0; a < sz; a++ {
			i := j + 1 + a
			z[i*n+j], z[j*n+i] = x[a], x[a]
		}
	}
}
