package main

// dpsolve ledger: read a budget ledger (show) and start one (create), so
// that nobody has to read or write the JSON by hand.

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"text/tabwriter"

	"github.com/dpsolve/dpsolve/privacy/calibrate"
	"github.com/dpsolve/dpsolve/privacy/ledger"
)

func init() {
	register(&command{
		name:    "ledger",
		summary: "read a budget ledger (show FILE) or start one with its limit (create FILE --rho R | --epsilon E [--delta D])",
		run:     runLedger,
	})
}

const ledgerUsage = `usage:
  dpsolve ledger show FILE [--json]
  dpsolve ledger create FILE --rho R | --epsilon E [--delta D] [--json]

show prints the ledger's limit, what is spent and what remains (in the
ledger's unit) and every recorded release with its budget, charge, label
and time. create writes a new, empty ledger with the given limit (a ρ-zCDP
ledger for --rho; an ε ledger, or (ε,δ) with --delta, for --epsilon); it
never overwrites a file. dpsolve release --budget-file FILE charges it.
`

func runLedger(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, ledgerUsage)
		return usageErrorf("give a subcommand: show or create")
	}
	switch args[0] {
	case "show":
		return runLedgerShow(args[1:], stdout, stderr)
	case "create":
		return runLedgerCreate(args[1:], stdout, stderr)
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, ledgerUsage)
		return flag.ErrHelp
	}
	fmt.Fprint(stderr, ledgerUsage)
	return usageErrorf("unknown subcommand %q (want show or create)", args[0])
}

func runLedgerShow(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("ledger show", stderr)
	asJSON := fs.Bool("json", false, "print one JSON object on stdout")
	fs.Bool("quiet", false, "accepted as by every command (show prints no progress)")
	path, err := positionalArg(fs, args, "the ledger FILE")
	if err != nil {
		return err
	}
	f, err := ledger.Read(path)
	if err != nil {
		return err
	}
	return printLedger(stdout, path, f, *asJSON)
}

func runLedgerCreate(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("ledger create", stderr)
	var rho, eps, delta float64
	fs.Float64Var(&rho, "rho", 0, "the limit as ρ (zero-concentrated DP): releases are charged ρ, pure ε-DP ones ε²/2")
	fs.Float64Var(&eps, "epsilon", 0, "the limit as ε (with --delta, (ε,δ)-DP by basic composition; alone, pure ε-DP)")
	fs.Float64Var(&eps, "eps", 0, "the same as --epsilon (the spelling dpsolve release uses)")
	fs.Float64Var(&delta, "delta", 0, "the limit's δ in (0,1), with --epsilon")
	asJSON := fs.Bool("json", false, "print the new ledger as dpsolve ledger show --json does")
	fs.Bool("quiet", false, "accepted as by every command (create prints no progress)")
	path, err := positionalArg(fs, args, "the ledger FILE")
	if err != nil {
		return err
	}
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	if set["eps"] && set["epsilon"] {
		return usageErrorf("give --epsilon or --eps, not both")
	}
	givenEps := set["eps"] || set["epsilon"]
	var limit calibrate.Budget
	switch {
	case set["rho"] && (givenEps || set["delta"]):
		return usageErrorf("give either --rho or --epsilon [--delta], not both: a ledger keeps one unit")
	case set["rho"]:
		limit, err = calibrate.ZCDP(rho)
	case givenEps && set["delta"]:
		limit, err = calibrate.ApproxDP(eps, delta)
	case givenEps:
		limit, err = calibrate.PureDP(eps)
	case set["delta"]:
		return usageErrorf("--delta needs --epsilon")
	default:
		return usageErrorf("give the ledger's limit: --rho R, or --epsilon E [--delta D]")
	}
	if err != nil {
		return usageErrorf("%v", err)
	}
	// The path is checked here so that its mistakes are usage errors (exit
	// 2); Create refuses an existing file by itself too (O_EXCL).
	if _, err := os.Lstat(path); err == nil {
		return usageErrorf("%s already exists; a ledger is never overwritten (dpsolve ledger show %s reads it)", path, path)
	}
	if dir := filepath.Dir(path); dir != "" {
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return usageErrorf("%s: directory %s does not exist", path, dir)
		}
	}
	if err := ledger.Create(path, limit); err != nil {
		return err
	}
	f, err := ledger.Read(path)
	if err != nil {
		return err
	}
	if *asJSON {
		return printLedger(stdout, path, f, true)
	}
	fmt.Fprintf(stdout, "created %s: limit %s, nothing spent\n", path, f.Limit)
	return nil
}

// ledgerJSON is dpsolve ledger show --json: every amount in the ledger's
// unit ({"rho": …} in a ρ ledger; {"epsilon": …, "delta": …} in an ε or
// (ε,δ) ledger, δ = 0 for pure ε).
type ledgerJSON struct {
	File string `json:"file"`
	// Unit is "rho", "epsilon" (pure ε-DP) or "epsilon_delta".
	Unit      string             `json:"unit"`
	Limit     map[string]float64 `json:"limit"`
	Spent     map[string]float64 `json:"spent"`
	Remaining map[string]float64 `json:"remaining"`
	// OverLimit is true when the recorded releases spend more than the
	// limit (a ledger edited by hand); remaining is then 0.
	OverLimit bool              `json:"over_limit"`
	Releases  int               `json:"releases"`
	Entries   []ledgerEntryJSON `json:"entries"`
}

// ledgerEntryJSON is one recorded release.
type ledgerEntryJSON struct {
	Index int    `json:"index"`
	Time  string `json:"time"`
	Label string `json:"label"`
	// Kind and Budget are the release's own budget, in its own unit.
	Kind   calibrate.Kind   `json:"kind"`
	Budget calibrate.Budget `json:"budget"`
	// Charged is what the release costs in the ledger's unit.
	Charged map[string]float64 `json:"charged"`
}

// ledgerUnit names the unit of a ledger with limit l.
func ledgerUnit(l ledger.Limit) string {
	switch {
	case l.Rho != 0:
		return "rho"
	case l.Delta == 0:
		return "epsilon"
	}
	return "epsilon_delta"
}

// unitAmount is amount a in the JSON form of a ledger with limit l.
func unitAmount(a, l ledger.Limit) map[string]float64 {
	if l.Rho != 0 {
		return map[string]float64{"rho": a.Rho}
	}
	return map[string]float64{"epsilon": a.Epsilon, "delta": a.Delta}
}

// printLedger writes ledger f (read from path) as text or JSON.
func printLedger(w io.Writer, path string, f *ledger.File, asJSON bool) error {
	st := f.Status()
	over := st.Remaining.Rho < 0 || st.Remaining.Epsilon < 0 || st.Remaining.Delta < 0
	if asJSON {
		out := ledgerJSON{File: path, Unit: ledgerUnit(f.Limit), Limit: unitAmount(f.Limit, f.Limit),
			Spent: unitAmount(st.Spent, f.Limit), Remaining: unitAmount(st.Left(), f.Limit),
			OverLimit: over, Releases: st.Releases, Entries: []ledgerEntryJSON{}}
		for i, e := range f.Spent {
			out.Entries = append(out.Entries, ledgerEntryJSON{Index: i + 1, Time: e.Time, Label: e.Label,
				Kind: e.Budget.Kind(), Budget: e.Budget,
				Charged: unitAmount(ledger.Limit{Rho: e.ChargedRho, Epsilon: e.ChargedEpsilon, Delta: e.ChargedDelta}, f.Limit)})
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "ledger\t%s\n", printable(path))
	fmt.Fprintf(tw, "limit\t%s\n", f.Limit)
	fmt.Fprintf(tw, "spent\t%s over %d release(s)\n", st.Spent.In(f.Limit), st.Releases)
	if over {
		fmt.Fprintf(tw, "remaining\t%s (the recorded releases spend more than the limit)\n", st.Left().In(f.Limit))
	} else {
		fmt.Fprintf(tw, "remaining\t%s\n", st.Left().In(f.Limit))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(f.Spent) == 0 {
		return nil
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "#\ttime\tbudget\tcharged\tlabel")
	for i, e := range f.Spent {
		charged := ledger.Limit{Rho: e.ChargedRho, Epsilon: e.ChargedEpsilon, Delta: e.ChargedDelta}.In(f.Limit)
		label := printable(e.Label)
		if label == "" {
			label = "-"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\n", i+1, printable(e.Time), ledger.Cost(e.Budget), charged, label)
	}
	return tw.Flush()
}

// printable quotes s when it holds a control character (a tab or a line
// break would break the table; an escape sequence would reach the
// terminal).
func printable(s string) string {
	for _, r := range s {
		if r < ' ' || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return strconv.Quote(s)
		}
	}
	return s
}
