package mf

import (
	"context"
	"testing"

	"github.com/dpsolve/dpsolve/progress"
)

// Every schema's progress events carry the elapsed time (a regression:
// the fixed-epoch and banded solvers reported 0 s on every line).
func TestProgressCarriesSeconds(t *testing.T) {
	w, err := Prefix(32)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []Schema{{Kind: FixedEpoch, Epochs: 4}, {Kind: MinSep, MinSep: 8, Bands: 8}} {
		var events []progress.Event
		if _, err := Solve(context.Background(), w, s, &Options{Progress: func(e progress.Event) { events = append(events, e) }}); err != nil {
			t.Fatalf("%+v: %v", s, err)
		}
		if len(events) == 0 {
			t.Fatalf("%+v: no progress events", s)
		}
		last := events[len(events)-1]
		if !(last.Seconds > 0) {
			t.Errorf("%+v: last event's Seconds = %v, want > 0", s, last.Seconds)
		}
		for i := 1; i < len(events); i++ {
			if events[i].Seconds < events[i-1].Seconds {
				t.Errorf("%+v: Seconds decreases at event %d", s, i)
			}
		}
	}
}
