package sdp

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/internal/inputerr"
)

// Problem is a semidefinite program in SDPA form,
//
//	minimize cᵀy  subject to  Σᵢ yᵢ Fᵢ − F₀ ⪰ 0,
//
// with block-diagonal symmetric Fᵢ (CSDP calls this its dual problem; its
// primal is max ⟨F₀, Z⟩ s.t. ⟨Fᵢ, Z⟩ = cᵢ, Z ⪰ 0).
type Problem struct {
	// Comment is written on the file's first line (after a '"'); it must not
	// contain a newline.
	Comment string
	// C is the objective vector; len(C) is the number of variables m.
	C []float64
	// Blocks are the block sizes: k > 0 for a dense symmetric k×k block,
	// k < 0 for a diagonal block of size |k| (linear inequalities).
	Blocks []int
	// Entries are the nonzero upper-triangle entries of F₀ … F_m.
	Entries []Entry
}

// Entry is one nonzero entry of a constraint matrix: matrix Mat (0 for F₀,
// i for Fᵢ), block Block (1-based), position (I, J) with 1 ≤ I ≤ J ≤ block
// size (1-based, upper triangle; I = J in diagonal blocks), and its Value.
type Entry struct {
	Mat, Block, I, J int
	Value            float64
}

// Validate checks the problem's structure: indices in range, upper triangle,
// finite values, no duplicate entries.
func (p *Problem) Validate() error {
	if strings.ContainsAny(p.Comment, "\r\n") {
		return inputerr.Errorf("sdp", "problem comment contains a newline")
	}
	if len(p.C) == 0 {
		return inputerr.Errorf("sdp", "problem has no variables")
	}
	if len(p.Blocks) == 0 {
		return inputerr.Errorf("sdp", "problem has no blocks")
	}
	for i, c := range p.C {
		if math.IsNaN(c) || math.IsInf(c, 0) {
			return inputerr.Errorf("sdp", "objective entry %d is %v", i+1, c)
		}
	}
	for b, k := range p.Blocks {
		if k == 0 {
			return inputerr.Errorf("sdp", "block %d has size 0", b+1)
		}
	}
	seen := make(map[[4]int]bool, len(p.Entries))
	for _, e := range p.Entries {
		if e.Mat < 0 || e.Mat > len(p.C) {
			return inputerr.Errorf("sdp", "entry %+v: matrix number outside 0..%d", e, len(p.C))
		}
		if e.Block < 1 || e.Block > len(p.Blocks) {
			return inputerr.Errorf("sdp", "entry %+v: block number outside 1..%d", e, len(p.Blocks))
		}
		size := p.Blocks[e.Block-1]
		diag := size < 0
		if diag {
			size = -size
		}
		if e.I < 1 || e.J < e.I || e.J > size {
			return inputerr.Errorf("sdp", "entry %+v: position outside the upper triangle of a %d×%d block", e, size, size)
		}
		if diag && e.I != e.J {
			return inputerr.Errorf("sdp", "entry %+v: off-diagonal entry in diagonal block %d", e, e.Block)
		}
		if math.IsNaN(e.Value) || math.IsInf(e.Value, 0) {
			return inputerr.Errorf("sdp", "entry %+v: non-finite value", e)
		}
		key := [4]int{e.Mat, e.Block, e.I, e.J}
		if seen[key] {
			return inputerr.Errorf("sdp", "duplicate entry for matrix %d block %d (%d,%d)", e.Mat, e.Block, e.I, e.J)
		}
		seen[key] = true
	}
	return nil
}

// WriteSDPA writes p in the SDPA sparse format (.dat-s) that CSDP, SDPA,
// SDPT3, SeDuMi (via its readers), Mosek and others read. Numbers are written
// with full round-trip precision; entries are sorted by (matrix, block, i, j);
// zero entries are omitted.
func WriteSDPA(w io.Writer, p *Problem) error {
	if err := p.Validate(); err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "\"%s\n", p.Comment)
	fmt.Fprintf(bw, "%d =mdim\n", len(p.C))
	fmt.Fprintf(bw, "%d =nblocks\n", len(p.Blocks))
	for i, k := range p.Blocks {
		if i > 0 {
			bw.WriteByte(' ')
		}
		bw.WriteString(strconv.Itoa(k))
	}
	bw.WriteByte('\n')
	for i, c := range p.C {
		if i > 0 {
			bw.WriteByte(' ')
		}
		bw.WriteString(fmtFloat(c))
	}
	bw.WriteByte('\n')
	es := append([]Entry(nil), p.Entries...)
	sortEntries(es)
	for _, e := range es {
		if e.Value == 0 {
			continue
		}
		fmt.Fprintf(bw, "%d %d %d %d %s\n", e.Mat, e.Block, e.I, e.J, fmtFloat(e.Value))
	}
	return bw.Flush()
}

func fmtFloat(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

func sortEntries(es []Entry) {
	sort.Slice(es, func(a, b int) bool {
		x, y := es[a], es[b]
		if x.Mat != y.Mat {
			return x.Mat < y.Mat
		}
		if x.Block != y.Block {
			return x.Block < y.Block
		}
		if x.I != y.I {
			return x.I < y.I
		}
		return x.J < y.J
	})
}

// ReadSDPA parses an SDPA sparse-format problem: leading comment lines
// starting with '"' or '*', then m, the number of blocks, the block sizes,
// the objective vector (numbers may be separated by spaces, commas, braces
// or parentheses, as the format allows), then one "mat block i j value" line
// per entry. Entries given in the lower triangle (i > j) are moved to the
// upper one. The result is validated.
func ReadSDPA(r io.Reader) (*Problem, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1<<30)
	rd := &sdpaReader{p: &Problem{}, need: -1}
	for sc.Scan() {
		rd.lineNo++
		line := sc.Text()
		var err error
		switch {
		case rd.comment(line):
		case rd.stage < stageEntries:
			err = rd.header(line)
		default:
			err = rd.entry(line)
		}
		if err != nil {
			return nil, err
		}
	}
	if err := sc.Err(); err != nil {
		return nil, inputerr.Errorf("sdp", "reading SDPA: %w", err)
	}
	if rd.stage < stageEntries {
		return nil, inputerr.Errorf("sdp", "SDPA file ends before its header is complete (%s missing)",
			[]string{"number of variables", "number of blocks", "block sizes", "objective vector"}[rd.stage])
	}
	if err := rd.p.Validate(); err != nil {
		return nil, err
	}
	return rd.p, nil
}

// The parts of an SDPA file, in order. The header's items may share lines
// or span several, so the reader counts tokens, not lines, until the
// entries start.
const (
	stageM       = iota // the number of variables m
	stageNBlocks        // the number of blocks
	stageSizes          // the block sizes
	stageC              // the objective vector c
	stageEntries        // one "mat block i j value" line per entry
)

// sdpaReader is ReadSDPA's state between lines.
type sdpaReader struct {
	p      *Problem
	lineNo int
	stage  int
	tok    []string // header tokens read but not yet used
	need   int      // tokens the current header item needs
	m      int
}

// comment reports whether line is a comment: only before the first header
// token. The first '"' comment becomes the problem's Comment.
func (rd *sdpaReader) comment(line string) bool {
	if rd.stage != stageM || len(rd.tok) > 0 {
		return false
	}
	t := strings.TrimSpace(line)
	if !strings.HasPrefix(t, "\"") && !strings.HasPrefix(t, "*") {
		return false
	}
	if rd.p.Comment == "" && strings.HasPrefix(t, "\"") {
		rd.p.Comment = strings.TrimPrefix(t, "\"")
	}
	return true
}

// header adds line's tokens (numbers separated by spaces, commas, braces
// or parentheses) and completes as many header items as they allow.
func (rd *sdpaReader) header(line string) error {
	fields := strings.FieldsFunc(line, func(r rune) bool {
		return r == ' ' || r == '\t' || r == ',' || r == '{' || r == '}' || r == '(' || r == ')' || r == '\r'
	})
	// m and nblocks lines may carry trailing text ("2 =mdim").
	if rd.stage <= stageNBlocks && len(fields) > 0 {
		fields = fields[:1]
	}
	rd.tok = append(rd.tok, fields...)
	for {
		more, err := rd.headerItem()
		if err != nil || !more {
			return err
		}
	}
}

// headerItem completes the current header item if enough tokens are there
// and reports whether the next item may be tried on the same tokens.
func (rd *sdpaReader) headerItem() (bool, error) {
	switch rd.stage {
	case stageM, stageNBlocks:
		if len(rd.tok) == 0 {
			return false, nil
		}
		v, err := strconv.Atoi(rd.tok[0])
		if err != nil || v <= 0 {
			return false, inputerr.Errorf("sdp", "SDPA line %d: %q is not a positive integer (%s)", rd.lineNo, rd.tok[0], [2]string{"number of variables", "number of blocks"}[rd.stage])
		}
		rd.tok = rd.tok[1:]
		if rd.stage == stageM {
			rd.m = v
		} else {
			rd.need = v
		}
		rd.stage++
		return true, nil
	case stageSizes:
		if len(rd.tok) < rd.need {
			return false, nil
		}
		for _, t := range rd.tok[:rd.need] {
			v, err := strconv.Atoi(t)
			if err != nil || v == 0 {
				return false, inputerr.Errorf("sdp", "SDPA line %d: block size %q is not a nonzero integer", rd.lineNo, t)
			}
			rd.p.Blocks = append(rd.p.Blocks, v)
		}
		rd.tok = rd.tok[rd.need:]
		rd.need = rd.m
		rd.stage++
		return true, nil
	case stageC:
		if len(rd.tok) < rd.need {
			return false, nil
		}
		for _, t := range rd.tok[:rd.need] {
			v, err := strconv.ParseFloat(t, 64)
			if err != nil {
				return false, inputerr.Errorf("sdp", "SDPA line %d: objective entry %q is not a number", rd.lineNo, t)
			}
			rd.p.C = append(rd.p.C, v)
		}
		if len(rd.tok) > rd.need {
			return false, inputerr.Errorf("sdp", "SDPA line %d: %d objective entries where %d were declared", rd.lineNo, len(rd.tok), rd.m)
		}
		rd.tok = nil
		rd.stage++
	}
	return false, nil
}

// entry parses one "matrix block i j value" line; an entry given in the
// lower triangle (i > j) moves to the upper one. Blank lines are skipped.
func (rd *sdpaReader) entry(line string) error {
	t := strings.TrimSpace(line)
	if t == "" {
		return nil
	}
	f := strings.Fields(t)
	if len(f) != 5 {
		return inputerr.Errorf("sdp", "SDPA line %d: want \"matrix block i j value\", got %q", rd.lineNo, truncate(t, 80))
	}
	var ints [4]int
	for k := 0; k < 4; k++ {
		v, err := strconv.Atoi(f[k])
		if err != nil {
			return inputerr.Errorf("sdp", "SDPA line %d: %q is not an integer", rd.lineNo, f[k])
		}
		ints[k] = v
	}
	v, err := strconv.ParseFloat(f[4], 64)
	if err != nil {
		return inputerr.Errorf("sdp", "SDPA line %d: %q is not a number", rd.lineNo, f[4])
	}
	e := Entry{Mat: ints[0], Block: ints[1], I: ints[2], J: ints[3], Value: v}
	if e.I > e.J {
		e.I, e.J = e.J, e.I
	}
	rd.p.Entries = append(rd.p.Entries, e)
	return nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// Slack returns S(y) = Σᵢ yᵢFᵢ − F₀ block by block: the matrix that must be
// positive semidefinite for y to be feasible. It lets a caller check any
// solver's answer independently of the solver.
func (p *Problem) Slack(y []float64) ([]Block, error) {
	if len(y) != len(p.C) {
		return nil, inputerr.Errorf("sdp", "%d values for %d variables", len(y), len(p.C))
	}
	bs := make([]Block, len(p.Blocks))
	for i, k := range p.Blocks {
		if k < 0 {
			bs[i] = Block{Size: -k, Diag: true, Data: make([]float64, -k)}
		} else {
			bs[i] = Block{Size: k, Data: make([]float64, k*k)}
		}
	}
	for _, e := range p.Entries {
		coef := -1.0
		if e.Mat > 0 {
			coef = y[e.Mat-1]
		}
		b := bs[e.Block-1]
		i, j := e.I-1, e.J-1
		if b.Diag {
			b.Data[i] += coef * e.Value
			continue
		}
		b.Data[i*b.Size+j] += coef * e.Value
		if i != j {
			b.Data[j*b.Size+i] += coef * e.Value
		}
	}
	return bs, nil
}

// MinEigenvalue returns the smallest eigenvalue of the block.
func (b Block) MinEigenvalue() (float64, error) {
	if b.Diag {
		m := math.Inf(1)
		for _, x := range b.Data {
			m = math.Min(m, x)
		}
		return m, nil
	}
	var es mat.EigenSym
	if !es.Factorize(mat.NewSymDense(b.Size, append([]float64(nil), b.Data...)), false) {
		return 0, errors.New("sdp: eigenvalue computation failed")
	}
	return es.Values(nil)[0], nil
}
