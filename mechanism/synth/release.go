package synth

import (
	"bufio"
	"encoding/csv"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/dpsolve/dpsolve/model/domain"
	"github.com/dpsolve/dpsolve/privacy/calibrate"
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
