package bench

// families are the workload families of docs/performance.md's solver
// table, as workload.Parse specs whose parameters are relative to n ("2n",
// "n/8"), whose parameter lists use ';' instead of ',' (so that they fit a
// comma-separated --workload list) and whose marginals take their dims from
// n.
var families = []string{
	"prefix", "allrange", "width:k=32", "wrange:m=2n", "wdiscrete:m=2n",
	"wrelated:m=2n;s=n/8", "marginals:k=2", "marginals:k=3", "identity", "total",
}

// ExpandFamilies replaces the name "families" in a workload list by
// families.
func ExpandFamilies(ws []string) []string {
	var out []string
	for _, w := range ws {
		if w == "families" {
			out = append(out, families...)
			continue
		}
		out = append(out, w)
	}
	return out
}
