package progress

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// NewWriter returns a Func that prints Events as text lines on w, each
// starting with prefix (dpsolve's command line passes "dpsolve solve: ").
// It prints at most one line per interval every, except that the first
// event, a change of stage, a final (Done) event and an event with a Note
// are always printed, so a fast routine prints its start and its end and a
// slow one a line at least every interval while it runs. every ≤ 0 prints
// every event. The returned Func is safe for concurrent use.
func NewWriter(w io.Writer, prefix string, every time.Duration) Func {
	r := &writer{w: w, prefix: prefix, every: every, now: time.Now}
	return r.report
}

type writer struct {
	mu     sync.Mutex
	w      io.Writer
	prefix string
	every  time.Duration
	last   time.Time // when the last line was printed; zero before the first
	stage  string    // the last printed event's stage
	now    func() time.Time
}

func (r *writer) report(e Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.now()
	if !r.last.IsZero() && !e.Done && e.Note == "" && e.Stage == r.stage && now.Sub(r.last) < r.every {
		return
	}
	r.last, r.stage = now, e.Stage
	fmt.Fprintln(r.w, r.prefix+Format(e))
}

// Format renders one Event as a line of text (without a newline): the
// stage, then only the fields the stage reports, e.g.
//
//	newton  step 3  objective 6484329.00006  bound 6484328.9998  gap 3.98e-11  11.287 s
//	records  2000000 records (41%)  3.210 s
//	newton  done  step 3  objective 6484329.00006  bound 6484328.9998  gap 3.98e-11  11.287 s  converged
func Format(e Event) string {
	parts := []string{e.Stage}
	if e.Done {
		parts = append(parts, "done")
	}
	if e.Step > 0 {
		parts = append(parts, fmt.Sprintf("step %d", e.Step))
	}
	if e.Inner > 0 {
		parts = append(parts, fmt.Sprintf("inner %d", e.Inner))
	}
	if Known(e.Objective) {
		parts = append(parts, fmt.Sprintf("objective %.12g", e.Objective))
	}
	if Known(e.Bound) {
		parts = append(parts, fmt.Sprintf("bound %.12g", e.Bound))
	}
	if Known(e.Gap) {
		parts = append(parts, fmt.Sprintf("gap %.3g", e.Gap))
	}
	if e.Count > 0 || e.Total > 0 || e.Unit != "" {
		c := fmt.Sprint(e.Count)
		if e.Total > 0 {
			c += fmt.Sprintf(" of %d", e.Total)
		}
		if e.Unit != "" {
			c += " " + e.Unit
		}
		if e.Fraction > 0 {
			c += fmt.Sprintf(" (%.0f%%)", 100*e.Fraction)
		}
		parts = append(parts, c)
	}
	parts = append(parts, fmt.Sprintf("%.3f s", e.Seconds))
	if e.Note != "" {
		parts = append(parts, e.Note)
	}
	return strings.Join(parts, "  ")
}
