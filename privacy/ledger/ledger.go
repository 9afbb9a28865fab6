// Package ledger keeps a file of the privacy budget spent on one data set,
// so that many releases — by one person over months, or by concurrent
// processes — can never spend more than the budget the data's owner set.
//
// # The file
//
// A ledger is a JSON file written by a person once and appended to by every
// release:
//
//	{"limit": {"rho": 1},
//	 "spent": [{"time": "2026-12-01T09:00:00Z", "label": "tables v1", "kind": "zcdp", "rho": 0.25, "charged_rho": 0.25}]}
//
// Its limit is either ρ (zero-concentrated DP, {"rho": R}) or ε with an
// optional δ ((ε,δ)-DP, {"epsilon": E, "delta": D}; δ = 0 is pure ε-DP).
//
// # Composition (what "spent" adds up)
//
// Running mechanisms M₁, …, M_k on the same data — adaptively chosen, each
// with fresh noise — is private with the sum of their budgets:
//
//   - ρ-zCDP composes additively: ρ = Σρᵢ (Bun & Steinke 2016, Lemma 2.3);
//   - (ε,δ)-DP composes additively in both: (Σεᵢ, Σδᵢ) (basic composition,
//     Dwork & Roth 2014, Theorem 3.16); pure ε-DP is the case δᵢ = 0.
//
// Basic composition is loose for many (ε,δ) releases (advanced composition
// and zCDP accounting are tighter); that is a reason to keep a ledger in ρ.
//
// A release is charged in the ledger's unit: a ρ-zCDP release costs ρ in a
// ρ ledger; a pure ε-DP release costs ε²/2 there (ε-DP ⇒ ε²/2-zCDP, Bun &
// Steinke 2016, Proposition 1.4) and (ε, 0) in an (ε,δ) ledger; an (ε,δ)
// release costs (ε,δ) in an (ε,δ) ledger. An (ε,δ) release cannot be
// charged to a ρ ledger ((ε,δ)-DP implies no zCDP bound), and a ρ-zCDP
// release cannot be charged to an (ε,δ) ledger without choosing how to
// split δ; both are refused with a message saying so.
//
// # What an entry counts
//
// An entry's charge is computed from the budget it records, in the
// ledger's unit, by the conversion above (InUnit, the one a charge uses);
// its charged_* members are a record of that charge, never the source of
// the sum. An entry without them (written by hand, or by another tool)
// counts what its budget costs. The ledger is invalid — no release can
// charge it and Read refuses it, with a message naming the entry by its
// position and label — when an entry records no budget, a budget that
// cannot be converted into the ledger's unit, or a charged_* value that
// disagrees with the computed charge (beyond a relative 1e-12), or when a
// member appears twice in any object of the file (encoding/json would
// silently keep the last one).
//
// # One ledger per file, whatever names it
//
// A ledger is the file, not the path that names it. A symbolic link is
// resolved before the ledger is locked, read or written, so a release given
// a link charges the file the link points to (the link stays a link). A
// hard link would fork the ledger at the first charge (the atomic write
// replaces one name with a new file and leaves the other names on the old
// one), so a ledger whose file has more than one link is refused, before
// anything is charged, with a message saying so; use a symbolic link to
// give a ledger a second name. A charge keeps the file's mode and group
// (a group-shared 0664 ledger stays one); if the group cannot be kept
// (the writer is not in it), nothing is charged.
//
// # Concurrency and failure
//
// Spend holds an exclusive flock(2) on the ledger file itself (the inode,
// so every name of the file shares it) while it reads the ledger, checks
// that the charge fits and writes the ledger back atomically (a temporary
// file in the same directory, fsync, rename). Because the rename replaces
// the inode, a process that waited for the lock checks after getting it
// that the path still names the file it locked, and starts over if not.
// It also holds the sidecar lock of earlier versions (the resolved path
// plus ".lock"), so it excludes them too. Concurrent processes therefore
// serialize, and a crash leaves the old or the new ledger, never a torn
// one. A release must call Spend (or SpendContext) before it draws any
// noise, as its last step: the budget is charged even if the release later
// fails (refunding after noise was drawn would be unsafe). SpendContext
// charges only if its context is not cancelled when the new ledger is
// about to replace the old one (under the lock); a cancelled charge
// leaves the file byte-for-byte unchanged.
//
// Sums are compared with the limit with a relative slack of 1e-12, so that
// splitting a budget into parts whose decimal values do not add exactly in
// binary (0.1 + 0.2 > 0.3) does not refuse the last part; the overspend
// this allows is at most 1e-12 of the limit.
package ledger

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/dpsolve/dpsolve/internal/inputerr"
	"github.com/dpsolve/dpsolve/privacy/calibrate"
)

// ErrInput is wrapped by every error returned for bad input (a malformed
// ledger, an invalid charge, a charge that would overspend).
var ErrInput = inputerr.ErrInput

// ErrExceeded is wrapped (together with ErrInput) by the error Spend and
// Check return when a charge would exceed the ledger's limit.
var ErrExceeded = errors.New("budget exceeded")

// slack is the relative tolerance of the limit comparison (package doc).
const slack = 1e-12

func errorf(format string, a ...any) error { return inputerr.Errorf("ledger", format, a...) }

// Limit is a ledger's total budget: Rho > 0 for a ρ-zCDP ledger, or
// Epsilon > 0 with Delta ∈ [0,1) for an (ε,δ)-DP ledger (exactly one kind).
type Limit struct {
	Rho     float64 `json:"rho,omitempty"`
	Epsilon float64 `json:"epsilon,omitempty"`
	Delta   float64 `json:"delta,omitempty"`
}

// zcdp reports whether the limit is in ρ.
func (l Limit) zcdp() bool { return l.Rho != 0 }

func (l Limit) validate() error {
	bad := func(v float64) bool { return math.IsNaN(v) || math.IsInf(v, 0) }
	switch {
	case bad(l.Rho) || bad(l.Epsilon) || bad(l.Delta):
		return errorf("the limit has a non-finite value")
	case l.Rho != 0 && (l.Epsilon != 0 || l.Delta != 0):
		return errorf("the limit gives both rho and epsilon/delta; give one")
	case l.Rho < 0:
		return errorf("the limit's rho must be positive, got %v", l.Rho)
	case l.Rho == 0 && l.Epsilon <= 0:
		return errorf("the limit needs rho > 0 or epsilon > 0")
	case l.Delta < 0 || l.Delta >= 1:
		return errorf("the limit's delta must lie in [0, 1), got %v", l.Delta)
	}
	return nil
}

// String formats the limit: "rho=1" or "eps=1, delta=1e-06".
func (l Limit) String() string {
	if l.zcdp() {
		return fmt.Sprintf("rho=%.10g", l.Rho)
	}
	if l.Delta == 0 {
		return fmt.Sprintf("eps=%.10g", l.Epsilon)
	}
	return fmt.Sprintf("eps=%.10g, delta=%.10g", l.Epsilon, l.Delta)
}

// In formats l in the unit of the ledger whose limit is unit, whatever
// l's own values: "rho=0" in a ρ ledger (where String would say "eps=0"),
// "eps=0.5" in a pure ε ledger, "eps=0.5, delta=1e-07" in an (ε,δ) ledger.
// A component the unit lacks is shown when it is not zero (a δ spent in a
// pure ε ledger), so nothing is hidden.
func (l Limit) In(unit Limit) string {
	if unit.zcdp() {
		if l.Epsilon != 0 || l.Delta != 0 {
			return fmt.Sprintf("rho=%.10g (and eps=%.10g, delta=%.10g)", l.Rho, l.Epsilon, l.Delta)
		}
		return fmt.Sprintf("rho=%.10g", l.Rho)
	}
	s := fmt.Sprintf("eps=%.10g", l.Epsilon)
	if unit.Delta != 0 || l.Delta != 0 {
		s += fmt.Sprintf(", delta=%.10g", l.Delta)
	}
	if l.Rho != 0 {
		s += fmt.Sprintf(" (and rho=%.10g)", l.Rho)
	}
	return s
}

// Cost returns budget b as an amount in its own unit ({Rho} for ρ-zCDP,
// {Epsilon} for pure ε-DP, {Epsilon, Delta} for (ε,δ)-DP), the form a
// ledger prints a release's cost in.
func Cost(b calibrate.Budget) Limit {
	switch b.Kind() {
	case calibrate.Concentrated:
		return Limit{Rho: b.Rho()}
	case calibrate.Pure:
		return Limit{Epsilon: b.Epsilon()}
	}
	return Limit{Epsilon: b.Epsilon(), Delta: b.Delta()}
}

// InUnit converts a release's budget b into the unit of a ledger with
// limit l (see the package doc): what a charge of b adds to its spend. The
// zero Budget (no budget) is refused.
func InUnit(b calibrate.Budget, l Limit) (Limit, error) {
	if b.IsZero() {
		return Limit{}, errorf("invalid charge: %v", calibrate.ErrNoBudget)
	}
	switch b.Kind() {
	case calibrate.Concentrated:
		if !l.zcdp() {
			return Limit{}, errorf("a rho-zCDP release cannot be charged to an (epsilon, delta) ledger (%s) without choosing a delta; keep the ledger in rho", l)
		}
		return Limit{Rho: b.Rho()}, nil
	case calibrate.Pure:
		if l.zcdp() {
			return Limit{Rho: b.Epsilon() * b.Epsilon() / 2}, nil
		}
		return Limit{Epsilon: b.Epsilon()}, nil
	}
	if l.zcdp() {
		return Limit{}, errorf("an (epsilon, delta) release cannot be charged to a rho ledger: (epsilon, delta)-DP implies no zCDP bound")
	}
	return Limit{Epsilon: b.Epsilon(), Delta: b.Delta()}, nil
}

// Entry is one recorded release.
type Entry struct {
	Time  string `json:"time"`
	Label string `json:"label,omitempty"`
	// Budget is the release's budget. The file stores it as ledgers have
	// always had it: "kind" ("zcdp", "approx" or "pure", its Kind) and
	// then calibrate's encoding inline ("rho", or "epsilon" and "delta");
	// see MarshalJSON.
	Budget calibrate.Budget `json:"-"`
	// The charge in the ledger's unit (what the composition sums).
	ChargedRho     float64 `json:"charged_rho,omitempty"`
	ChargedEpsilon float64 `json:"charged_epsilon,omitempty"`
	ChargedDelta   float64 `json:"charged_delta,omitempty"`
}

// entryJSON is an Entry's own members in the file, kind among them (the
// budget's members follow it).
type entryJSON struct {
	Time           string         `json:"time"`
	Label          string         `json:"label,omitempty"`
	Kind           calibrate.Kind `json:"kind"`
	ChargedRho     float64        `json:"charged_rho,omitempty"`
	ChargedEpsilon float64        `json:"charged_epsilon,omitempty"`
	ChargedDelta   float64        `json:"charged_delta,omitempty"`
}

// MarshalJSON writes the entry in the ledger file's format: time, label,
// kind, the budget in calibrate's encoding, the charge.
func (e Entry) MarshalJSON() ([]byte, error) {
	return calibrate.MarshalInline(entryJSON{Time: e.Time, Label: e.Label, Kind: e.Budget.Kind(),
		ChargedRho: e.ChargedRho, ChargedEpsilon: e.ChargedEpsilon, ChargedDelta: e.ChargedDelta}, "kind", e.Budget)
}

// UnmarshalJSON reads an entry in the ledger file's format (every ledger
// written so far): the budget is decoded and validated by calibrate and
// must have the entry's kind; an unknown member is an error.
func (e *Entry) UnmarshalJSON(data []byte) error {
	b, own, err := calibrate.UnmarshalInline(data)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(own))
	dec.DisallowUnknownFields()
	var j entryJSON
	if err := dec.Decode(&j); err != nil {
		return err
	}
	if j.Kind != b.Kind() {
		return errorf("an entry of kind %q records the budget %v", j.Kind, b)
	}
	*e = Entry{Time: j.Time, Label: j.Label, Budget: b,
		ChargedRho: j.ChargedRho, ChargedEpsilon: j.ChargedEpsilon, ChargedDelta: j.ChargedDelta}
	return nil
}

// File is a ledger's content.
type File struct {
	Limit Limit   `json:"limit"`
	Spent []Entry `json:"spent"`
}

// Total returns the composed spend Σ charges (in the limit's unit).
func (f *File) Total() Limit {
	var t Limit
	for _, e := range f.Spent {
		t.Rho += e.ChargedRho
		t.Epsilon += e.ChargedEpsilon
		t.Delta += e.ChargedDelta
	}
	return t
}

// Status is a ledger's state after a check or a spend.
type Status struct {
	// Limit is the ledger's total budget.
	Limit Limit
	// Spent is the composed spend, including the charge when it was
	// recorded (Spend) or would be (Check).
	Spent Limit
	// Remaining is Limit − Spent, component-wise.
	Remaining Limit
	// Releases is the number of recorded releases (with the charge).
	Releases int
}

// Status returns the ledger's state: its limit, the composed spend of its
// entries, what remains and the number of releases.
func (f *File) Status() Status {
	t := f.Total()
	return Status{Limit: f.Limit, Spent: t, Releases: len(f.Spent),
		Remaining: Limit{Rho: f.Limit.Rho - t.Rho, Epsilon: f.Limit.Epsilon - t.Epsilon, Delta: f.Limit.Delta - t.Delta}}
}

// Left is what remains of the limit in the ledger's unit, each component
// at least 0 (Remaining is negative where a ledger written by hand spends
// more than its limit).
func (s Status) Left() Limit {
	r := s.Remaining
	return Limit{Rho: math.Max(r.Rho, 0), Epsilon: math.Max(r.Epsilon, 0), Delta: math.Max(r.Delta, 0)}
}

// String states the limit, the spend and what remains, all in the
// ledger's unit: "limit rho=1, spent rho=0.9 over 3 release(s), rho=0.1
// remains".
func (s Status) String() string {
	return fmt.Sprintf("limit %s, spent %s over %d release(s), %s remains", s.Limit, s.Spent.In(s.Limit), s.Releases, s.Left().In(s.Limit))
}

// parse reads and validates a ledger's bytes (File.UnmarshalJSON); errors
// name the file.
func parse(path string, b []byte) (*File, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		return nil, errorf("%s is not a valid ledger: %v (a new ledger is {\"limit\": {\"rho\": R}} or {\"limit\": {\"epsilon\": E, \"delta\": D}})", path, err)
	}
	if dec.More() {
		return nil, errorf("%s has content after the ledger object", path)
	}
	var f File
	if err := f.UnmarshalJSON(raw); err != nil {
		return nil, errorf("%s: %s", path, bare(err))
	}
	return &f, nil
}

// maxFileBytes bounds what Read reads: about five million entries, far
// beyond any real ledger, and a refusal instead of an out-of-memory crash
// for a path that names something huge.
const maxFileBytes = 1 << 30

// Read returns the ledger at path without locking (a consistent snapshot,
// since writes are atomic renames). A symbolic link is followed.
// It refuses a path that is not a regular file (a FIFO or a device would
// block or never end) and a file larger than 1 GiB.
func Read(path string) (*File, error) {
	// Stat before opening: opening a FIFO would wait for a writer.
	if fi, err := os.Stat(path); err != nil {
		return nil, openError(path, err)
	} else if !fi.Mode().IsRegular() {
		return nil, errorf("budget ledger %s is not a regular file (%s)", path, fi.Mode().Type())
	}
	fh, err := os.Open(path)
	if err != nil {
		return nil, openError(path, err)
	}
	defer fh.Close()
	fi, err := fh.Stat()
	if err != nil {
		return nil, fmt.Errorf("ledger: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return nil, errorf("budget ledger %s is not a regular file (%s)", path, fi.Mode().Type())
	}
	if fi.Size() > maxFileBytes {
		return nil, errorf("budget ledger %s has %d bytes, more than any ledger (at most %d)", path, fi.Size(), maxFileBytes)
	}
	b, err := io.ReadAll(io.LimitReader(fh, maxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("ledger: %w", err)
	}
	if len(b) > maxFileBytes {
		return nil, errorf("budget ledger %s has more than %d bytes, more than any ledger", path, maxFileBytes)
	}
	return parse(path, b)
}

// openError words a failure to open or resolve the ledger at path.
func openError(path string, err error) error {
	if errors.Is(err, os.ErrNotExist) {
		return errorf("budget ledger %s does not exist; create it with the data set's total budget, e.g. dpsolve ledger create %s --rho 1 (or write {\"limit\": {\"rho\": 1}} into it)", path, path)
	}
	return fmt.Errorf("ledger: %w", err)
}

// resolve returns the file path names (symbolic links resolved, absolute)
// and its FileInfo; it refuses a name that is not a regular file or whose
// file has more than one hard link (package doc).
func resolve(path string) (string, os.FileInfo, error) {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", nil, openError(path, err)
	}
	if real, err = filepath.Abs(real); err != nil {
		return "", nil, fmt.Errorf("ledger: %w", err)
	}
	fi, err := os.Stat(real)
	if err != nil {
		return "", nil, openError(path, err)
	}
	if err := checkFile(path, real, fi); err != nil {
		return "", nil, err
	}
	return real, fi, nil
}

// checkFile refuses a ledger that is not a regular file or is hard-linked.
func checkFile(path, real string, fi os.FileInfo) error {
	if !fi.Mode().IsRegular() {
		return errorf("budget ledger %s is not a regular file (%s)", path, fi.Mode().Type())
	}
	if n := linkCount(fi); n > 1 {
		via := ""
		if real != path {
			via = " (" + real + ")"
		}
		return errorf("budget ledger %s%s has %d hard links: a charge would replace one name and leave the others on the old file, forking the budget; keep one name and use symbolic links for the others; nothing was charged", path, via, n)
	}
	return nil
}

// Create writes a new, empty ledger whose limit is the given budget (a ρ
// ledger for ρ-zCDP, an ε or (ε,δ) ledger otherwise); it fails if path
// exists (it never overwrites) or the budget is invalid. The file is
// synced before Create returns; a failed write removes it.
func Create(path string, limit calibrate.Budget) error {
	if limit.IsZero() {
		return errorf("invalid ledger limit: %v", calibrate.ErrNoBudget)
	}
	b, err := json.MarshalIndent(File{Limit: Cost(limit), Spent: []Entry{}}, "", "  ")
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		if errors.Is(err, os.ErrExist) {
			return errorf("budget ledger %s already exists", path)
		}
		return fmt.Errorf("ledger: %w", err)
	}
	_, err = f.Write(append(b, '\n'))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path) // never leave a torn ledger that a retry would refuse to replace
		return fmt.Errorf("ledger: %w", err)
	}
	if d, err := os.Open(filepath.Dir(path)); err == nil { // make the new name durable
		d.Sync()
		d.Close()
	}
	return nil
}

// evaluate returns the status with b's charge added, or ErrExceeded with a
// message that states the limit, the spend and what remains, all in the
// ledger's unit.
func evaluate(path string, f *File, b calibrate.Budget) (Status, Limit, error) {
	add, err := InUnit(b, f.Limit)
	if err != nil {
		return Status{}, Limit{}, err
	}
	prev := f.Status()
	t := prev.Spent
	t.Rho += add.Rho
	t.Epsilon += add.Epsilon
	t.Delta += add.Delta
	st := Status{Limit: f.Limit, Spent: t, Releases: len(f.Spent) + 1,
		Remaining: Limit{Rho: f.Limit.Rho - t.Rho, Epsilon: f.Limit.Epsilon - t.Epsilon, Delta: f.Limit.Delta - t.Delta}}
	over := func(spent, limit float64) bool { return spent > limit*(1+slack) }
	if over(t.Rho, f.Limit.Rho) || over(t.Epsilon, f.Limit.Epsilon) || over(t.Delta, f.Limit.Delta) {
		cost := add.In(f.Limit)
		if own := Cost(b).String(); own != cost {
			cost = own + ", that is " + cost + " in this ledger's unit"
		}
		return st, add, fmt.Errorf("ledger: %w: %w: %s: this release costs %s but %s of the limit %s is already spent over %d release(s) and %s remains; nothing was released",
			ErrInput, ErrExceeded, path, cost, prev.Spent.In(f.Limit), f.Limit, len(f.Spent), prev.Left().In(f.Limit))
	}
	return st, add, nil
}

// Check reports whether a release under budget b would fit in the ledger at path, without
// recording it (a dry run). It returns an error wrapping ErrExceeded when it
// would not, and refuses a ledger Spend would refuse (a hard-linked file).
func Check(path string, b calibrate.Budget) (Status, error) {
	real, _, err := resolve(path)
	if err != nil {
		return Status{}, err
	}
	f, err := Read(real)
	if err != nil {
		return Status{}, err
	}
	st, _, err := evaluate(path, f, b)
	return st, err
}

// Spend records a release under budget b (labelled) in the ledger at path if it fits, under
// an exclusive lock, and returns the new status; when it does not fit it
// records nothing and returns an error wrapping ErrExceeded. Call it before
// drawing any noise. It is SpendContext with a context never cancelled.
func Spend(path string, b calibrate.Budget, label string) (Status, error) {
	return SpendContext(context.Background(), path, b, label)
}

// SpendContext is Spend that charges only if ctx is not cancelled: it
// checks ctx under the lock, immediately before the new ledger replaces
// the old one. When ctx is cancelled it returns an error wrapping
// ctx.Err() and the ledger is unchanged, byte for byte.
func SpendContext(ctx context.Context, path string, b calibrate.Budget, label string) (Status, error) {
	real, fi, unlock, err := lockLedger(path)
	if err != nil {
		return Status{}, err
	}
	defer unlock()
	f, err := Read(real)
	if err != nil {
		return Status{}, err
	}
	st, add, err := evaluate(path, f, b)
	if err != nil {
		return st, err
	}
	f.Spent = append(f.Spent, Entry{
		Time: time.Now().UTC().Format(time.RFC3339Nano), Label: label, Budget: b,
		ChargedRho: add.Rho, ChargedEpsilon: add.Epsilon, ChargedDelta: add.Delta,
	})
	if err := writeAtomic(ctx, real, fi, f); err != nil {
		return Status{}, err
	}
	return st, nil
}

// lockLedger resolves path, locks the file it names and returns the
// resolved path, the file's FileInfo and the release of the locks. Because
// a charge renames a new file over the old, a waiter may get the lock of a
// file no longer named by the path: it then starts over (package doc).
func lockLedger(path string) (string, os.FileInfo, func(), error) {
	for {
		real, _, err := resolve(path)
		if err != nil {
			return "", nil, nil, err
		}
		_, unlockSide, err := lock(real+".lock", os.O_RDWR|os.O_CREATE)
		if err != nil {
			return "", nil, nil, err
		}
		locked, unlockFile, err := lock(real, os.O_RDONLY)
		if err != nil {
			unlockSide()
			return "", nil, nil, err
		}
		unlock := func() { unlockFile(); unlockSide() }
		named, err1 := os.Lstat(real)
		if err1 == nil && os.SameFile(locked, named) {
			if err := checkFile(path, real, named); err != nil {
				unlock()
				return "", nil, nil, err
			}
			return real, named, unlock, nil
		}
		unlock()
		if err1 != nil && !errors.Is(err1, os.ErrNotExist) {
			return "", nil, nil, fmt.Errorf("ledger: %w", err1)
		}
	}
}

// writeAtomic writes f to path by a synced temporary file and a rename;
// the new file gets old's mode and group. ctx is checked last before the
// rename: a cancelled write leaves path as it was.
func writeAtomic(ctx context.Context, path string, old os.FileInfo, f *File) error {
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("ledger: %w", err)
	}
	name := tmp.Name()
	ok := false
	defer func() {
		if !ok {
			tmp.Close()
			os.Remove(name)
		}
	}()
	if err := keepOwnership(tmp, old); err != nil {
		return errorf("%s: cannot keep the ledger's mode and group: %v; nothing was charged", path, err)
	}
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("ledger: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("ledger: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("ledger: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("ledger: not charged: %w", err)
	}
	if err := os.Rename(name, path); err != nil {
		return fmt.Errorf("ledger: %w", err)
	}
	ok = true
	if d, err := os.Open(dir); err == nil { // make the rename durable
		d.Sync()
		d.Close()
	}
	return nil
}
