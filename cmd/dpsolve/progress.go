package main

import (
	"io"
	"time"

	"github.com/dpsolve/dpsolve/progress"
)

// progressInterval is the least time between two progress lines of one
// command (the first event, a new stage, a final event and a remark are
// always printed): a solve at n = 1024 still shows every iteration (about
// 4 s each on the development machine), a record read of millions of rows
// a line a second.
const progressInterval = time.Second

// progressTo is the one stderr progress renderer every command uses: lines
// "dpsolve <cmd>: <event>" (progress.Format), rate-limited to one per
// progressInterval; nil (no progress) under --quiet.
func progressTo(stderr io.Writer, cmd string, quiet bool) progress.Func {
	if quiet {
		return nil
	}
	return progress.NewWriter(stderr, "dpsolve "+cmd+": ", progressInterval)
}
