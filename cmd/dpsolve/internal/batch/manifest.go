package batch

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/dpsolve/dpsolve/internal/inputerr"
)

// ErrInput is dpsolve's bad-input sentinel; every error this package returns
// for a malformed manifest, shard or flag wraps it.
var ErrInput = inputerr.ErrInput

// MaxIDLength bounds a job id, so that OUT/<id>/status.json stays far below
// every file system's name limits.
const MaxIDLength = 100

// OutPlaceholder in a job's argument is replaced by the job's own output
// folder OUT/<id> (an absolute path).
const OutPlaceholder = "{out}"

// Job is one manifest line.
type Job struct {
	// ID names the job and its output folder; see [CheckID].
	ID string `json:"id"`
	// Command is the dpsolve subcommand to run (solve, plan, run, …).
	Command string `json:"command"`
	// Args are the subcommand's arguments; "{out}" expands to OUT/<id>.
	Args []string `json:"args"`
	// Line is the job's 1-based line number in the manifest.
	Line int `json:"-"`
	// Hash identifies the job's content (id, command, args) independently
	// of the line's spacing and key order: a rerun skips a succeeded job
	// only when its hash is unchanged.
	Hash string `json:"-"`
}

// Manifest is a parsed manifest.
type Manifest struct {
	// Path is the manifest file ("" when parsed from a reader).
	Path string
	// Dir is the folder jobs run in, so relative input paths in their
	// arguments resolve against the manifest's folder.
	Dir string
	// Jobs are in manifest order; a job's index here decides its shard.
	Jobs []Job
}

// maxManifest bounds a manifest's size (a million jobs of 256 bytes).
const maxManifest = 256 << 20

// ReadManifest reads and checks the manifest at path.
func ReadManifest(path string) (*Manifest, error) {
	// A regular file of bounded size only: /dev/zero would be read until
	// memory runs out, a FIFO would block forever.
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, inputerr.Errorf("batch", "%s is not a regular file (%v); give a manifest file", path, fi.Mode().Type())
	}
	if fi.Size() > maxManifest {
		return nil, inputerr.Errorf("batch", "%s is %d bytes, more than the %d a manifest may have", path, fi.Size(), maxManifest)
	}
	f, err := os.OpenFile(path, os.O_RDONLY|oNonBlock, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi2, err := f.Stat(); err != nil || !fi2.Mode().IsRegular() {
		return nil, inputerr.Errorf("batch", "%s is not a regular file; give a manifest file", path)
	}
	jobs, bad, err := parseManifest(io.LimitReader(f, maxManifest+1))
	if bad {
		return nil, inputerr.Errorf("batch", "%s: %w", path, err)
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	return &Manifest{Path: abs, Dir: filepath.Dir(abs), Jobs: jobs}, nil
}

// ParseManifest parses JSON Lines jobs from r. Blank lines and lines whose
// first non-space character is '#' are skipped. Every line must be an object
// with exactly the fields id, command and (optionally) args; ids must be
// valid ([CheckID]) and unique regardless of letter case, so the output
// folders are distinct on case-insensitive file systems too.
func ParseManifest(r io.Reader) ([]Job, error) {
	jobs, bad, err := parseManifest(r)
	if bad {
		return nil, inputerr.Errorf("batch", "%w", err)
	}
	return jobs, err
}

// parseManifest is ParseManifest with unwrapped errors, so that ReadManifest
// can name the file and wrap ErrInput once: bad says the error is the
// manifest's fault (otherwise reading failed).
func parseManifest(r io.Reader) (jobs []Job, bad bool, err error) {
	br := bufio.NewReader(r)
	seen := map[string]int{}
	for lineNo := 1; ; lineNo++ {
		line, err := br.ReadBytes('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, false, err
		}
		trimmed := bytes.TrimSpace(line)
		if len(trimmed) > 0 && trimmed[0] != '#' {
			j, perr := parseJob(trimmed)
			if perr != nil {
				return nil, true, fmt.Errorf("line %d: %w", lineNo, perr)
			}
			key := strings.ToLower(j.ID)
			if prev, dup := seen[key]; dup {
				return nil, true, fmt.Errorf("line %d: job id %q repeats the id on line %d (ids must be unique, ignoring case)", lineNo, j.ID, prev)
			}
			seen[key] = lineNo
			j.Line = lineNo
			jobs = append(jobs, j)
		}
		if errors.Is(err, io.EOF) {
			break
		}
	}
	if len(jobs) == 0 {
		return nil, true, errors.New("the manifest has no jobs")
	}
	return jobs, false, nil
}

func parseJob(line []byte) (Job, error) {
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	var j Job
	if err := dec.Decode(&j); err != nil {
		return j, fmt.Errorf("not a job object {\"id\", \"command\", \"args\"}: %v", err)
	}
	if dec.More() {
		return j, errors.New("more than one JSON value on the line")
	}
	if err := checkID(j.ID); err != nil {
		return j, err
	}
	if j.Command == "" {
		return j, fmt.Errorf("job %q has no command", j.ID)
	}
	if j.Command == "batch" {
		return j, fmt.Errorf("job %q: a batch cannot run another batch", j.ID)
	}
	if strings.HasPrefix(j.Command, "-") {
		return j, fmt.Errorf("job %q: command %q is a flag, not a command", j.ID, j.Command)
	}
	if j.Args == nil {
		j.Args = []string{}
	}
	for _, a := range j.Args {
		if err := checkOutConfined(a); err != nil {
			return j, fmt.Errorf("job %q: %w", j.ID, err)
		}
	}
	j.Hash = hashJob(j)
	return j, nil
}

// checkOutConfined refuses an argument whose {out} expansion could name a
// path outside the job's folder: each {out} must be followed by nothing, a
// separator that ends the path (',', ':', ';', '=', a space), or '/' and a
// relative path that does not climb out ("{out}/../x" and "{out}x", a
// sibling of the folder, are refused). The rest of a path after a
// separator is the command's, not the job folder's, so it is not judged.
func checkOutConfined(arg string) error {
	rest := arg
	for {
		i := strings.Index(rest, OutPlaceholder)
		if i < 0 {
			return nil
		}
		rest = rest[i+len(OutPlaceholder):]
		tail := rest
		if k := strings.IndexAny(tail, ",:;= "+OutPlaceholder[:1]); k >= 0 {
			tail = tail[:k]
		}
		if tail == "" {
			continue
		}
		if tail[0] != '/' || slices.Contains(strings.Split(tail, "/"), "..") {
			return fmt.Errorf("argument %q: %s%s would name a path outside the job's folder; outputs go in %s or below it", arg, OutPlaceholder, tail, OutPlaceholder)
		}
	}
}

// hashJob hashes the canonical encoding of the job's content.
func hashJob(j Job) string {
	b, _ := json.Marshal(struct {
		ID      string   `json:"id"`
		Command string   `json:"command"`
		Args    []string `json:"args"`
	}{j.ID, j.Command, j.Args}) // cannot fail: strings only
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// CheckID reports whether id can name a job and its output folder: 1 to
// MaxIDLength characters from A–Z, a–z, 0–9, '.', '_' and '-', starting with
// a letter or digit (so never ".", "..", a hidden name or a flag), and no
// path separators.
func CheckID(id string) error {
	if err := checkID(id); err != nil {
		return inputerr.Errorf("batch", "%w", err)
	}
	return nil
}

// checkID is CheckID with an unwrapped error, for parseJob.
func checkID(id string) error {
	if id == "" {
		return errors.New("a job has no id")
	}
	if len(id) > MaxIDLength {
		return fmt.Errorf("job id %q is longer than %d characters", id, MaxIDLength)
	}
	for i, c := range id {
		alnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if i == 0 && !alnum {
			return fmt.Errorf("job id %q must start with a letter or digit", id)
		}
		if !alnum && c != '.' && c != '_' && c != '-' {
			return fmt.Errorf("job id %q contains %q; use only letters, digits, '.', '_' and '-'", id, c)
		}
	}
	return nil
}

// ExpandArgs returns the job's arguments with every "{out}" replaced by
// jobDir.
func (j Job) ExpandArgs(jobDir string) []string {
	out := make([]string, len(j.Args))
	for i, a := range j.Args {
		out[i] = strings.ReplaceAll(a, OutPlaceholder, jobDir)
	}
	return out
}

// releasing lists the commands that draw noise from private data.
var releasing = map[string]bool{"release": true, "answer": true, "run": true}

// Releases reports whether command draws noise from private data, so that a
// job running it must never be repeated automatically once it started.
func Releases(command string) bool { return releasing[command] }
