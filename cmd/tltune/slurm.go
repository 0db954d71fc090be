package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"text/template"
)

func init() {
	register(&command{
		name:    "slurm",
		summary: "write an sbatch script that sweeps a suite as a Slurm job array, one shard per task, and merges the shards in a job after them",
		usage:   "SUITE.toml|NAME --array N [--dir DIR] [-o SCRIPT] [--partition P] [--gpus-per-task G] [--time LIMIT] [--account A] [--sbatch OPTION]... [--tltune PATH] [-- SWEEP FLAGS]",
		run:     slurmCmd,
	})
}

// slurmFlags are the flags of `tltune slurm`.
type slurmFlags struct {
	array       int
	dir         string
	script      string
	partition   string
	account     string
	timeLimit   string
	gpusPerTask int
	sbatch      listFlag
	tltune      string
}

// sweepFlagsSetByScript are the sweep flags the script gives each shard.
var sweepFlagsSetByScript = []string{"shard", "campaign", "db", "resume"}

func slurmCmd(c *context, args []string) int {
	own, sweepArgs, _ := cutArgs(args, "--")
	var f slurmFlags
	fs := c.flags()
	fs.IntVar(&f.array, "array", 0, "shards: tasks of the job array (required)")
	fs.StringVar(&f.dir, "dir", "", "the campaign's folder, on a file system the nodes share: the script, shard stores, logs, the merged store (default: tltune-SUITE in the current folder)")
	fs.StringVar(&f.script, "o", "", "write the script to `FILE` (default: DIR/campaign.sbatch); a folder may hold several, e.g. one that tunes and one that re-measures each night")
	fs.StringVar(&f.partition, "partition", "", "Slurm partition of both jobs")
	fs.StringVar(&f.account, "account", "", "Slurm account of both jobs")
	fs.StringVar(&f.timeLimit, "time", "", "time limit of each job, as sbatch --time takes it (e.g. 2:00:00)")
	fs.IntVar(&f.gpusPerTask, "gpus-per-task", 0, "GPUs of each shard (sbatch --gpus-per-task); the merge takes none")
	fs.Var(&f.sbatch, "sbatch", "an sbatch option for both jobs, as written after #SBATCH (repeatable), e.g. --sbatch=--constraint=h100")
	fs.StringVar(&f.tltune, "tltune", "", "the tltune the nodes run (default: this one)")
	pos, status, ok := parseInterleaved(c, fs, own)
	if !ok {
		return status
	}
	if err := f.check(pos); err != nil {
		return c.usageError("%v", err)
	}
	// The flags after -- are sweep's, and their errors say so; the suite
	// is slurm's argument.
	sweepCtx := &context{stdout: c.stdout, stderr: c.stderr, cmd: commands["sweep"]}
	sf, suitePath, status, ok := parseSweepFlags(sweepCtx, append([]string{pos[0]}, sweepArgs...))
	if !ok {
		return status
	}
	sw, status, ok := loadSweep(c, sf, suitePath)
	if !ok {
		return status
	}
	for _, name := range sweepFlagsSetByScript {
		if sw.flags.given[name] {
			return c.usageError("--%s is the script's to set for each shard; leave it out of the sweep flags", name)
		}
	}
	if n := len(sw.suite.Cases); f.array > n {
		return c.usageError("--array %d: %s has %d shapes; give at most %d shards", f.array, sw.suite.Name, n, n)
	}
	// A re-measurement re-times the campaign folder's tuning table: each
	// shard's store starts empty.
	stored := sw.flags.remeasure && !sw.flags.given["stored"]
	script, err := f.write(args, pos[0], sweepArgs, stored)
	if err != nil {
		return c.fail(err)
	}
	fmt.Fprintf(c.stdout, "wrote %s: %s in %d shards\nsubmit it with: bash %s\n", script, sw.suite.Name, f.array, shellQuote(script))
	return exitOK
}

// cutArgs splits args at the first sep: the command's own arguments and
// those it passes on.
func cutArgs(args []string, sep string) (before, after []string, found bool) {
	i := slices.Index(args, sep)
	if i < 0 {
		return args, nil, false
	}
	return args[:i], args[i+1:], true
}

func (f *slurmFlags) check(pos []string) error {
	switch {
	case len(pos) != 1:
		return errors.New("name one suite file (e.g. configs/suites/nightly.toml, or nightly for the shipped one); sweep flags go after --")
	case f.array < 1:
		return errors.New("--array N is required: the number of shards (tasks of the job array), at least 1")
	case f.gpusPerTask < 0:
		return fmt.Errorf("--gpus-per-task %d must be ≥ 0", f.gpusPerTask)
	}
	if f.timeLimit != "" && !sbatchTime.MatchString(f.timeLimit) {
		return fmt.Errorf("--time %q: give it as sbatch takes it: minutes, minutes:seconds, hours:minutes:seconds, days-hours, days-hours:minutes or days-hours:minutes:seconds (e.g. 2:00:00)", f.timeLimit)
	}
	for _, o := range []struct{ flag, value string }{{"--partition", f.partition}, {"--account", f.account}} {
		if strings.Trim(o.value, slurmNameChars) != "" {
			return fmt.Errorf("%s %q: a Slurm name is letters, digits, '_', '-' and '.' (commas between several); the script's #SBATCH line would misread the rest", o.flag, o.value)
		}
	}
	for _, o := range f.sbatch {
		if !strings.HasPrefix(o, "-") || strings.ContainsAny(o, "\n\r") {
			return fmt.Errorf("--sbatch %q: give one sbatch option, e.g. --sbatch=--constraint=h100", o)
		}
	}
	return nil
}

// sbatchTime matches the time limits sbatch --time takes: minutes,
// minutes:seconds, hours:minutes:seconds, days-hours, days-hours:minutes
// and days-hours:minutes:seconds, and no limit (unlimited, infinite). A
// limit sbatch refused would only show when the campaign is submitted.
var sbatchTime = regexp.MustCompile(`^(?i:\d+(:\d+){0,2}|\d+-\d+(:\d+){0,2}|unlimited|infinite)$`)

// slurmNameChars are the characters of a partition or account name that
// neither sbatch (which splits #SBATCH lines at blanks and reads quotes)
// nor a shell reads as anything but the name; commas separate several.
const slurmNameChars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.,"

// campaignScript is the values the script template reads.
type campaignScript struct {
	Command   string // the tltune slurm command line that wrote it
	Path      string // the script itself
	Name      string // the jobs' name
	Suite     string
	Shards    int
	Dir       string
	Tltune    string
	Header    []string // #SBATCH options of both jobs
	ShardOpts string   // sbatch options of the array only
	SweepArgs string
	Stored    bool // the shards re-measure DIR/tuning.json
}

// write writes the campaign's script into its folder and returns its path;
// args are the command's, for the script to say what wrote it.
func (f *slurmFlags) write(args []string, suitePath string, sweepArgs []string, stored bool) (string, error) {
	name := strings.TrimSuffix(filepath.Base(suitePath), ".toml")
	if _, err := os.Stat(suitePath); err == nil { // a file, not a shipped suite's name
		abs, err := filepath.Abs(suitePath)
		if err != nil {
			return "", err
		}
		suitePath = abs
	}
	dir := f.dir
	if dir == "" {
		dir = "tltune-" + name
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	exe := f.tltune
	if exe == "" {
		if exe, err = os.Executable(); err != nil {
			return "", fmt.Errorf("finding this tltune for the nodes: %v; pass --tltune PATH", err)
		}
	}
	if exe, err = filepath.Abs(exe); err != nil {
		return "", err
	}
	path := filepath.Join(dir, "campaign.sbatch")
	if f.script != "" {
		if path, err = filepath.Abs(f.script); err != nil {
			return "", err
		}
	}
	s := campaignScript{
		Command: "tltune slurm " + quoteAll(args),
		Path:    path,
		Stored:  stored,
		Name:    "tltune-" + name,
		Suite:   shellQuote(suitePath),
		Shards:  f.array,
		Dir:     shellQuote(dir),
		Tltune:  shellQuote(exe),
	}
	s.Header = f.header()
	if f.gpusPerTask > 0 {
		s.ShardOpts = fmt.Sprintf(" --gpus-per-task=%d", f.gpusPerTask)
	}
	s.SweepArgs = quoteAll(sweepArgs)
	var b strings.Builder
	if err := campaignTemplate.Execute(&b, s); err != nil {
		return "", err
	}
	for _, d := range []string{dir, filepath.Dir(path)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return "", err
		}
	}
	return s.Path, writeOutput(nil, s.Path, func(w io.Writer) error {
		_, err := io.WriteString(w, b.String())
		return err
	})
}

func quoteAll(args []string) string {
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = shellQuote(a)
	}
	return strings.Join(quoted, " ")
}

// header is the #SBATCH options both jobs take.
func (f *slurmFlags) header() []string {
	var h []string
	for _, o := range []struct{ flag, value string }{
		{"--partition", f.partition}, {"--account", f.account}, {"--time", f.timeLimit},
	} {
		if o.value != "" {
			h = append(h, o.flag+"="+o.value)
		}
	}
	return append(h, f.sbatch...)
}

// shellQuote quotes s for bash when it needs quoting.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=,+@%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// campaignTemplate is the script: run with bash it submits the shards as a
// job array and the merge as a job that starts when they have all ended
// (afterany: a failed shard's stored results still come home); Slurm runs
// it again as each shard and as the merge.
var campaignTemplate = template.Must(template.New("campaign").Parse(`#!/bin/bash
# A tltune campaign: {{.Suite}} in {{.Shards}} shards on Slurm, written by
#   {{.Command}}
#
# Submit it with
#   bash {{.Path}}
# which submits the shards as a job array and the merge as a job that starts
# when they have all ended. Each shard sweeps its share of the suite into
# its own store; the merge joins them into one run in {{.Dir}}/results.db
# and writes its tuning table to {{.Dir}}/tuning.json. Logs: {{.Dir}}/logs.
#SBATCH --job-name={{.Name}}
{{- range .Header}}
#SBATCH {{.}}
{{- end}}
set -euo pipefail

tltune={{.Tltune}}
dir={{.Dir}}
shards={{.Shards}}

case "${1:-submit}" in
submit)
	if [ -n "${SLURM_JOB_ID:-}" ]; then
		echo "$0: submit the campaign with 'bash $0', not with sbatch" >&2
		exit 2
	fi
{{- if .Stored}}
	if [ ! -f "$dir/tuning.json" ]; then
		echo "$0: no $dir/tuning.json to re-measure: tune the suite into $dir first" >&2
		exit 2
	fi
{{- end}}
	mkdir -p "$dir/logs" "$dir/shards"
	array=$(sbatch --parsable --array=1-"$shards"{{.ShardOpts}} --output="$dir/logs/shard-%A-%a.out" "$0" shard)
	array=${array%%;*}
	merge=$(sbatch --parsable --dependency=afterany:"$array" --output="$dir/logs/merge-$array.out" "$0" merge "$array")
	echo "shards: job array $array; merge: job ${merge%%;*}, after them; merged store: $dir/results.db"
	;;
shard)
	# The tasks of one array share its id: their runs merge into one.
	exec "$tltune" sweep {{.Suite}} --shard "$SLURM_ARRAY_TASK_ID/$shards" \
		--campaign "${SLURM_CLUSTER_NAME:-slurm}-$SLURM_ARRAY_JOB_ID" \
		--db "$dir/shards/$SLURM_ARRAY_JOB_ID/$SLURM_ARRAY_TASK_ID.db" --quiet{{if .Stored}} --stored "$dir/tuning.json"{{end}}{{if .SweepArgs}} {{.SweepArgs}}{{end}}
	;;
merge)
	array=$2
	shopt -s nullglob
	stores=("$dir/shards/$array"/*.db)
	status=0
	if [ "${#stores[@]}" -lt "$shards" ]; then
		echo "$0: ${#stores[@]} of $shards shards stored results; see $dir/logs/shard-$array-*.out" >&2
		status=1
	fi
	if [ "${#stores[@]}" -gt 0 ]; then
		"$tltune" merge "$dir/results.db" "${stores[@]}"
		"$tltune" table --db "$dir/results.db" -o "$dir/tuning.json"
	fi
	exit "$status"
	;;
*)
	echo "usage: bash $0" >&2
	exit 2
	;;
esac
`))
