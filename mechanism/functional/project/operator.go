package project

// The constraint operator G of the interior-point projection: G x = −T·A_W x
// maps coefficients to the cone-space values at the working nodes, through the
// precomputed field rows or, on the full 2-D grid, the tensor structure.

import ()

// applyG writes G x = −T·A_W x into out (length R).
func (st *ipmState) applyG(x, out []float64) {
	p := st.p
	l := p.cones
	st.scr.f = grow(st.scr.f, p.nf)
	f := st.scr.f
	var all []float64
	if st.full() {
		all = p.allFields(x, st.scr)
	}
	for a, j := range st.work {
		if all != nil {
			copy(f, all[j*p.nf:(j+1)*p.nf])
		} else {
			p.fields(j, x, f)
		}
		o := out[a*l.nr : (a+1)*l.nr]
		if p.d == 2 { // the rows of T written out (see newConeLayout)
			o = o[:9]
			m, dh := (f[0]+f[2])/2, (f[0]-f[2])/2
			o[0], o[1], o[2] = -m, -dh, -f[1]
			o[3], o[4], o[5] = m, -dh, -f[1]
			o[6], o[7], o[8] = 0, -f[3], -f[4]
			continue
		}
		for r := 0; r < l.nr; r++ {
			v := 0.0
			for e, t := range l.T[r] {
				v += t * f[e]
			}
			o[r] = -v
		}
	}
}

// applyGt writes Gᵀ z = −Σ_j A_jᵀ Tᵀ z_j into out (length K).
func (st *ipmState) applyGt(z, out []float64) {
	p := st.p
	l := p.cones
	K := p.K
	for k := range out {
		out[k] = 0
	}
	st.scr.f = grow(st.scr.f, p.nf)
	f := st.scr.f
	var all []float64
	if st.full() {
		st.scr.fieldsT = grow(st.scr.fieldsT, len(p.nodes)*p.nf)
		all = st.scr.fieldsT
	}
	for a, j := range st.work {
		zj := z[a*l.nr : (a+1)*l.nr]
		if p.d == 2 { // −Tᵀ z written out
			zj = zj[:9]
			f[0] = -(zj[0] + zj[1] - zj[3] + zj[4]) / 2
			f[1] = -(zj[2] + zj[5])
			f[2] = -(zj[0] - zj[1] - zj[3] - zj[4]) / 2
			f[3], f[4] = -zj[7], -zj[8]
		} else {
			for e := range f {
				v := 0.0
				for r := 0; r < l.nr; r++ {
					v += l.T[r][e] * zj[r]
				}
				f[e] = -v
			}
		}
		if all != nil {
			copy(all[j*p.nf:], f)
			continue
		}
		base := j * p.nf * K
		for e := 0; e < p.nf; e++ {
			if f[e] == 0 {
				continue
			}
			row := p.rows[base+e*K : base+(e+1)*K]
			for k, v := range row {
				out[k] += f[e] * v
			}
		}
	}
	if all != nil {
		p.allFieldsT(all, out, st.scr)
	}
}

// full reports whether the working set is the whole 2-D tensor grid.
func (st *ipmState) full() bool { return st.p.d == 2 && len(st.work) == len(st.p.nodes) }

// allFields returns the fields of h_x at every node of the 2-D grid
// (node-major, nf per node) through the tensor structure: field e on the grid
// is U_e C V_eᵀ, C[a][b] the coefficient of ψ_a(x)ψ_b(y).
func (p *Projector) allFields(x []float64, scr *scratch) []float64 {
	m := p.m
	D := p.b.Degree() + 1
	scr.C = grow(scr.C, D*D)
	C := scr.C
	for k, ab := range p.multi {
		C[ab[0]*D+ab[1]] = x[k]
	}
	scr.fields = grow(scr.fields, m*m*p.nf)
	out := scr.fields
	scr.Y = grow(scr.Y, D*m)
	Y := scr.Y // Y = C V_eᵀ
	for e := 0; e < p.nf; e++ {
		U, V := p.tab[0][fieldOrders[e][0]], p.tab[1][fieldOrders[e][1]]
		for a := 0; a < D; a++ {
			for j2 := 0; j2 < m; j2++ {
				v := V[j2*D : j2*D+D-a]
				c := C[a*D : a*D+D-a]
				s := 0.0
				for b := range c {
					s += c[b] * v[b]
				}
				Y[a*m+j2] = s
			}
		}
		for j1 := 0; j1 < m; j1++ {
			u := U[j1*D : (j1+1)*D]
			for j2 := 0; j2 < m; j2++ {
				s := 0.0
				for a := 0; a < D; a++ {
					s += u[a] * Y[a*m+j2]
				}
				out[(j1*m+j2)*p.nf+e] = s
			}
		}
	}
	return out
}

// allFieldsT adds the adjoint of allFields applied to F (node-major fields) to
// out: out[k] += Σ_j Σ_e F[j][e] A_j[e][k], via U_eᵀ F_e V_e.
func (p *Projector) allFieldsT(F, out []float64, scr *scratch) {
	m := p.m
	D := p.b.Degree() + 1
	scr.Y = grow(scr.Y, D*m)
	Z := scr.Y // Z = U_eᵀ F_e
	scr.C = grow(scr.C, D*D)
	C := scr.C
	for e := 0; e < p.nf; e++ {
		U, V := p.tab[0][fieldOrders[e][0]], p.tab[1][fieldOrders[e][1]]
		for i := range Z {
			Z[i] = 0
		}
		for j1 := 0; j1 < m; j1++ {
			u := U[j1*D : (j1+1)*D]
			for j2 := 0; j2 < m; j2++ {
				f := F[(j1*m+j2)*p.nf+e]
				if f == 0 {
					continue
				}
				for a, uv := range u {
					Z[a*m+j2] += uv * f
				}
			}
		}
		for a := 0; a < D; a++ {
			z := Z[a*m : (a+1)*m]
			for b := 0; b < D-a; b++ {
				s := 0.0
				for j2, zv := range z {
					s += zv * V[j2*D+b]
				}
				C[a*D+b] += s
			}
		}
	}
	for k, ab := range p.multi {
		out[k] += C[ab[0]*D+ab[1]]
	}
}
