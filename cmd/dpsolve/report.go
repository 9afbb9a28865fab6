package main

import (
	"encoding/json"
	"io"
)

// textReport is a command's result that can print itself for people; with
// --json the same value is printed as JSON instead.
type textReport interface{ writeText(io.Writer) }

// writeReport prints r to stdout: indented JSON with --json, else its text
// form.
func writeReport(stdout io.Writer, asJSON bool, r textReport) error {
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	}
	r.writeText(stdout)
	return nil
}
