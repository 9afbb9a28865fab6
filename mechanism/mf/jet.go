package mf

import "math"

// jet is a value with its exact gradient and Hessian in p parameters
// (forward-mode automatic differentiation to second order). The BLT
// optimizer uses jets only for the O(d²) map from its 2d unconstrained
// parameters to the decays and scales; the O(n) sums carry their
// derivatives by hand (bltLossDerivs).
type jet struct {
	v float64
	g []float64 // p
	h []float64 // p×p, row-major, symmetric
}

func newJet(p int, v float64) jet {
	return jet{v: v, g: make([]float64, p), h: make([]float64, p*p)}
}

// jetVar is parameter i with value v.
func jetVar(p, i int, v float64) jet {
	j := newJet(p, v)
	j.g[i] = 1
	return j
}

func (a jet) p() int { return len(a.g) }

func jadd(a, b jet) jet {
	c := newJet(a.p(), a.v+b.v)
	for i := range c.g {
		c.g[i] = a.g[i] + b.g[i]
	}
	for i := range c.h {
		c.h[i] = a.h[i] + b.h[i]
	}
	return c
}

func jneg(a jet) jet { return jscale(a, -1) }

func jscale(a jet, s float64) jet {
	c := newJet(a.p(), s*a.v)
	for i := range c.g {
		c.g[i] = s * a.g[i]
	}
	for i := range c.h {
		c.h[i] = s * a.h[i]
	}
	return c
}

func jmul(a, b jet) jet {
	p := a.p()
	c := newJet(p, a.v*b.v)
	for i := range c.g {
		c.g[i] = a.v*b.g[i] + b.v*a.g[i]
	}
	for i := 0; i < p; i++ {
		for k := 0; k < p; k++ {
			c.h[i*p+k] = a.v*b.h[i*p+k] + b.v*a.h[i*p+k] + a.g[i]*b.g[k] + b.g[i]*a.g[k]
		}
	}
	return c
}

// junary is f(a) for f with f(a.v) = f0, f′ = f1, f″ = f2.
func junary(a jet, f0, f1, f2 float64) jet {
	p := a.p()
	c := newJet(p, f0)
	for i := range c.g {
		c.g[i] = f1 * a.g[i]
	}
	for i := 0; i < p; i++ {
		for k := 0; k < p; k++ {
			c.h[i*p+k] = f1*a.h[i*p+k] + f2*a.g[i]*a.g[k]
		}
	}
	return c
}

func jexp(a jet) jet { e := math.Exp(a.v); return junary(a, e, e, e) }

// jexpm1 is exp(a) − 1, accurate for small a.
func jexpm1(a jet) jet { e := math.Exp(a.v); return junary(a, math.Expm1(a.v), e, e) }

func jinv(a jet) jet { return junary(a, 1/a.v, -1/(a.v*a.v), 2/(a.v*a.v*a.v)) }

func jdiv(a, b jet) jet { return jmul(a, jinv(b)) }

// jlog1p is log(1 + a).
func jlog1p(a jet) jet {
	x := 1 + a.v
	return junary(a, math.Log1p(a.v), 1/x, -1/(x*x))
}

func jlog(a jet) jet { return junary(a, math.Log(a.v), 1/a.v, -1/(a.v*a.v)) }

// jaddc is a + c for a constant c.
func jaddc(a jet, c float64) jet {
	b := jscale(a, 1)
	b.v += c
	return b
}

// jpowi is a^k for an integer k ≥ 0, by exp(k·log a) for a > 0.
func jexpScaled(a jet, k float64) jet { return jexp(jscale(a, k)) }
