package workload

import (
	"sort"
	"strconv"

	"github.com/dpsolve/dpsolve/internal/inputerr"
)

// Parse builds a workload from a specification string and a domain size n:
//
//	identity | total | prefix | allrange        the closed-form workloads (Builtin)
//	width:k=K                                  all ranges of width K
//	wrange:m=M[,seed=S]                        M random ranges
//	wdiscrete:m=M[,pneg=P][,ppos=Q][,seed=S]   M random −1/0/+1 queries (default P = Q = 0.01)
//	wrelated:m=M[,s=R][,seed=S]                rank-R product of Gaussians (default R = max(1, min(M,n)/2))
//	marginals:dims=8x8x16[,k=K]                all K-way marginals (default K = 2, or the
//	                                           number of attributes if fewer); n is Π dims, and a
//	                                           positive n argument must agree with it
//
// The seed defaults to 1. Parameters may also be separated by ';' (so that
// a spec fits in a comma-separated list, as dpsolve bench's --workload), and
// a value may be relative to n: "n", "Kn" or "n/K" for a positive integer K
// (n/K rounded down, at least 1), e.g. wrelated:m=2n;s=n/8. marginals
// without dims at a given n take attributes of size 4 (at most five, the
// first one larger when n is not a power of 4) whose product is n, e.g.
// marginals:k=3 at n = 1024 is marginals:dims=4x4x4x4x4,k=3. Unknown names
// or keys, missing or malformed values are errors.
func Parse(spec string, n int) (Workload, error) {
	name, kv, err := splitSpec(spec, n)
	if err != nil {
		return nil, err
	}
	p := specParams{spec: spec, kv: kv}
	var w Workload
	switch name {
	case "identity", "total", "prefix", "allrange":
		if err := p.allow(); err != nil {
			return nil, err
		}
		return Builtin(name, n)
	case "width", "widthk", "widthkrange":
		k, err := p.intReq("k")
		if err != nil {
			return nil, err
		}
		if err := p.allow("k"); err != nil {
			return nil, err
		}
		return NewWidthKRange(n, k)
	case "wrange":
		m, err1 := p.intReq("m")
		seed, err2 := p.seed()
		if err := firstErr(err1, err2, p.allow("m", "seed")); err != nil {
			return nil, err
		}
		w, err = newWRangeCovering(n, m, seed)
	case "wdiscrete":
		m, err1 := p.intReq("m")
		pneg, err2 := p.float("pneg", 0.01)
		ppos, err3 := p.float("ppos", 0.01)
		seed, err4 := p.seed()
		if err := firstErr(err1, err2, err3, err4, p.allow("m", "pneg", "ppos", "seed")); err != nil {
			return nil, err
		}
		w, err = newWDiscreteCovering(n, m, pneg, ppos, seed)
	case "wrelated":
		m, err1 := p.intReq("m")
		s, err2 := p.int("s", max(1, min(m, n)/2))
		seed, err3 := p.seed()
		if err := firstErr(err1, err2, err3, p.allow("m", "s", "seed")); err != nil {
			return nil, err
		}
		w, err = NewWRelated(n, m, s, seed)
	case "marginals", "marginal":
		ds, err := marginalDimsFor(spec, kv, n)
		if err != nil {
			return nil, err
		}
		dims, err1 := ParseDims(ds)
		if err1 != nil {
			return nil, err1
		}
		k, err2 := p.int("k", min(2, len(dims)))
		if err := firstErr(err2, p.allow("dims", "k")); err != nil {
			return nil, err
		}
		mw, err := NewMarginals(dims, k)
		if err != nil {
			return nil, err
		}
		if n > 0 && n != mw.Domain() {
			return nil, inputerr.Errorf("workload", "marginals over %s have n = %d cells, but n = %d was given", ds, mw.Domain(), n)
		}
		return mw, nil
	default:
		return nil, inputerr.Errorf("workload", "unknown workload %q (want identity, total, prefix, allrange, width, wrange, wdiscrete, wrelated or marginals)", name)
	}
	if err != nil {
		return nil, err
	}
	return w, nil
}

type specParams struct {
	spec string
	kv   map[string]string
}

func (p specParams) allow(keys ...string) error {
	var bad []string
	for k := range p.kv {
		ok := false
		for _, a := range keys {
			ok = ok || a == k
		}
		if !ok {
			bad = append(bad, k)
		}
	}
	if len(bad) > 0 {
		sort.Strings(bad)
		return inputerr.Errorf("workload", "unknown parameter(s) %v in %q (allowed: %v)", bad, p.spec, keys)
	}
	return nil
}

func (p specParams) intReq(k string) (int, error) {
	if _, ok := p.kv[k]; !ok {
		return 0, inputerr.Errorf("workload", "%q needs %s=", p.spec, k)
	}
	return p.int(k, 0)
}

func (p specParams) int(k string, def int) (int, error) {
	s, ok := p.kv[k]
	if !ok {
		return def, nil
	}
	v, err := strconv.Atoi(s)
	if err != nil {
		return 0, inputerr.Errorf("workload", "%s=%q in %q is not an integer", k, s, p.spec)
	}
	return v, nil
}

func (p specParams) float(k string, def float64) (float64, error) {
	s, ok := p.kv[k]
	if !ok {
		return def, nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, inputerr.Errorf("workload", "%s=%q in %q is not a number", k, s, p.spec)
	}
	return v, nil
}

func (p specParams) seed() (uint64, error) {
	s, ok := p.kv["seed"]
	if !ok {
		return 1, nil
	}
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, inputerr.Errorf("workload", "seed=%q in %q is not a non-negative integer", s, p.spec)
	}
	return v, nil
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}
