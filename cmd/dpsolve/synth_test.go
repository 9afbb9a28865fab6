package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// dpsolve synth end to end on a small data set: both mechanisms write the
// CSV (header of attribute names, the requested number of records, codes in
// range) and synth.json (budget split adding up to ρ), charging the ledger
// once; bad input is a usage error that charges nothing.
func TestSynthCommand(t *testing.T) {
	dir := t.TempDir()
	spec := filepath.Join(dir, "spec.json")
	os.WriteFile(spec, []byte(`{"domain": [{"name": "a", "size": 3}, {"name": "b", "size": 4}, {"name": "c", "size": 2}],
 "workload": [{"name": "pairs", "marginals": {"k": 2}}]}`), 0o644)
	var sb strings.Builder
	sb.WriteString("a,b,c\n")
	for i := 0; i < 600; i++ {
		sb.WriteString(strings.Join([]string{itoa(i % 3), itoa((i % 3) + (i/3)%2), itoa(i % 2)}, ",") + "\n")
	}
	data := filepath.Join(dir, "data.csv")
	os.WriteFile(data, []byte(sb.String()), 0o644)
	led := filepath.Join(dir, "ledger.json")
	os.WriteFile(led, []byte(`{"limit": {"rho": 1}, "spent": []}`), 0o644)
	for _, mech := range []string{"mst", "aim"} {
		out := filepath.Join(dir, mech)
		var stdout, stderr bytes.Buffer
		code := run([]string{"synth", "--spec", spec, "--data", data, "--rho", "0.2", "--mechanism", mech, "--records", "250",
			"--budget-file", led, "--insecure-seed", "3", "--json", "--out", out}, &stdout, &stderr)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", mech, code, stderr.String())
		}
		var rep struct {
			Mechanism string `json:"mechanism"`
			ZCDP      struct {
				Rho float64 `json:"rho"`
			} `json:"zcdp"`
			SpentRho float64 `json:"spent_rho"`
			Records  int     `json:"records"`
			Private  bool    `json:"private"`
		}
		if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
			t.Fatal(err)
		}
		if rep.Mechanism != mech || rep.Records != 250 || rep.Private || rep.ZCDP.Rho != 0.2 || rep.SpentRho < 0.2*(1-1e-12) || rep.SpentRho > 0.2*(1+1e-12) {
			t.Fatalf("%s: report %+v", mech, rep)
		}
		csv, _ := os.ReadFile(filepath.Join(out, "synthetic.csv"))
		lines := strings.Split(strings.TrimSpace(string(csv)), "\n")
		if lines[0] != "a,b,c" || len(lines) != 251 {
			t.Fatalf("%s: %d lines, header %q", mech, len(lines), lines[0])
		}
		if !strings.Contains(stderr.String(), "NOT differentially private") {
			t.Fatalf("%s: no warning on stderr: %s", mech, stderr.String())
		}
	}
	before, _ := os.ReadFile(led)
	if !bytes.Contains(before, []byte(`"rho": 0.2`)) && !bytes.Contains(before, []byte(`"rho":0.2`)) {
		t.Fatalf("ledger not charged: %s", before)
	}
	bad := filepath.Join(dir, "bad.csv")
	os.WriteFile(bad, []byte("a,b,c\n0,9,1\n"), 0o644)
	var stdout, stderr bytes.Buffer
	if code := run([]string{"synth", "--spec", spec, "--data", bad, "--rho", "0.2", "--budget-file", led, "--out", filepath.Join(dir, "x")}, &stdout, &stderr); code != 2 {
		t.Fatalf("bad data: exit %d: %s", code, stderr.String())
	}
	after, _ := os.ReadFile(led)
	if !bytes.Equal(before, after) {
		t.Fatal("bad data charged the ledger")
	}
	if code := run([]string{"synth", "--spec", spec, "--data", data, "--out", dir}, &stdout, &stderr); code != 2 {
		t.Fatalf("no budget: exit %d", code)
	}
}

func itoa(i int) string { return string(rune('0' + i)) }

// dpsolve synth on raw labelled data: examples/adult/raw.json (a codebook
// for every attribute: values, aliases, an "other" value, numeric bins)
// with the raw Adult file, gzipped, as distributed. synthetic.csv has the
// spec's attribute names as its header and, in every row, a value label of
// the spec (or its bin range "[lo, hi)", as the codebook names it), checked
// against the spec read independently here.
func TestSynthLabelledAdult(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	var stdout, stderr bytes.Buffer
	code := run([]string{"synth", "--spec", "../../examples/adult/raw.json", "--data", "../../examples/adult/data/adult.csv.gz",
		"--epsilon", "1", "--delta", "1e-9", "--mechanism", "mst", "--records", "2000", "--insecure-seed", "1", "--quiet", "--out", out}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	var spec struct {
		Domain []struct {
			Name   string    `json:"name"`
			Values []string  `json:"values"`
			Edges  []float64 `json:"edges"`
		} `json:"domain"`
	}
	b, err := os.ReadFile("../../examples/adult/raw.json")
	if err != nil || json.Unmarshal(b, &spec) != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(out, "synthetic.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2001 {
		t.Fatalf("%d rows, want a header and 2000 records", len(rows))
	}
	allowed := make([]map[string]bool, len(spec.Domain))
	for a, d := range spec.Domain {
		if rows[0][a] != d.Name {
			t.Fatalf("column %d is %q, want %q", a, rows[0][a], d.Name)
		}
		allowed[a] = map[string]bool{}
		for _, v := range d.Values {
			allowed[a][v] = true
		}
		for i := 0; i+1 < len(d.Edges); i++ {
			allowed[a]["["+fmtG(d.Edges[i])+", "+fmtG(d.Edges[i+1])+")"] = true
		}
	}
	seen := make([]map[string]bool, len(spec.Domain))
	for a := range seen {
		seen[a] = map[string]bool{}
	}
	for _, r := range rows[1:] {
		for a, v := range r {
			if !allowed[a][v] {
				t.Fatalf("row %v: %q is not a label of %s", r, v, spec.Domain[a].Name)
			}
			seen[a][v] = true
		}
	}
	// The data are not degenerate: sex takes both labels, age many bins.
	if len(seen[7]) != 2 || len(seen[0]) < 20 {
		t.Fatalf("labels seen: sex %v, %d age bins", seen[7], len(seen[0]))
	}
}

func fmtG(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

// dpsolve synth --from-release: a release of all pairs (labelled attribute
// included) is made with dpsolve release, then synth fits to its published
// tables. The ledger is untouched by synth (no budget spent, nothing read
// but the release), and every pair marginal of the synthetic records is
// within 0.03 in ½‖·‖₁ of the release's own published table (normalized):
// the tables are consistent least-squares answers at ρ = 1 (per-cell noise
// ≈ 1 on 600 records, a few slightly negative cells the non-negative model
// cannot follow), and controlled rounding moves each of the ≤ 12 cells by
// < 1 record of 600, so the fit and the rounding account for at most
// ≈ 0.02. Bad requests (a budget, data) are usage errors.
func TestSynthFromRelease(t *testing.T) {
	dir := t.TempDir()
	spec := filepath.Join(dir, "spec.json")
	os.WriteFile(spec, []byte(`{"domain": [{"name": "a", "values": ["x", "y", "z"]}, {"name": "b", "size": 4}, {"name": "c", "size": 2}],
 "workload": [{"name": "pairs", "marginals": {"k": 2}}]}`), 0o644)
	var sb strings.Builder
	sb.WriteString("a,b,c\n")
	for i := 0; i < 600; i++ {
		sb.WriteString(strings.Join([]string{[]string{"x", "y", "z"}[i%3], itoa((i % 3) + (i/3)%2), itoa(i % 2)}, ",") + "\n")
	}
	data := filepath.Join(dir, "data.csv")
	os.WriteFile(data, []byte(sb.String()), 0o644)
	led := filepath.Join(dir, "ledger.json")
	os.WriteFile(led, []byte(`{"limit": {"rho": 2}, "spent": []}`), 0o644)
	rel := filepath.Join(dir, "rel")
	var stdout, stderr bytes.Buffer
	if code := run([]string{"release", "--spec", spec, "--template", "marginals", "--rho", "1", "--data", data, "--budget-file", led,
		"--insecure-seed", "4", "--quiet", "--out", rel}, &stdout, &stderr); code != 0 {
		t.Fatalf("release: exit %d: %s", code, stderr.String())
	}
	before, _ := os.ReadFile(led)
	out := filepath.Join(dir, "syn")
	if code := run([]string{"synth", "--from-release", rel, "--records", "600", "--insecure-seed", "1", "--out", out}, &stdout, &stderr); code != 0 {
		t.Fatalf("synth --from-release: exit %d: %s", code, stderr.String())
	}
	if after, _ := os.ReadFile(led); !bytes.Equal(before, after) {
		t.Fatal("synth --from-release changed the ledger")
	}
	// The release's tables, read independently from answers.csv.
	af, _ := os.Open(filepath.Join(rel, "answers.csv"))
	defer af.Close()
	ans, err := csv.NewReader(af).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	pub := map[string]map[string]float64{} // table → "a|b|c" codes → answer
	for _, r := range ans[1:] {
		if pub[r[7]] == nil {
			pub[r[7]] = map[string]float64{}
		}
		v, _ := strconv.ParseFloat(r[2], 64)
		pub[r[7]][r[4]+"|"+r[5]+"|"+r[6]] = v
	}
	sf, _ := os.Open(filepath.Join(out, "synthetic.csv"))
	defer sf.Close()
	syn, err := csv.NewReader(sf).ReadAll()
	if err != nil || len(syn) != 601 || strings.Join(syn[0], ",") != "a,b,c" {
		t.Fatalf("synthetic.csv: %d rows, %v", len(syn), err)
	}
	code := map[string]string{"x": "0", "y": "1", "z": "2"}
	for _, pair := range [][2]int{{0, 1}, {0, 2}, {1, 2}} {
		name := "pairs (" + syn[0][pair[0]] + ", " + syn[0][pair[1]] + ")"
		tab := pub[name]
		if len(tab) == 0 {
			t.Fatalf("no published table %q", name)
		}
		got := map[string]float64{}
		for _, r := range syn[1:] {
			k := []string{"", "", ""}
			for _, a := range pair {
				k[a] = r[a]
				if a == 0 {
					k[a] = code[r[a]]
				}
			}
			got[strings.Join(k, "|")]++
		}
		tot := 0.0
		for _, v := range tab {
			tot += v
		}
		dist := 0.0
		for k, v := range tab {
			dist += math.Abs(v/tot-got[k]/600) / 2
			delete(got, k)
		}
		if len(got) != 0 || dist > 0.03 {
			t.Fatalf("%s: distance %.4f to the published table (cells outside it: %v)", name, dist, got)
		}
		t.Logf("%s: distance %.4f", name, dist)
	}
	if code := run([]string{"synth", "--from-release", rel, "--rho", "1", "--out", filepath.Join(dir, "x")}, &stdout, &stderr); code != 2 {
		t.Fatalf("--from-release with a budget: exit %d", code)
	}
}
