// Package batch runs many dpsolve jobs from a manifest so that a scheduler
// (Slurm job arrays, Kubernetes indexed jobs, or a few processes started by
// hand) can fan them out, and so that a batch interrupted at any point can be
// resubmitted and finish the rest.
//
// A manifest is JSON Lines, one job per line:
//
//	{"id": "county-06037", "command": "solve", "args": ["--workload", "prefix", "--n", "64", "--json"]}
//
// Each job owns the folder OUT/<id>: its stdout and stderr, anything it writes
// through the "{out}" placeholder in its arguments, a lock file, and last a
// status.json (see [Status]) written atomically. The status records the hash
// of the job's manifest line, so a rerun skips exactly the jobs that already
// succeeded with the same line and re-runs the others, while the lock makes
// sure two processes never run one job at once.
//
// Jobs whose command releases private data ([Releases]) are treated
// differently: once such a job may have drawn noise it is never re-run
// automatically, because a second run would spend the privacy budget again.
// Its "started" status is made durable before it is launched, and a job found
// interrupted after that, or that fails, is marked [NeedsReview] for a person
// to decide — unless its failure provably came before any noise (a bad
// command line, or dpsolve release refused by its budget ledger or unable to
// open its inputs; see preNoise in prenoise.go for the proof), when it is
// [Failed] and runs again on the next batch.
package batch
