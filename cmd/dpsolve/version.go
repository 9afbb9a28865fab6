package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/dpsolve/dpsolve/blas"
)

// version is the release version; overridden at link time with
// -ldflags "-X main.version=…".
var version = "0.1.0-dev"

func init() {
	register(&command{name: "version", summary: "print the version, kernel backend, OpenBLAS core and thread count", run: runVersion})
}

func runVersion(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("version", stderr)
	asJSON := fs.Bool("json", false, "print one JSON object on stdout")
	fs.Bool("quiet", false, "accepted as by every command (version prints no progress)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	be := blas.Current()
	info := map[string]any{
		"version": version, "backend": be.Name(), "core": be.CoreName(), "threads": be.Threads(),
		"go": runtime.Version(),
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				info["revision"] = s.Value
			}
		}
	}
	if *asJSON {
		return json.NewEncoder(stdout).Encode(info)
	}
	fmt.Fprintf(stdout, "dpsolve %s (%s)\n", version, runtime.Version())
	fmt.Fprintf(stdout, "backend %s\n", blas.Describe())
	if be.Name() == "openblas" {
		fmt.Fprintln(stdout, "set OPENBLAS_CORETYPE (e.g. SkylakeX, Haswell) if the core above is a generic one your CPU outgrows")
	}
	return nil
}
