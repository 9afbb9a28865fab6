package workload

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/dpsolve/dpsolve/internal/inputerr"
)

// Shape is what a workload specification will cost, known before anything
// is built, so a command can refuse a size that would not fit in memory
// rather than die allocating it. Sizes are float64 because a specification
// may name sizes far beyond int (m=100000000000 or n = 2^40).
type Shape struct {
	// N is the domain size and M the number of queries.
	N, M float64
	// GenBytes is what building the workload allocates besides its Gram
	// matrix (the random families store their queries).
	GenBytes float64
	// ClosedForm reports that answers are computed without forming W;
	// otherwise answering forms the M×N matrix.
	ClosedForm bool
}

// ParseShape returns the Shape of Parse(spec, n) without building the
// workload. It rejects what Parse rejects about the syntax; sizes it only
// measures.
func ParseShape(spec string, n int) (Shape, error) {
	name, kv, err := splitSpec(spec, n)
	if err != nil {
		return Shape{}, err
	}
	p := specParams{spec: spec, kv: kv}
	nf := float64(n)
	sh := Shape{N: nf}
	switch name {
	case "identity", "prefix":
		sh.M, sh.ClosedForm = nf, true
	case "total":
		sh.M, sh.ClosedForm = 1, true
	case "allrange":
		sh.M, sh.ClosedForm = nf*(nf+1)/2, true
	case "width", "widthk", "widthkrange":
		k, err := p.intReq("k")
		if err != nil {
			return Shape{}, err
		}
		sh.M, sh.ClosedForm = max(1, nf-float64(k)+1), true
	case "wrange":
		m, err := p.intReq("m")
		if err != nil {
			return Shape{}, err
		}
		// Lo and Hi (two ints per range) and the (n+1)² difference array
		// of the Gram.
		sh.M, sh.GenBytes = float64(m), 16*float64(m)+8*(nf+1)*(nf+1)
	case "wdiscrete":
		m, err1 := p.intReq("m")
		pneg, err2 := p.float("pneg", 0.01)
		ppos, err3 := p.float("ppos", 0.01)
		if err := firstErr(err1, err2, err3); err != nil {
			return Shape{}, err
		}
		// Expected nonzeros m·n·(pneg+ppos), 9 bytes each (int + int8),
		// plus two slice headers per query; doubled for append's growth.
		sh.M, sh.GenBytes = float64(m), 2*(9*float64(m)*nf*(pneg+ppos)+48*float64(m))
	case "wrelated":
		m, err1 := p.intReq("m")
		s, err2 := p.int("s", max(1, min(m, n)/2))
		if err := firstErr(err1, err2); err != nil {
			return Shape{}, err
		}
		// The factors C (m×s) and B (s×n), and their product when W is
		// formed.
		sh.M, sh.GenBytes = float64(m), 8*float64(s)*(float64(m)+nf)
	case "marginals", "marginal":
		ds, err := marginalDimsFor(spec, kv, n)
		if err != nil {
			return Shape{}, err
		}
		dims, err := ParseDims(ds)
		if err != nil {
			return Shape{}, err
		}
		k, err := p.int("k", min(2, len(dims)))
		if err != nil {
			return Shape{}, err
		}
		mw, err := NewMarginals(dims, k) // stores only dims and k
		if err != nil {
			return Shape{}, err
		}
		sh.N, sh.M = float64(mw.Domain()), marginalQueries(dims, k)
	default:
		return Shape{}, inputerr.Errorf("workload", "unknown workload %q (want identity, total, prefix, allrange, width, wrange, wdiscrete, wrelated or marginals)", name)
	}
	return sh, nil
}

// marginalQueries counts the queries of all k-way marginals in float64
// (Σ over k-subsets of Π sizes), by the elementary symmetric polynomial
// recurrence, which never overflows int.
func marginalQueries(dims []int, k int) float64 {
	e := make([]float64, k+1)
	e[0] = 1
	for _, d := range dims {
		for j := k; j >= 1; j-- {
			e[j] += e[j-1] * float64(d)
		}
	}
	return e[k]
}

// splitSpec splits "name:key=value,…" into the lower-cased name and its
// parameters; ';' separates parameters as ',' does (so that a spec fits in
// a comma-separated list), and the values "n", "Kn" and "n/K" (K a
// positive integer) are resolved against the domain size n (see Parse).
func splitSpec(spec string, n int) (string, map[string]string, error) {
	name, rest, colon := strings.Cut(strings.TrimSpace(spec), ":")
	name = strings.ToLower(strings.TrimSpace(name))
	kv := map[string]string{}
	if colon && strings.TrimSpace(rest) == "" {
		return "", nil, inputerr.Errorf("workload", "empty parameter list after ':' in %q", spec)
	}
	if colon {
		for _, f := range strings.Split(strings.ReplaceAll(rest, ";", ","), ",") {
			k, v, ok := strings.Cut(f, "=")
			k = strings.ToLower(strings.TrimSpace(k))
			if !ok || k == "" {
				return "", nil, inputerr.Errorf("workload", "bad parameter %q in %q (want key=value)", f, spec)
			}
			if _, dup := kv[k]; dup {
				return "", nil, inputerr.Errorf("workload", "parameter %q given twice in %q", k, spec)
			}
			if strings.TrimSpace(v) == "" {
				return "", nil, inputerr.Errorf("workload", "parameter %q has an empty value in %q", k, spec)
			}
			r, err := relativeToN(strings.TrimSpace(v), n)
			if err != nil {
				return "", nil, inputerr.Errorf("workload", "parameter %s=%s in %q: %v", k, v, spec, err)
			}
			kv[k] = r
		}
	}
	return name, kv, nil
}

// relativeToN resolves the values "n", "Kn" and "n/K" (K a positive
// integer; n/K rounds down, at least 1) against n; other values are
// returned unchanged. A relative value needs n > 0.
func relativeToN(v string, n int) (string, error) {
	var k int
	var err error
	switch {
	case v == "n":
		k = 1
	case strings.HasPrefix(v, "n/"):
		if k, err = strconv.Atoi(v[2:]); err != nil || k <= 0 {
			return "", fmt.Errorf("the divisor in %q must be a positive integer", v)
		}
	case strings.HasSuffix(v, "n"):
		if k, err = strconv.Atoi(v[:len(v)-1]); err != nil || k <= 0 || v[0] == '+' {
			return v, nil // not a multiple of n: the parameter's own check reports it
		}
	default:
		return v, nil
	}
	if n <= 0 {
		return "", fmt.Errorf("%q is relative to the domain size, but none was given", v)
	}
	if strings.HasPrefix(v, "n/") {
		return strconv.Itoa(max(1, n/k)), nil
	}
	if k > math.MaxInt32/max(n, 1) {
		return "", fmt.Errorf("%q is too large at n = %d", v, n)
	}
	return strconv.Itoa(k * n), nil
}

// marginalDimsFor returns the dims of a marginals spec: its dims= value,
// or, when it has none and n > 0, attributes of size 4 (at most five, the
// first one larger when n is not a power of 4) whose product is n.
func marginalDimsFor(spec string, kv map[string]string, n int) (string, error) {
	if ds, ok := kv["dims"]; ok {
		return ds, nil
	}
	var dims []int
	m := n
	for n > 0 && m%4 == 0 && m > 1 && len(dims) < 5 {
		dims = append(dims, 4)
		m /= 4
	}
	if len(dims) < 2 {
		return "", inputerr.Errorf("workload", "%q needs dims= (e.g. marginals:dims=8x8x16,k=2), or n = 4^a·m with a ≥ 2 to choose them, got n = %d", spec, n)
	}
	dims[0] *= m
	s := make([]string, len(dims))
	for i, d := range dims {
		s[i] = strconv.Itoa(d)
	}
	return strings.Join(s, "x"), nil
}
