package progress

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"
)

func TestFormat(t *testing.T) {
	nan := math.NaN()
	for _, c := range []struct {
		e    Event
		want string
	}{
		{Event{Stage: "newton", Step: 3, Objective: 6484329.00006, Bound: 6484328.9998, Gap: 3.98e-11, Seconds: 11.287},
			"newton  step 3  objective 6484329.00006  bound 6484328.9998  gap 3.98e-11  11.287 s"},
		{Event{Stage: "newton", Step: 1, Inner: 5, Objective: 2, Bound: nan, Gap: nan, Seconds: 0.5},
			"newton  step 1  inner 5  objective 2  0.500 s"},
		{Event{Stage: "records", Count: 2000000, Unit: "records", Fraction: 0.414, Objective: nan, Bound: nan, Gap: nan, Seconds: 3.21},
			"records  2000000 records (41%)  3.210 s"},
		{Event{Stage: "batch", Count: 3, Total: 10, Unit: "jobs", Objective: nan, Bound: nan, Gap: nan, Seconds: 1, Done: true, Note: "failed 1"},
			"batch  done  3 of 10 jobs  1.000 s  failed 1"},
		{Event{Stage: "x", Objective: math.Inf(1), Bound: nan, Gap: nan}, "x  0.000 s"},
	} {
		if got := Format(c.e); got != c.want {
			t.Errorf("Format(%+v)\n got %q\nwant %q", c.e, got, c.want)
		}
	}
}

// The writer prints the first event, then at most one line per interval,
// except a new stage, a Done event or a Note, which always print.
func TestWriterRateLimit(t *testing.T) {
	var buf bytes.Buffer
	clock := time.Unix(0, 0)
	r := &writer{w: &buf, prefix: "p: ", every: time.Second, now: func() time.Time { return clock }}
	step := func(stage string, i int, dt time.Duration, done bool, note string) {
		clock = clock.Add(dt)
		r.report(Event{Stage: stage, Step: i, Objective: math.NaN(), Bound: math.NaN(), Gap: math.NaN(), Done: done, Note: note})
	}
	step("a", 1, 0, false, "")                     // first: printed
	step("a", 2, 400*time.Millisecond, false, "")  // 0.4 s later: dropped
	step("a", 3, 700*time.Millisecond, false, "")  // 1.1 s after the last line: printed
	step("a", 4, 100*time.Millisecond, false, "")  // dropped
	step("a", 5, 100*time.Millisecond, false, "x") // a note: printed
	step("b", 1, 100*time.Millisecond, false, "")  // a new stage: printed
	step("b", 2, 100*time.Millisecond, true, "")   // done: printed
	got := strings.Split(strings.TrimSpace(buf.String()), "\n")
	want := []string{"p: a  step 1  0.000 s", "p: a  step 3  0.000 s", "p: a  step 5  0.000 s  x", "p: b  step 1  0.000 s", "p: b  done  step 2  0.000 s"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// every ≤ 0 prints everything.
	buf.Reset()
	all := NewWriter(&buf, "", 0)
	for i := 1; i <= 3; i++ {
		all(Event{Stage: "a", Step: i, Objective: math.NaN(), Bound: math.NaN(), Gap: math.NaN()})
	}
	if n := strings.Count(buf.String(), "\n"); n != 3 {
		t.Errorf("every 0: %d lines, want 3:\n%s", n, buf.String())
	}
}

func TestNilFunc(t *testing.T) {
	var f Func
	if f.Enabled() {
		t.Error("a nil Func is enabled")
	}
	f.Report(Event{}) // must not panic
	called := false
	f = func(Event) { called = true }
	f.Report(Event{})
	if !f.Enabled() || !called {
		t.Error("a non-nil Func did not receive the event")
	}
}
