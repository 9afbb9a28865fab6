// Package synthetic releases synthetic records (mechanism/synth) through
// the release transaction (pipeline/publish.RunCustom): every check that
// can refuse — the options, the budget, the model size, the output
// directory, the data (read through the spec's codebooks), the ledger's
// room — then the charge under the ledger's lock, then the measurements,
// the fit and the sampling, then the atomic, fsynced commit of
// synthetic.csv and synth.json.
package synthetic

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"io"
	"math"
	mrand "math/rand/v2"

	"github.com/dpsolve/dpsolve/internal/inputerr"
	"github.com/dpsolve/dpsolve/mechanism/synth"
	"github.com/dpsolve/dpsolve/model/domain"
	"github.com/dpsolve/dpsolve/pipeline/publish"
	"github.com/dpsolve/dpsolve/pipeline/records"
	"github.com/dpsolve/dpsolve/privacy/calibrate"
	"github.com/dpsolve/dpsolve/privacy/ledger"
	"github.com/dpsolve/dpsolve/privacy/noise"
	"github.com/dpsolve/dpsolve/progress"
)

// Request is one synthetic-data release.
type Request struct {
	// Options are the mechanism's: Budget (ρ-zCDP, or (ε, δ) converted to
	// ρ by synth.RhoFromApprox), Mechanism, Workload, caps. Noise and Bits
	// are set here (secure, or seeded by InsecureSeed).
	synth.Options
	// Attrs is the domain: names are the data's columns; an attribute
	// with a Codebook is read and written as labels (values, or bin
	// ranges "[lo, hi)"), one without as integer codes.
	Attrs []domain.Attribute
	// Data is the records: CSV (plain or gzipped) or Parquet, as
	// pipeline/records reads them; DataOptions (may be nil) tunes the read.
	Data        io.Reader
	DataOptions *records.Options
	// Ledger, if not empty, is charged before any noise or selection;
	// Label is the entry's label (default "synth " + Out).
	Ledger, Label string
	// Records is the number of synthetic records; 0 means the model's
	// (noisy) total, rounded.
	Records int
	// InsecureSeed, if non-nil, seeds the noise, the selection and the
	// sampling: reproducible and NOT private (simulations and tests).
	InsecureSeed *uint64
	// Out is the output directory (must not exist or be empty).
	Out string
	// Stale is told every unfinished output of a killed earlier release
	// to Out that is removed (may be nil).
	Stale func(path string)
}

// Report is synth.json.
type Report struct {
	synth.Report
	// Budget is the budget as given; ZCDP (in synth.Report) is its ρ.
	Budget     calibrate.Budget `json:"budget"`
	Records    int              `json:"records"`
	DataRows   int64            `json:"data_records"`
	BudgetFile string           `json:"budget_file,omitempty"`
	Seed       string           `json:"seed"`
	Note       string           `json:"note,omitempty"`
	Attributes []string         `json:"attributes"`
	// Labelled lists the attributes written as labels (spec codebook).
	Labelled []string `json:"labelled,omitempty"`
}

func errorf(format string, a ...any) error { return inputerr.Errorf("synthetic", format, a...) }

// Release runs the release. The publish.Result is never nil; its Outcome
// says whether the release was refused (nothing charged, nothing
// written), released, or charged and not released; the Report is nil
// unless released.
func Release(ctx context.Context, req Request) (*publish.Result, *Report, error) {
	refuse := func(err error) (*publish.Result, *Report, error) {
		return &publish.Result{Outcome: publish.Refused, Reason: err}, nil, err
	}
	if len(req.Attrs) == 0 {
		return refuse(errorf("the spec has no attributes"))
	}
	if req.Records < 0 {
		return refuse(errorf("the number of records must be ≥ 0, got %d", req.Records))
	}
	if req.Data == nil {
		return refuse(errorf("no data"))
	}
	o := req.Options
	rep := &Report{Budget: o.Budget, Seed: "secure", BudgetFile: req.Ledger}
	sizes := make([]int, len(req.Attrs))
	labels := make([][]string, len(req.Attrs))
	for a, at := range req.Attrs {
		sizes[a] = at.Size
		rep.Attributes = append(rep.Attributes, at.Name)
		if cb := at.Codebook; cb != nil {
			labels[a] = make([]string, at.Size)
			for i := range labels[a] {
				labels[a][i] = cb.Label(i)
			}
			rep.Labelled = append(rep.Labelled, at.Name)
		}
	}
	o.Noise, o.Bits = noise.NewSecure(), rand.Reader
	if req.InsecureSeed != nil {
		o.Noise = noise.NewSeededInsecure(*req.InsecureSeed)
		o.Bits = mrand.NewChaCha8(seedBytes(*req.InsecureSeed))
		rep.Seed = fmtUint(*req.InsecureSeed)
		rep.Note = "seeded noise and selection: NOT differentially private"
	}
	if err := synth.CheckOptions(sizes, o); err != nil {
		return refuse(err)
	}
	charge, err := chargeBudget(req.Ledger, o.Budget)
	if err != nil {
		return refuse(err)
	}
	label := req.Label
	if label == "" {
		label = "synth " + req.Out
	}
	var d *synth.Data
	res, err := publish.RunCustom(ctx, publish.Custom{Budget: charge, Ledger: req.Ledger, Label: label, Out: req.Out, Stale: req.Stale,
		Check: func(ctx context.Context) error {
			var err error
			d, rep.DataRows, err = readData(ctx, req)
			return err
		},
		Measure: func(ctx context.Context) ([]publish.File, error) {
			r, err := synth.Synthesize(ctx, d, o)
			if err != nil {
				return nil, err
			}
			rep.Report = r.Report
			n := req.Records
			if n == 0 {
				n = int(math.Round(r.Model.Total))
			}
			rep.Records = n
			if o.Progress != nil {
				o.Progress(progress.Event{Stage: "sample", Count: int64(n), Unit: "records", Objective: math.NaN(), Bound: math.NaN(), Gap: math.NaN()})
			}
			rng, err := sampler(req.InsecureSeed)
			if err != nil {
				return nil, err
			}
			syn := r.Sample(n, rng)
			js, err := json.MarshalIndent(rep, "", "  ")
			if err != nil {
				return nil, err
			}
			return []publish.File{
				{Name: "synthetic.csv", Write: func(w io.Writer) error { return synth.WriteCSV(w, req.Attrs, syn, labels) }},
				{Name: "synth.json", Write: func(w io.Writer) error { _, err := w.Write(append(js, '\n')); return err }},
			}, nil
		}})
	if err != nil {
		return res, nil, err
	}
	return res, rep, nil
}

// readData reads the records through the spec's codebooks into columns.
func readData(ctx context.Context, req Request) (*synth.Data, int64, error) {
	d := &synth.Data{Sizes: make([]int, len(req.Attrs)), Cols: make([][]int32, len(req.Attrs))}
	for a, at := range req.Attrs {
		d.Sizes[a] = at.Size
	}
	st, err := records.Scan(ctxReader{ctx, req.Data}, req.Attrs, req.DataOptions, func(codes []int) {
		for a, c := range codes {
			d.Cols[a] = append(d.Cols[a], int32(c))
		}
	})
	if err != nil {
		return nil, 0, err
	}
	if d.Len() == 0 {
		return nil, 0, errorf("empty data: a header and no records")
	}
	return d, st.Records, nil
}

// chargeBudget is what the ledger is charged: ρ itself in a ρ ledger (the
// mechanism is ρ-zCDP), the budget as given otherwise.
func chargeBudget(path string, b calibrate.Budget) (calibrate.Budget, error) {
	if path == "" {
		return b, nil
	}
	f, err := ledger.Read(path)
	if err != nil {
		return b, err
	}
	if f.Limit.Rho > 0 && b.Kind() == calibrate.Approx {
		rho, err := synth.RhoFromApprox(b.Epsilon(), b.Delta())
		if err != nil {
			return b, err
		}
		return calibrate.ZCDP(rho)
	}
	return b, nil
}

// sampler is the sampling's generator: seeded, or from crypto/rand.
func sampler(seed *uint64) (*mrand.Rand, error) {
	if seed != nil {
		return mrand.New(mrand.NewPCG(*seed, 0x5eed)), nil
	}
	var b [16]byte
	if _, err := io.ReadFull(rand.Reader, b[:]); err != nil {
		return nil, err
	}
	return mrand.New(mrand.NewPCG(leUint64(b[:8]), leUint64(b[8:]))), nil
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

func fmtUint(v uint64) string {
	if v == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	for v > 0 {
		i--
		b[i] = byte('0' + v%10)
		v /= 10
	}
	return string(b[i:])
}

// ctxReader stops a read once ctx is cancelled.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(b []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, context.Cause(c.ctx)
	}
	return c.r.Read(b)
}
