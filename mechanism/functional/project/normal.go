package project

// The normal matrix N = I + Gᵀ W⁻² G of the interior-point projection's Newton
// systems: per-node blocks B_j, their assembly (dense, or through the 2-D
// tensor structure on the full grid) and its Cholesky factorization.

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// nodeBlocks returns B_j = Σ_cones T_cᵀ W_c⁻² T_c (nf×nf) for every working
// node, or TᵀT when identity is set (the initialization).
func (st *ipmState) nodeBlocks(identity bool) []float64 {
	p := st.p
	l := p.cones
	nf := p.nf
	st.scr.B = grow(st.scr.B, len(st.work)*nf*nf)
	B := st.scr.B
	var wm [9]float64
	// Nonzero pattern of T per cone row, to skip zero products.
	nc := len(l.dims)
	for a := range st.work {
		Bj := B[a*nf*nf : (a+1)*nf*nf]
		if p.d == 2 && !identity && !st.generic {
			st.nodeBlock2(a, Bj)
			continue
		}
		off := 0
		for c, n := range l.dims {
			if identity {
				for i := 0; i < n*n; i++ {
					wm[i] = 0
				}
				for i := 0; i < n; i++ {
					wm[i*n+i] = 1
				}
			} else {
				st.sc[a*nc+c].invSquare(wm[:n*n])
			}
			rows := l.T[off : off+n]
			for r, tr := range rows {
				for q, tq := range rows {
					w := wm[r*n+q]
					for e, te := range tr {
						if te == 0 {
							continue
						}
						we := te * w
						be := Bj[e*nf : (e+1)*nf]
						for f, tf := range tq {
							be[f] += we * tf
						}
					}
				}
			}
			off += n
		}
	}
	return B
}

// nodeBlock2 writes B_j (5×5) for a 2-D node: the two Hessian cones act on
// (h₁₁, h₁₂, h₂₂) through s = (±(h₁₁+h₂₂)/2, (h₁₁−h₂₂)/2, h₁₂) + const, the
// gradient cone on (g₁, g₂) through its last two rows.
func (st *ipmState) nodeBlock2(a int, Bj []float64) {
	var w [9]float64
	Bj = Bj[:25]
	for c := 0; c < 2; c++ {
		st.sc[a*3+c].invSquare(w[:])
		sg := 1.0
		if c == 1 {
			sg = -1
		}
		// Rows of T_c as vectors over (h₁₁, h₁₂, h₂₂): t0 = sg·(½, 0, ½),
		// t1 = (½, 0, −½), t2 = (0, 1, 0). B += Σ_rq w_rq t_r t_qᵀ.
		t := [3][3]float64{{sg / 2, 0, sg / 2}, {0.5, 0, -0.5}, {0, 1, 0}}
		for r := 0; r < 3; r++ {
			for q := 0; q < 3; q++ {
				wr := w[r*3+q]
				for e := 0; e < 3; e++ {
					te := wr * t[r][e]
					if te == 0 {
						continue
					}
					for f := 0; f < 3; f++ {
						Bj[e*5+f] += te * t[q][f]
					}
				}
			}
		}
	}
	st.sc[a*3+2].invSquare(w[:])
	Bj[3*5+3], Bj[3*5+4] = w[1*3+1], w[1*3+2]
	Bj[4*5+3], Bj[4*5+4] = w[2*3+1], w[2*3+2]
}

// factor assembles and factors N = I + Σ_j A_jᵀ B_j A_j.
func (st *ipmState) factor(B []float64) error {
	p := st.p
	K := p.K
	st.scr.N = grow(st.scr.N, K*K)
	N := st.scr.N
	if p.d == 2 && len(st.work) == len(p.nodes) {
		p.assembleTensor(B, N, st.scr)
	} else {
		p.assembleDense(st.work, B, N)
	}
	if st.scr.sym == nil {
		st.scr.sym = mat.NewSymDense(K, nil)
	}
	S := st.scr.sym
	for i := 0; i < K; i++ {
		for j := i; j < K; j++ {
			v := N[i*K+j]
			if i == j {
				v++
			}
			S.SetSym(i, j, v)
		}
	}
	if !st.chol.Factorize(S) {
		return fmt.Errorf("%w: Newton system is not positive definite", ErrNotConverged)
	}
	return nil
}

// assembleDense adds Σ_j A_jᵀ B_j A_j (upper triangle) over the given nodes.
func (p *Projector) assembleDense(work []int, B, N []float64) {
	K, nf := p.K, p.nf
	BA := make([]float64, nf*K)
	for a, j := range work {
		Bj := B[a*nf*nf : (a+1)*nf*nf]
		base := j * nf * K
		for e := 0; e < nf; e++ {
			o := BA[e*K : (e+1)*K]
			for k := range o {
				o[k] = 0
			}
			for f := 0; f < nf; f++ {
				w := Bj[e*nf+f]
				if w == 0 {
					continue
				}
				row := p.rows[base+f*K : base+(f+1)*K]
				for k, v := range row {
					o[k] += w * v
				}
			}
		}
		for e := 0; e < nf; e++ {
			row := p.rows[base+e*K : base+(e+1)*K]
			be := BA[e*K : (e+1)*K]
			for k := 0; k < K; k++ {
				v := row[k]
				if v == 0 {
					continue
				}
				nk := N[k*K : (k+1)*K]
				for l := k; l < K; l++ {
					nk[l] += v * be[l]
				}
			}
		}
	}
}

// fieldOrders are the (x, y) derivative orders of the 2-D fields
// (h₁₁, h₁₂, h₂₂, g₁, g₂).
var fieldOrders = [5][2]int{{2, 0}, {1, 1}, {0, 2}, {1, 0}, {0, 1}}

// assembleTensor adds Σ_j A_jᵀ B_j A_j (upper triangle) over the full 2-D tensor
// grid using A_j[e][k] = U_e(x_{j₁}, a_k)·V_e(y_{j₂}, b_k). For each field pair
// (e, f), T[j₁][b][b′] = Σ_{j₂} (B_j[e][f] + B_j[f][e]) V_e[j₂][b] V_f[j₂][b′]
// (e ≠ f; B_j[e][e] for e = f); pairs whose x-tables (U_e, U_f) coincide share
// T, and then N[k][l] += Σ_{j₁} U_e[j₁][a_k] U_f[j₁][a_l] T[j₁][b_k][b_l] once per
// x-table pair. The result is symmetrized: the e ≠ f terms hold
// A_eᵀ diag(B_ef + B_fe) A_f, whose symmetric part is A_eᵀB_efA_f + A_fᵀB_feA_e.
func (p *Projector) assembleTensor(B, N []float64, scr *scratch) {
	m, K, nf := p.m, p.K, p.nf
	D := p.b.Degree() + 1
	scr.full = grow(scr.full, K*K)
	full := scr.full
	scr.M2 = grow(scr.M2, D*D)
	M2 := scr.M2
	// Group the field pairs (e ≤ f, Hessian–Hessian or gradient–gradient) by
	// their x derivative orders.
	type pair struct{ e, f int }
	groups := map[[2]int][]pair{}
	var keys [][2]int
	for e := 0; e < nf; e++ {
		for f := e; f < nf; f++ {
			if e < 3 && f >= 3 {
				continue // Hessian and gradient cones never couple
			}
			key := [2]int{fieldOrders[e][0], fieldOrders[f][0]}
			if _, ok := groups[key]; !ok {
				keys = append(keys, key)
			}
			groups[key] = append(groups[key], pair{e, f})
		}
	}
	scr.T = grow(scr.T, m*D*D)
	T := scr.T
	for _, key := range keys {
		for i := range T {
			T[i] = 0
		}
		for _, pr := range groups[key] {
			e, f := pr.e, pr.f
			Ve, Vf := p.tab[1][fieldOrders[e][1]], p.tab[1][fieldOrders[f][1]]
			for j1 := 0; j1 < m; j1++ {
				Tj := T[j1*D*D : (j1+1)*D*D]
				for j2 := 0; j2 < m; j2++ {
					bj := B[(j1*m+j2)*nf*nf:]
					w := bj[e*nf+f]
					if e != f {
						w += bj[f*nf+e]
					}
					if w == 0 {
						continue
					}
					ve := Ve[j2*D : (j2+1)*D]
					vf := Vf[j2*D : (j2+1)*D]
					for b, vb := range ve {
						c := w * vb
						row := Tj[b*D : (b+1)*D]
						row = row[:len(vf)]
						for b2, v := range vf {
							row[b2] += c * v
						}
					}
				}
			}
		}
		Ue, Uf := p.tab[0][key[0]], p.tab[0][key[1]]
		for k := 0; k < K; k++ {
			ak, bk := p.multi[k][0], p.multi[k][1]
			for i := range M2 {
				M2[i] = 0
			}
			for j1 := 0; j1 < m; j1++ {
				u := Ue[j1*D+ak]
				if u == 0 {
					continue
				}
				trow := T[j1*D*D+bk*D : j1*D*D+(bk+1)*D]
				uf := Uf[j1*D : (j1+1)*D]
				for a2, ufv := range uf {
					c := u * ufv
					n := D - a2
					mrow := M2[a2*D : a2*D+n]
					tr := trow[:n]
					mrow = mrow[:len(tr)]
					for b2, t := range tr {
						mrow[b2] += c * t
					}
				}
			}
			fk := full[k*K : (k+1)*K]
			for l, ab := range p.multi {
				fk[l] += M2[ab[0]*D+ab[1]]
			}
		}
	}
	for k := 0; k < K; k++ {
		for l := k; l < K; l++ {
			N[k*K+l] += (full[k*K+l] + full[l*K+k]) / 2
		}
	}
}

func (st *ipmState) cholSolve(rhs, out []float64) {
	var v mat.VecDense
	if err := st.chol.SolveVecTo(&v, mat.NewVecDense(len(rhs), rhs)); err != nil {
		for i := range out {
			out[i] = math.NaN()
		}
		return
	}
	copy(out, v.RawVector().Data)
}
