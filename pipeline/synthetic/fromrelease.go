package synthetic

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/dpsolve/dpsolve/internal/atomicdir"
	"github.com/dpsolve/dpsolve/mechanism/synth"
	"github.com/dpsolve/dpsolve/model/domain"
)

// FromReleaseRequest fits synthetic records to an existing release's
// published tables: post-processing, no budget is spent.
type FromReleaseRequest struct {
	// Dir is the release's output directory (answers.csv, release.json).
	Dir string
	// Attrs is the release's domain (its spec), codebooks included.
	Attrs []domain.Attribute
	// Records is the number of synthetic records; 0 means the fitted
	// model's total (the release's noisy total), rounded.
	Records int
	// MaxCells caps the model size (0: synth.DefaultMaxCells); FitIter
	// caps the fit's steps (0: 2000).
	MaxCells float64
	FitIter  int
	// Seed, if non-nil, seeds the sampling (which is post-processing: the
	// output is as private as the release either way).
	Seed *uint64
	// Out is the output directory (must not exist or be empty).
	Out string
}

// FromReleaseReport is synth.json of a fit to a release.
type FromReleaseReport struct {
	FromRelease string `json:"from_release"`
	// Private is the release's own "private" (false for a seeded one).
	Private bool `json:"private"`
	// Tables are the published marginal tables the model is fitted to,
	// by their answers.csv "table" names; Sets their attribute positions.
	Tables []string `json:"tables"`
	Sets   [][]int  `json:"measured"`
	// Skipped are the release's tables that are not complete marginal
	// tables (ranges, prefixes, other products), not used.
	Skipped []string        `json:"skipped,omitempty"`
	Fit     synth.FitResult `json:"fit"`
	Cliques [][]int         `json:"cliques"`
	Total   float64         `json:"total"`
	Records int             `json:"records"`
	Note    string          `json:"note"`
}

// PublishedTables reads a release's answers.csv and returns one
// measurement per complete marginal table (every cell of the attributes
// its rows give codes for, once), with the mean per-cell variance of its
// answers (synth.FromMarginal: its residuals and total), and the names of
// the tables used and skipped.
func PublishedTables(r io.Reader, attrs []domain.Attribute) (ms []synth.Measurement, used, skipped []string, err error) {
	cr := csv.NewReader(r)
	cr.ReuseRecord = true
	cols, err := readAnswerColumns(cr, attrs)
	if err != nil {
		return nil, nil, nil, err
	}
	var order []*publishedTable
	byName := map[string]*publishedTable{}
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, nil, nil, errorf("answers.csv line %d: %v", line, err)
		}
		name := rec[cols.table]
		t := byName[name]
		if t == nil {
			t = newPublishedTable(name, rec, cols, attrs)
			byName[name] = t
			order = append(order, t)
		}
		if err := t.add(rec, line, cols, attrs); err != nil {
			return nil, nil, nil, err
		}
	}
	return tableMeasurements(order, attrs)
}

// answerColumns are the positions in answers.csv of the columns that
// PublishedTables reads: the answer, its stddev, the table name, and one
// per attribute of the spec (in the spec's order).
type answerColumns struct {
	answer, stddev, table int
	attrs                 []int
}

// readAnswerColumns reads answers.csv's header and locates the columns
// PublishedTables needs; a missing one means the file is not a release of
// this spec.
func readAnswerColumns(cr *csv.Reader, attrs []domain.Attribute) (answerColumns, error) {
	head, err := cr.Read()
	if err != nil {
		return answerColumns{}, errorf("answers.csv: reading the header: %v", err)
	}
	colOf := map[string]int{}
	for j, h := range head {
		colOf[h] = j
	}
	col := func(name string) (int, error) {
		j, ok := colOf[name]
		if !ok {
			return 0, errorf("answers.csv has no column %q: not a release of this spec", name)
		}
		return j, nil
	}
	var cols answerColumns
	if cols.answer, err = col("answer"); err != nil {
		return answerColumns{}, err
	}
	if cols.stddev, err = col("stddev"); err != nil {
		return answerColumns{}, err
	}
	if cols.table, err = col("table"); err != nil {
		return answerColumns{}, err
	}
	cols.attrs = make([]int, len(attrs))
	for a, at := range attrs {
		if cols.attrs[a], err = col(at.Name); err != nil {
			return answerColumns{}, err
		}
	}
	return cols, nil
}

// publishedTable collects the rows of one answers.csv table while it may
// still be a complete marginal table; bad marks one that is not (a range,
// a label, a repeated cell, no attributes, or too many cells).
type publishedTable struct {
	name   string
	attrs  []int
	values []float64
	seen   []bool
	n      int
	varSum float64
	bad    bool
}

// newPublishedTable starts a table from its first row: its attributes are
// those the row gives a value for, and its cells are allocated only when
// it can be a marginal table of a sane size.
func newPublishedTable(name string, rec []string, cols answerColumns, attrs []domain.Attribute) *publishedTable {
	t := &publishedTable{name: name}
	for a := range attrs {
		if rec[cols.attrs[a]] != "" {
			t.attrs = append(t.attrs, a)
		}
	}
	cells := 1
	for _, a := range t.attrs {
		cells *= attrs[a].Size
	}
	if len(t.attrs) == 0 || cells > 1<<26 {
		t.bad = true
	} else {
		t.values, t.seen = make([]float64, cells), make([]bool, cells)
	}
	return t
}

// add records one row of the table. A row that is not one cell of the
// table's attributes (or repeats a cell) marks the table bad; only a row
// whose answer or stddev is not a usable number is an error, as that
// means the file is not a release.
func (t *publishedTable) add(rec []string, line int, cols answerColumns, attrs []domain.Attribute) error {
	if t.bad {
		return nil
	}
	ans, err1 := strconv.ParseFloat(rec[cols.answer], 64)
	sd, err2 := strconv.ParseFloat(rec[cols.stddev], 64)
	if err1 != nil || err2 != nil || math.IsNaN(ans) || math.IsInf(ans, 0) || !(sd > 0) || math.IsInf(sd, 0) {
		return errorf("answers.csv line %d: answer %q, stddev %q: not finite numbers with stddev > 0", line, rec[cols.answer], rec[cols.stddev])
	}
	idx := 0
	for a := range attrs {
		f := rec[cols.attrs[a]]
		in := len(t.attrs) > 0 && containsInt(t.attrs, a)
		if (f != "") != in {
			t.bad = true
			break
		}
		if !in {
			continue
		}
		v, err := strconv.Atoi(f)
		if err != nil || v < 0 || v >= attrs[a].Size {
			t.bad = true // a range or a label, not one code
			break
		}
		idx = idx*attrs[a].Size + v
	}
	if t.bad || t.seen[idx] {
		t.bad = true
		return nil
	}
	t.seen[idx], t.values[idx] = true, ans
	t.n++
	t.varSum += sd * sd
	return nil
}

// tableMeasurements turns the complete tables, in file order, into
// measurements (the first table on a set wins; the rest are skipped) with
// the mean per-cell variance of their answers, and names the tables used
// and skipped.
func tableMeasurements(order []*publishedTable, attrs []domain.Attribute) (ms []synth.Measurement, used, skipped []string, err error) {
	sets := map[string]bool{}
	sizes := make([]int, len(attrs))
	for a, at := range attrs {
		sizes[a] = at.Size
	}
	for _, t := range order {
		if t.bad || t.n != len(t.values) {
			skipped = append(skipped, t.name)
			continue
		}
		key := intsKey(t.attrs)
		if sets[key] {
			skipped = append(skipped, t.name+" (repeats a table)")
			continue
		}
		sets[key] = true
		m, err := synth.FromMarginal(sizes, t.attrs, t.values, t.varSum/float64(t.n))
		if err != nil {
			return nil, nil, nil, err
		}
		ms = append(ms, m...)
		used = append(used, t.name)
	}
	if len(ms) == 0 {
		return nil, nil, skipped, errorf("answers.csv holds no complete marginal table to fit a model to")
	}
	return ms, used, skipped, nil
}

func containsInt(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func intsKey(s []int) string {
	var b strings.Builder
	for _, v := range s {
		b.WriteString(strconv.Itoa(v))
		b.WriteByte(',')
	}
	return b.String()
}

// FromRelease fits a model to the release in req.Dir and writes
// req.Out/synthetic.csv and req.Out/synth.json atomically. It reads no
// data and spends no budget: the model is post-processing of the
// published tables. Each table is taken as a measurement with its mean
// per-cell variance; the tables of one release are correlated (they are
// one least-squares estimate), which this weighting ignores.
func FromRelease(ctx context.Context, req FromReleaseRequest) (*FromReleaseReport, error) {
	if len(req.Attrs) == 0 {
		return nil, errorf("the spec has no attributes")
	}
	if req.Records < 0 {
		return nil, errorf("the number of records must be ≥ 0, got %d", req.Records)
	}
	var meta struct {
		Private *bool `json:"private"`
	}
	b, err := os.ReadFile(filepath.Join(req.Dir, "release.json"))
	if err != nil {
		return nil, errorf("--from-release: %v", err)
	}
	if err := json.Unmarshal(b, &meta); err != nil || meta.Private == nil {
		return nil, errorf("--from-release: %s is not a release's release.json (%v)", filepath.Join(req.Dir, "release.json"), err)
	}
	f, err := os.Open(filepath.Join(req.Dir, "answers.csv"))
	if err != nil {
		return nil, errorf("--from-release: %v", err)
	}
	defer f.Close()
	ms, used, skipped, err := PublishedTables(f, req.Attrs)
	if err != nil {
		return nil, err
	}
	sizes := make([]int, len(req.Attrs))
	labels := make([][]string, len(req.Attrs))
	for a, at := range req.Attrs {
		sizes[a] = at.Size
		if at.Codebook != nil {
			labels[a] = make([]string, at.Size)
			for i := range labels[a] {
				labels[a][i] = at.Codebook.Label(i)
			}
		}
	}
	rep := &FromReleaseReport{FromRelease: req.Dir, Private: *meta.Private, Tables: used, Skipped: skipped,
		Note: "post-processing of the release's published tables: no budget spent; each table weighted by its mean per-cell variance, their correlations ignored"}
	seen := map[string]bool{}
	for _, m := range ms {
		if k := intsKey(m.Attrs); len(m.Attrs) > 0 && !seen[k] {
			seen[k] = true
			rep.Sets = append(rep.Sets, m.Attrs)
		}
	}
	if c, err := synth.TreeCells(sizes, rep.Sets); err != nil {
		return nil, err
	} else if maxC := req.MaxCells; c > maxC && maxC > 0 || maxC <= 0 && c > synth.DefaultMaxCells {
		return nil, errorf("the model of the release's tables would have %.4g cells, above the cap", c)
	}
	dir, err := atomicdir.Reserve(req.Out, nil)
	if err != nil {
		return nil, errorf("--out: %v", err)
	}
	defer dir.Abort()
	model, fit, err := synth.Fit(ctx, sizes, ms, &synth.FitOptions{MaxIter: req.FitIter, MaxCells: req.MaxCells})
	if err != nil {
		return nil, err
	}
	rep.Fit, rep.Cliques, rep.Total = fit, model.Tree.Cliques, model.Total
	n := req.Records
	if n == 0 {
		n = int(math.Round(model.Total))
	}
	rep.Records = n
	rng, err := sampler(req.Seed)
	if err != nil {
		return nil, err
	}
	syn := model.Sample(n, rng)
	js, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := errors.Join(
		dir.WriteFile("synthetic.csv", func(w io.Writer) error { return synth.WriteCSV(w, req.Attrs, syn, labels) }),
		dir.WriteFile("synth.json", func(w io.Writer) error { _, err := w.Write(append(js, '\n')); return err })); err != nil {
		return nil, err
	}
	if err := dir.Commit(nil); err != nil {
		return nil, err
	}
	return rep, nil
}
