package batch

import (
	"os"
	"path/filepath"
	"strings"
)

// A release job that fails is marked needs_review (never re-run) unless it
// provably drew no noise. Exit status 2 (a bad command line) is one proof:
// every command checks its flags before it reads any data. The other is
// below: dpsolve release's own message for a failure that its code can only
// produce before the first noise draw.
//
// Why only these messages, and only for dpsolve release:
//
//   - "dpsolve release: ledger: …" comes from mechanism/ledger, which the
//     release calls twice, both before any noise: ledger.Check before it
//     reads the data, and ledger.SpendContext as tables.Release.Run's beforeNoise
//     hook, which runs after the noiseless measurements and before the first
//     draw (if it fails, nothing is sampled). Nothing after sampling touches
//     the ledger. This covers the refusal of a release that would exceed the
//     budget ("budget exceeded … nothing was released"), a missing or
//     malformed ledger and a charge of the wrong kind.
//   - "dpsolve release: release: invalid input: data: …" and "…: spec: …"
//     are the release command's own errors when it cannot open its records
//     file or spec; both are read before the ledger is charged. (The dense
//     mechanism/release package, which also names itself "release", is not
//     used by this command and words its data errors differently.)
//
// A release whose failure comes after sampling reports something else
// (e.g. "dpsolve release: creating the output: …" when its --out cannot be
// written, after it was charged and drew noise), so it stays needs_review.
// dpsolve run and answer get no such exemption: their records are read and
// their answers written through the same file code (internal/matio, whose
// messages read "matio: open …" in both cases), so the message does not
// show on which side of the noise the failure came.
//
// As a second check the release's --out must hold nothing: dpsolve release
// refuses a non-empty --out before it reads anything and writes its outputs
// by renaming a complete folder into place, so a failure before sampling
// leaves --out absent (or as empty as it was).
var preNoise = map[string][]string{
	"release": {
		"dpsolve release: ledger: ",
		"dpsolve release: release: invalid input: data: ",
		"dpsolve release: release: invalid input: spec: ",
	},
}

// failedBeforeNoise reports whether release job j, which exited with status
// 1 on its own (not killed, not interrupted by the batch) and whose last
// line on stderr is last, provably drew no noise (see preNoise).
func failedBeforeNoise(j Job, jobDir, workDir, last string) bool {
	prefixes := preNoise[j.Command]
	if len(prefixes) == 0 {
		return false
	}
	args := j.ExpandArgs(jobDir)
	for _, a := range args {
		// A line break in an argument (a path) could forge a "last line".
		if strings.ContainsAny(a, "\r\n") {
			return false
		}
	}
	known := false
	for _, p := range prefixes {
		known = known || strings.HasPrefix(last, p)
	}
	if !known {
		return false
	}
	if out := flagValue(args, "out"); out != "" {
		if !filepath.IsAbs(out) {
			out = filepath.Join(workDir, out)
		}
		ents, err := os.ReadDir(out)
		if err == nil && len(ents) > 0 || err != nil && !os.IsNotExist(err) {
			return false
		}
	}
	return true
}

// flagValue returns the value of string flag name in args (-name V,
// --name V, -name=V, --name=V; the last one wins, as in Go's flag package;
// nothing after "--"). dpsolve release takes no positional arguments, so
// every argument is a flag or a flag's value.
func flagValue(args []string, name string) string {
	val := ""
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			break
		}
		if !strings.HasPrefix(a, "-") {
			continue
		}
		k := strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-")
		k, v, hasValue := strings.Cut(k, "=")
		if k != name {
			continue
		}
		if hasValue {
			val = v
		} else if i+1 < len(args) {
			val = args[i+1]
			i++
		}
	}
	return val
}
