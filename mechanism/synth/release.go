package synth

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/dpsolve/dpsolve/model/domain"
	"github.com/dpsolve/dpsolve/privacy/calibrate"
	"github.com/dpsolve/dpsolve/privacy/ledger"
	"github.com/dpsolve/dpsolve/privacy/noise"
	"github.com/dpsolve/dpsolve/progress"
)

// ReadData reads records from CSV: a header naming every attribute (other
// columns are ignored), then one integer code in [0, size) per attribute
// and row. Unknown values, missing columns and a file without records are
// errors wrapping ErrInput that name the row and column.
func ReadData(r io.Reader, attrs []domain.Attribute) (*Data, error) {
	cr := csv.NewReader(bufio.NewReader(r))
	cr.ReuseRecord = true
	head, err := cr.Read()
	if err == io.EOF {
		return nil, inputf("empty data: no header")
	}
	if err != nil {
		return nil, inputf("reading the header: %v", err)
	}
	col := make([]int, len(attrs))
	for a, at := range attrs {
		col[a] = -1
		for j, h := range head {
			if strings.TrimSpace(h) == at.Name {
				if col[a] >= 0 {
					return nil, inputf("column %q appears twice in the header", at.Name)
				}
				col[a] = j
			}
		}
		if col[a] < 0 {
			return nil, inputf("the header has no column %q", at.Name)
		}
	}
	d := &Data{Sizes: make([]int, len(attrs)), Cols: make([][]int32, len(attrs))}
	for a, at := range attrs {
		d.Sizes[a] = at.Size
	}
	for row := 2; ; row++ {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, inputf("row %d: %v", row, err)
		}
		if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
			continue
		}
		for a, at := range attrs {
			f := strings.TrimSpace(rec[col[a]])
			v, err := strconv.Atoi(f)
			if err != nil || v < 0 || v >= at.Size {
				return nil, inputf("row %d, column %q: value %q is not a code in [0, %d)", row, at.Name, f, at.Size)
			}
			d.Cols[a] = append(d.Cols[a], int32(v))
		}
	}
	if d.Len() == 0 {
		return nil, inputf("empty data: a header and no records")
	}
	return d, nil
}

// WriteCSV writes records with a header of attribute names; labels[a], when
// non-nil, replaces attribute a's codes by its labels (a codebook).
func WriteCSV(w io.Writer, attrs []domain.Attribute, d *Data, labels [][]string) error {
	cw := csv.NewWriter(w)
	row := make([]string, len(attrs))
	for a, at := range attrs {
		row[a] = at.Name
	}
	if err := cw.Write(row); err != nil {
		return err
	}
	for i := 0; i < d.Len(); i++ {
		for a := range attrs {
			v := int(d.Cols[a][i])
			if a < len(labels) && labels[a] != nil && v < len(labels[a]) {
				row[a] = labels[a][v]
			} else {
				row[a] = strconv.Itoa(v)
			}
		}
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// RhoFromApprox returns the largest ρ whose ρ-zCDP guarantee implies
// (ε, δ)-DP by the conversion AIM and MST use (Canonne, Kamath & Steinke
// 2020, Proposition 12): δ(ρ, ε) = inf_{α>1} exp((α−1)(αρ−ε)) / (α−1) ·
// (1 − 1/α)^α, minimized over α by bisection on the derivative of its
// logarithm, then the largest ρ with δ(ρ, ε) ≤ δ by bisection.
func RhoFromApprox(eps, delta float64) (float64, error) {
	if !(eps > 0) || math.IsInf(eps, 0) || !(delta > 0 && delta < 1) {
		return 0, inputf("need ε > 0 and δ ∈ (0, 1), got ε = %v, δ = %v", eps, delta)
	}
	lo, hi := 0.0, eps+1
	for i := 0; i < 200; i++ {
		rho := (lo + hi) / 2
		if cdpDelta(rho, eps) <= delta {
			lo = rho
		} else {
			hi = rho
		}
	}
	return lo, nil
}

// cdpDelta is δ(ρ, ε) above.
func cdpDelta(rho, eps float64) float64 {
	if rho <= 0 {
		return 0
	}
	amin, amax := 1.01, (eps+1)/(2*rho)+2
	var alpha float64
	for i := 0; i < 200; i++ {
		alpha = (amin + amax) / 2
		if (2*alpha-1)*rho-eps+math.Log1p(-1/alpha) < 0 {
			amin = alpha
		} else {
			amax = alpha
		}
	}
	d := math.Exp((alpha-1)*(alpha*rho-eps)+alpha*math.Log1p(-1/alpha)) / (alpha - 1)
	return math.Min(d, 1)
}

// ReleaseOptions configures Release.
type ReleaseOptions struct {
	// Options are the mechanism's (Budget is the release's: ρ-zCDP, or
	// (ε, δ) converted to ρ by RhoFromApprox); Noise and Bits are set from
	// InsecureSeed.
	Options
	// Attrs is the domain (names = CSV columns).
	Attrs []domain.Attribute
	// Labels, optional, are per-attribute value labels for the output CSV.
	Labels [][]string
	// BudgetFile, if set, is the ledger charged before any noise is drawn.
	BudgetFile, Label string
	// Records is the number of synthetic records; 0 means the model's
	// (noisy) total, rounded.
	Records int
	// InsecureSeed, if non-nil, makes the noise and the selection seeded:
	// reproducible and NOT private (simulations and tests only).
	InsecureSeed *uint64
	// OutDir receives synthetic.csv and synth.json (written atomically).
	OutDir string
}

// ReleaseReport is synth.json.
type ReleaseReport struct {
	Report
	Budget     calibrate.Budget `json:"budget"`
	Records    int              `json:"records"`
	DataRows   int              `json:"-"`
	BudgetFile string           `json:"budget_file,omitempty"`
	Seed       string           `json:"seed"`
	Note       string           `json:"note,omitempty"`
	Attributes []string         `json:"attributes"`
}

// rhoOf is the zCDP budget a release may spend.
func rhoOf(b calibrate.Budget) (float64, error) {
	switch b.Kind() {
	case calibrate.Concentrated:
		return b.Rho(), nil
	case calibrate.Approx:
		return RhoFromApprox(b.Epsilon(), b.Delta())
	}
	return 0, inputf("synth needs a ρ-zCDP or an (ε, δ) budget with δ > 0, got %s", b)
}

// Release makes a synthetic data set in the order a private release must
// follow: every check that can refuse (options, budget, domain, data, the
// ledger's room) first, then the ledger charge, then the measurements, the
// fit, the sampling and the atomic write of OutDir/synthetic.csv and
// OutDir/synth.json. Nothing is charged when a check fails.
func Release(ctx context.Context, data io.Reader, o ReleaseOptions) (*ReleaseReport, error) {
	if len(o.Attrs) == 0 {
		return nil, inputf("the spec has no attributes")
	}
	if o.OutDir == "" {
		return nil, inputf("no output directory")
	}
	if o.Records < 0 {
		return nil, inputf("the number of records must be ≥ 0, got %d", o.Records)
	}
	rho, err := rhoOf(o.Budget)
	if err != nil {
		return nil, err
	}
	sizes := make([]int, len(o.Attrs))
	for a, at := range o.Attrs {
		sizes[a] = at.Size
	}
	rep := &ReleaseReport{Budget: o.Budget, Seed: "secure"}
	for _, at := range o.Attrs {
		rep.Attributes = append(rep.Attributes, at.Name)
	}
	o.Noise, o.Bits = noise.NewSecure(), rand.Reader
	if o.InsecureSeed != nil {
		o.Noise = noise.NewSeededInsecure(*o.InsecureSeed)
		o.Bits = mrand.NewChaCha8(seedBytes(*o.InsecureSeed))
		rep.Seed = strconv.FormatUint(*o.InsecureSeed, 10)
		rep.Note = "seeded noise and selection: NOT differentially private"
	}
	if err := checkOptions(sizes, &o.Options); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(o.OutDir, 0o755); err != nil {
		return nil, inputf("output directory: %v", err)
	}
	d, err := ReadData(data, o.Attrs)
	if err != nil {
		return nil, err
	}
	rep.DataRows = d.Len()
	if o.BudgetFile != "" {
		if _, err := ledger.Check(o.BudgetFile, chargeBudget(o.BudgetFile, o.Budget, rho)); err != nil {
			return nil, err
		}
		label := o.Label
		if label == "" {
			label = "synth " + o.OutDir
		}
		// The charge: the last step before any noise or selection.
		if _, err := ledger.SpendContext(ctx, o.BudgetFile, chargeBudget(o.BudgetFile, o.Budget, rho), label); err != nil {
			return nil, err
		}
		rep.BudgetFile = o.BudgetFile
	}
	res, err := Synthesize(ctx, d, o.Options)
	if err != nil {
		return nil, err
	}
	rep.Report = res.Report
	n := o.Records
	if n == 0 {
		n = int(math.Round(res.Model.Total))
	}
	rep.Records = n
	if o.Progress != nil {
		o.Progress(event(progress.Event{Stage: "sample", Count: int64(n), Unit: "records"}))
	}
	var rng *mrand.Rand
	if o.InsecureSeed != nil {
		rng = mrand.New(mrand.NewPCG(*o.InsecureSeed, 0x5eed))
	} else {
		var b [16]byte
		if _, err := io.ReadFull(rand.Reader, b[:]); err != nil {
			return nil, err
		}
		rng = mrand.New(mrand.NewPCG(leUint64(b[:8]), leUint64(b[8:])))
	}
	syn := res.Sample(n, rng)
	var sb strings.Builder
	if err := WriteCSV(&sb, o.Attrs, syn, o.Labels); err != nil {
		return nil, err
	}
	js, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := writeAtomic(filepath.Join(o.OutDir, "synthetic.csv"), []byte(sb.String())); err != nil {
		return nil, err
	}
	if err := writeAtomic(filepath.Join(o.OutDir, "synth.json"), append(js, '\n')); err != nil {
		return nil, err
	}
	return rep, nil
}

// chargeBudget is what the ledger is charged: ρ itself in a ρ ledger (the
// mechanism is ρ-zCDP), the budget as given otherwise.
func chargeBudget(path string, b calibrate.Budget, rho float64) calibrate.Budget {
	if f, err := ledger.Read(path); err == nil && f.Limit.Rho > 0 {
		if z, err := calibrate.ZCDP(rho); err == nil {
			return z
		}
	}
	return b
}

func seedBytes(s uint64) [32]byte {
	var b [32]byte
	for i := 0; i < 8; i++ {
		b[i] = byte(s >> (8 * i))
	}
	return b
}

func leUint64(b []byte) uint64 {
	var v uint64
	for i := 7; i >= 0; i-- {
		v = v<<8 | uint64(b[i])
	}
	return v
}

// writeAtomic writes a file through a temporary file in the same directory
// and a rename, so a reader sees the old file or the new one.
func writeAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".synth-*")
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	serr := f.Sync()
	cerr := f.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("synth: writing %s: %w", path, err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("synth: writing %s: %w", path, err)
	}
	return nil
}
