package bench

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/dpsolve/dpsolve/mechanism/workload"
)

// Families are the workload families of docs/performance.md's solver
// table, as specs whose parameters may
// be relative to n ("2n", "n/8") and whose parameter lists use ';' instead
// of ',' (so that they fit a comma-separated --workload list). The
// marginals take dims from n (ParseWorkload).
var Families = []string{
	"prefix", "allrange", "width:k=32", "wrange:m=2n", "wdiscrete:m=2n",
	"wrelated:m=2n;s=n/8", "marginals:k=2", "marginals:k=3", "identity", "total",
}

// ExpandFamilies replaces the name "families" in a workload list by
// Families.
func ExpandFamilies(ws []string) []string {
	var out []string
	for _, w := range ws {
		if w == "families" {
			out = append(out, Families...)
			continue
		}
		out = append(out, w)
	}
	return out
}

// ParseWorkload builds the workload spec at size n: a built-in name, or a
// workload.Parse spec with ';' for ',', parameter values "n", "2n", "n/8"
// (any integer multiple or divisor of n) resolved, and, for "marginals"
// without dims, attributes of size 4 (the first one larger when n is not a
// power of 4) whose product is n.
func ParseWorkload(spec string, n int) (workload.Workload, error) {
	name, params, _ := strings.Cut(strings.ReplaceAll(spec, ";", ","), ":")
	var kv []string
	hasDims := false
	for _, p := range strings.Split(params, ",") {
		if p == "" {
			continue
		}
		k, v, ok := strings.Cut(p, "=")
		if !ok {
			return nil, fmt.Errorf("workload %q: parameter %q is not key=value", spec, p)
		}
		r, err := relativeToN(v, n)
		if err != nil {
			return nil, fmt.Errorf("workload %q: %v", spec, err)
		}
		hasDims = hasDims || k == "dims"
		kv = append(kv, k+"="+r)
	}
	if (name == "marginals" || name == "marginal") && !hasDims {
		d, err := marginalDims(n)
		if err != nil {
			return nil, fmt.Errorf("workload %q: %v", spec, err)
		}
		kv = append(kv, "dims="+d)
	}
	full := name
	if len(kv) > 0 {
		full += ":" + strings.Join(kv, ",")
	}
	if name == "marginals" || name == "marginal" {
		return workload.Parse(full, 0)
	}
	return workload.Parse(full, n)
}

// relativeToN resolves "n", "Kn" and "n/K" (K a positive integer); other
// values are returned unchanged.
func relativeToN(v string, n int) (string, error) {
	switch {
	case v == "n":
		return strconv.Itoa(n), nil
	case strings.HasPrefix(v, "n/"):
		k, err := strconv.Atoi(v[2:])
		if err != nil || k <= 0 {
			return "", fmt.Errorf("bad divisor in %q", v)
		}
		return strconv.Itoa(max(1, n/k)), nil
	case strings.HasSuffix(v, "n"):
		k, err := strconv.Atoi(v[:len(v)-1])
		if err != nil || k <= 0 {
			return v, nil
		}
		return strconv.Itoa(k * n), nil
	}
	return v, nil
}

// marginalDims returns "4x4x…" (at most 5 attributes, the first scaled up)
// with product n; n must be 4^a·m with a ≥ 1.
func marginalDims(n int) (string, error) {
	var dims []int
	m := n
	for m%4 == 0 && m > 1 && len(dims) < 5 {
		dims = append(dims, 4)
		m /= 4
	}
	if len(dims) < 2 {
		return "", fmt.Errorf("marginals need n = 4^a·m with a ≥ 2, got n = %d", n)
	}
	dims[0] *= m
	s := make([]string, len(dims))
	for i, d := range dims {
		s[i] = strconv.Itoa(d)
	}
	return strings.Join(s, "x"), nil
}
