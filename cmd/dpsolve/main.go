// Command dpsolve plans and runs differentially private answers to batches of
// linear queries: it computes optimal noise strategies (dpsolve solve), runs the
// private mechanisms end to end, and benchmarks the solvers.
//
// Each subcommand lives in its own file and registers itself in init, so a new
// subcommand never edits this file.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/dpsolve/dpsolve/blas"
)

// command is one dpsolve subcommand.
type command struct {
	name    string
	summary string
	// run executes the subcommand with its arguments (without the name).
	// It returns errUsage (possibly wrapped) for bad flags or arguments.
	// ctx is cancelled by the first SIGINT or SIGTERM (see signals.go): the
	// command then stops, writes nothing the interrupted work would have
	// produced, and returns an error wrapping ctx.Err() (exit status 130).
	run func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

var commands = map[string]*command{}

// register adds c to the subcommand table; it is called from init functions.
func register(c *command) {
	if _, dup := commands[c.name]; dup {
		panic("dpsolve: duplicate command " + c.name)
	}
	commands[c.name] = c
}

// errUsage marks errors caused by the command line rather than the computation;
// they exit with status 2.
var errUsage = errors.New("usage error")

// usageErrorf returns an error that wraps errUsage.
func usageErrorf(format string, a ...any) error {
	return fmt.Errorf("%w: %s", errUsage, fmt.Sprintf(format, a...))
}

// newFlagSet returns a flag set that reports errors instead of exiting, so
// subcommands are testable in-process.
func newFlagSet(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("dpsolve "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

// parseFlags parses args into fs and converts flag errors into usage errors.
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if fs.NArg() > 0 {
		return usageErrorf("unexpected arguments: %v", fs.Args())
	}
	return nil
}

func printUsage(w io.Writer) {
	fmt.Fprintln(w, "usage: dpsolve <command> [flags]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "commands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Run 'dpsolve <command> -h' for a command's flags.")
}

// run is main without os.Exit, returning the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		printUsage(stderr)
		return 2
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		printUsage(stdout)
		return 0
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "dpsolve: unknown command %q\n\n", args[0])
		printUsage(stderr)
		return 2
	}
	ctx, stop := signalContext(context.Background(), stderr, c.name)
	defer stop()
	err := runGuarded(ctx, c, args[1:], stdout, stderr)
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case interrupted(ctx, err):
		var spent *spentError
		if errors.As(err, &spent) {
			fmt.Fprintf(stderr, "dpsolve %s: interrupted after the budget was charged: %s was spent in %s and nothing was released\n", c.name, spent.cost, spent.ledger)
		} else {
			fmt.Fprintf(stderr, "dpsolve %s: interrupted; no output of the interrupted work was written\n", c.name)
		}
		return exitInterrupted
	case errors.Is(err, errUsage):
		fmt.Fprintf(stderr, "dpsolve %s: %v\n", c.name, err)
		return 2
	case errors.Is(err, errRegression):
		fmt.Fprintf(stderr, "dpsolve %s: %v\n", c.name, err)
		return exitRegression
	default:
		fmt.Fprintf(stderr, "dpsolve %s: %v\n", c.name, err)
		return 1
	}
}

func main() {
	// The one explicit kernel install: dpsolve's kernels and gonum's
	// global BLAS and LAPACK on the build's backend (see package blas).
	blas.Use(blas.Default())
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// positionalArg parses "ARG [flags]" or "[flags] ARG" into fs and returns
// ARG, the one positional argument of batch status/collect and ledger
// show/create; what names it in the usage error.
func positionalArg(fs *flag.FlagSet, args []string, what string) (string, error) {
	dir := ""
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		dir, args = args[0], args[1:]
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return "", err
		}
		return "", fmt.Errorf("%w: %v", errUsage, err)
	}
	rest := fs.Args()
	if dir == "" && len(rest) > 0 {
		dir, rest = rest[0], rest[1:]
	}
	if len(rest) > 0 {
		return "", usageErrorf("unexpected arguments: %v", rest)
	}
	if dir == "" {
		return "", usageErrorf("give %s", what)
	}
	return dir, nil
}
