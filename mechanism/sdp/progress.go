package sdp

import (
	"bytes"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/dpsolve/dpsolve/progress"
)

// iterWriter turns CSDP's printlevel=1 iteration lines
//
//	Iter:  3 Ap: 1.00e+00 Pobj:  2.0000000e+00 Ad: 1.00e+00 Dobj:  1.9999980e+00
//
// into progress events as CSDP writes them. Dobj is cᵀy in the SDPA form
// Solve writes (the value Result.Objective reports); Pobj is ⟨F₀, Z⟩, a
// bound only once Z is feasible, so it is not reported as one while CSDP
// runs.
type iterWriter struct {
	f     progress.Func
	start time.Time
	buf   []byte
}

func (w *iterWriter) Write(p []byte) (int, error) {
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			break
		}
		w.line(string(w.buf[:i]))
		w.buf = w.buf[i+1:]
	}
	return len(p), nil
}

func (w *iterWriter) line(l string) {
	fs := strings.Fields(l)
	if len(fs) < 2 || fs[0] != "Iter:" {
		return
	}
	it, err := strconv.Atoi(fs[1])
	if err != nil {
		return
	}
	obj := math.NaN()
	for k := 2; k+1 < len(fs); k++ {
		if fs[k] == "Dobj:" {
			if v, err := strconv.ParseFloat(fs[k+1], 64); err == nil {
				obj = v
			}
		}
	}
	w.f(progress.Event{Stage: "csdp", Step: it, Objective: obj, Bound: math.NaN(), Gap: math.NaN(),
		Seconds: time.Since(w.start).Seconds()})
}
