package batch

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"time"
)

// JobReport is one job folder of a batch's output, as found on disk.
type JobReport struct {
	ID     string
	Dir    string
	Status *Status // the last finished attempt (or a release job's start); nil: none
	// Attempt is the latest attempt's start record from the lock file when
	// that attempt has not finished (running or interrupted); nil otherwise.
	Attempt *Status
	// Running is true for an unfinished attempt whose batch process still
	// runs on this host (one from another host counts as running too,
	// since this host cannot tell).
	Running bool
	// Err is set when the status file cannot be read.
	Err error
}

// ReadJob reports on the job folder out/id.
func ReadJob(out, id string) JobReport {
	host, _ := os.Hostname()
	dir := filepath.Join(out, id)
	if err := checkJobDir(dir); err != nil {
		return JobReport{ID: id, Dir: dir, Err: err}
	}
	st, err := ReadStatus(dir)
	rep := JobReport{ID: id, Dir: dir, Status: st, Err: err}
	if err != nil {
		return rep
	}
	var att *Status
	if b, err := readSmallFile(filepath.Join(dir, LockFile), maxSmallFile); err == nil && len(b) > 0 {
		var a Status
		if json.Unmarshal(b, &a) != nil {
			// Caught mid-write: the attempt is starting right now.
			a = Status{ID: id, State: Started, Exit: -1, Host: host, PID: os.Getpid(), Start: time.Now().UTC()}
		}
		att = &a
	}
	switch {
	case st != nil && st.State == Started:
		att = st // a release job's durable start
	case att != nil && st != nil && !st.Start.Before(att.Start):
		att = nil // the latest attempt finished: its status is st
	}
	if att != nil {
		rep.Attempt = att
		rep.Running = att.Host != host || processAlive(att.PID)
	}
	return rep
}

// Scan reads every job folder under out, sorted by id. With m non-nil, it
// reports exactly m's jobs, in manifest order, including those that have no
// folder yet.
func Scan(out string, m *Manifest) ([]JobReport, error) {
	var ids []string
	if m != nil {
		for _, j := range m.Jobs {
			ids = append(ids, j.ID)
		}
	} else {
		ents, err := os.ReadDir(out)
		if err != nil {
			return nil, err
		}
		for _, e := range ents {
			if e.IsDir() && CheckID(e.Name()) == nil {
				ids = append(ids, e.Name())
			}
		}
		sort.Strings(ids)
	}
	reps := make([]JobReport, 0, len(ids))
	for _, id := range ids {
		reps = append(reps, ReadJob(out, id))
	}
	return reps, nil
}

// Category is the status command's word for a job: succeeded, failed,
// needs_review, running, interrupted, not_started or unreadable.
func (r JobReport) Category() string {
	switch {
	case r.Err != nil:
		return "unreadable"
	case r.Attempt != nil && r.Running:
		return "running"
	case r.Attempt != nil:
		return "interrupted"
	case r.Status == nil:
		return "not_started"
	}
	return string(r.Status.State)
}

// Message is the job's error (or the status file's read error).
func (r JobReport) Message() string {
	if r.Err != nil {
		return r.Err.Error()
	}
	if a := r.Attempt; a != nil && !r.Running && a.State == Started && a.Error == "" {
		return fmt.Sprintf("interrupted: the batch that started it (pid %d on %s, %s) is gone; a rerun runs it again", a.PID, a.Host, a.Start.Format(time.RFC3339))
	}
	if r.Status != nil {
		return r.Status.Error
	}
	return ""
}

// Stdout parses the job's stdout as one JSON object (a job run with --json);
// it returns nil when there is no stdout or it is not a JSON object.
func (r JobReport) Stdout() map[string]any {
	b, err := readSmallFile(filepath.Join(r.Dir, StdoutFile), 64<<20)
	if err != nil {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v map[string]any
	if dec.Decode(&v) != nil {
		return nil
	}
	return v
}

// preferredColumns come first in collect's CSV, in this order, when any job
// reports them; other scalar fields follow alphabetically.
var preferredColumns = []string{"workload", "spec", "template", "n", "cells", "queries", "method", "objective", "lower_bound", "gap", "status", "iterations", "seconds", "expected_rmse", "mechanism", "epsilon", "delta", "rho"}

// CollectCSV writes one row per job to path (atomically): id, command,
// state, exit, wall_seconds and error from its status, then the top-level
// scalar fields of its JSON stdout (objective, gap, seconds, …). Fields
// not in a job's stdout are empty; nested values are left out.
func CollectCSV(path string, reps []JobReport) error {
	rows := make([]map[string]string, len(reps))
	cols := map[string]bool{}
	for i, r := range reps {
		row := map[string]string{}
		for k, v := range r.Stdout() {
			if s, ok := scalar(v); ok {
				row[k] = s
				cols[k] = true
			}
		}
		rows[i] = row
	}
	header := []string{"id", "command", "state", "exit", "wall_seconds", "error"}
	fixed := len(header)
	for _, c := range preferredColumns {
		if cols[c] {
			header = append(header, c)
			delete(cols, c)
		}
	}
	var rest []string
	for c := range cols {
		rest = append(rest, c)
	}
	sort.Strings(rest)
	header = append(header, rest...)
	// A stdout field named like a status column would be ambiguous.
	for i := fixed; i < len(header); i++ {
		for _, f := range header[:fixed] {
			if header[i] == f {
				header[i] = "stdout_" + f
				for _, row := range rows {
					if v, ok := row[f]; ok {
						row["stdout_"+f] = v
					}
				}
			}
		}
	}
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	w.Write(header)
	for i, r := range reps {
		rec := make([]string, len(header))
		rec[0] = r.ID
		rec[2] = r.Category()
		if st := r.Status; st != nil {
			rec[1] = st.Command
			rec[3] = strconv.Itoa(st.Exit)
			rec[4] = strconv.FormatFloat(st.Seconds, 'g', 6, 64)
		}
		rec[5] = r.Message()
		for c := fixed; c < len(header); c++ {
			rec[c] = rows[i][header[c]]
		}
		w.Write(rec)
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return err
	}
	dir := filepath.Dir(path)
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("cannot write %s: folder %s does not exist", path, dir)
	}
	return createFileAtomic(path, buf.Bytes())
}

// ErrExists: collect's CSV would replace an existing file (a job's
// status.json, a previous table): it never does.
var ErrExists = errors.New("exists; choose a new file name")

// createFileAtomic writes data to a new file at path: complete or absent,
// and never replacing anything already there (the temporary file is
// hard-linked to path, which fails if path exists, even if it appeared
// meanwhile).
func createFileAtomic(path string, data []byte) error {
	if _, err := os.Lstat(path); err == nil {
		return fmt.Errorf("%s %w", path, ErrExists)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Link(tmp.Name(), path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("%s %w", path, ErrExists)
		}
		return err
	}
	return nil
}

// scalar formats a JSON scalar for a CSV cell.
func scalar(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case json.Number:
		return x.String(), true
	case bool:
		return strconv.FormatBool(x), true
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return "", false
		}
		return strconv.FormatFloat(x, 'g', -1, 64), true
	case nil:
		return "", true
	}
	return "", false
}

// checkJobDir refuses a job folder that is not a plain directory inside
// --out (a symbolic link would lead the batch out of --out: its status,
// lock and the job's outputs would be read and written elsewhere). A
// missing folder is fine.
func checkJobDir(dir string) error {
	fi, err := os.Lstat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("job folder %s is not a directory (%v); the batch does not follow it", dir, fi.Mode().Type())
	}
	return nil
}
