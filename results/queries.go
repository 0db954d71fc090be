package results

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"tltune/compiler/tuning"
	"tltune/internal/speak"
)

// envFields are an environment's columns; envDest scans them.
const envFields = `e.device, e.vendor, e.driver, e.runtime, e.host, e.tltune_version, e.git_commit,
	e.compiler_version, coalesce(e.core_clock_mhz, 0), coalesce(e.memory_clock_mhz, 0)`

// measurementEnvFields are envFields of a measurement's environment, me.
var measurementEnvFields = strings.ReplaceAll(envFields, "e.", "me.")

func envDest(e *Environment) []any {
	return []any{&e.Device, &e.Vendor, &e.Driver, &e.Runtime, &e.Host, &e.Version, &e.Commit,
		&e.CompilerVersion, &e.CoreClockMHz, &e.MemoryClockMHz}
}

// runColumns selects a run with its environment; scanRun reads them.
const runColumns = `SELECT r.id, r.uuid, r.started_at, r.finished_at, r.command_line, r.tag, r.op, r.status, ` +
	ownerFields + `, r.heartbeat_at, ` + envFields + ` FROM runs r JOIN environments e ON e.id = r.environment_id`

type scanner interface{ Scan(dest ...any) error }

func scanRun(row scanner) (Run, error) {
	var r Run
	var started string
	var finished, heartbeat sql.NullString
	dest := slices.Concat([]any{&r.ID, &r.UUID, &started, &finished, &r.CommandLine, &r.Tag, &r.Op, &r.Status},
		ownerDest(&r.Owner), []any{&heartbeat}, envDest(&r.Env))
	if err := row.Scan(dest...); err != nil {
		return r, err
	}
	var err error
	if r.StartedAt, err = parseTime(started); err != nil {
		return r, err
	}
	if finished.Valid {
		if r.FinishedAt, err = parseTime(finished.String); err != nil {
			return r, err
		}
	}
	if heartbeat.Valid {
		r.Heartbeat, err = parseTime(heartbeat.String)
	}
	return r, err
}

func parseTime(s string) (time.Time, error) { return time.Parse(time.RFC3339Nano, s) }

// Run returns the run with this id, or an error wrapping ErrNoRun.
func (s *Store) Run(ctx context.Context, id int64) (Run, error) {
	r, err := scanRun(s.db.QueryRowContext(ctx, runColumns+` WHERE r.id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return r, fmt.Errorf("%w %d in %s", ErrNoRun, id, s.path)
	}
	return r, s.describe(err)
}

// RunByUUID returns the run with this UUID, or an error wrapping ErrNoRun.
func (s *Store) RunByUUID(ctx context.Context, uuid string) (Run, error) {
	r, err := scanRun(s.db.QueryRowContext(ctx, runColumns+` WHERE r.uuid = ?`, uuid))
	if errors.Is(err, sql.ErrNoRows) {
		return r, fmt.Errorf("%w %s in %s", ErrNoRun, uuid, s.path)
	}
	return r, s.describe(err)
}

// LatestRun returns the most recently started run, finished or not.
func (s *Store) LatestRun(ctx context.Context) (Run, error) {
	r, err := scanRun(s.db.QueryRowContext(ctx, runColumns+` ORDER BY r.id DESC LIMIT 1`))
	if errors.Is(err, sql.ErrNoRows) {
		return r, fmt.Errorf("%w: %s holds no runs yet", ErrNoRun, s.path)
	}
	return r, s.describe(err)
}

// Runs returns the runs with the given tag, newest first; an empty tag
// returns every run.
func (s *Store) Runs(ctx context.Context, tag string) ([]Run, error) {
	return collect(ctx, s, scanRun, runColumns+` WHERE ? = '' OR r.tag = ? ORDER BY r.id DESC`, tag, tag)
}

// collect runs a query and scans each row with scan.
func collect[T any](ctx context.Context, s *Store, scan func(scanner) (T, error), query string, args ...any) ([]T, error) {
	rows, err := s.db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, s.describe(err)
	}
	defer rows.Close()
	var all []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, s.describe(err)
		}
		all = append(all, v)
	}
	return all, s.describe(rows.Err())
}

// ResolveRun finds the run a user named: "last" is the latest run, a number
// is a run id, anything else a tag (its latest run).
func (s *Store) ResolveRun(ctx context.Context, ref string) (Run, error) {
	if ref == "last" {
		return s.LatestRun(ctx)
	}
	if id, err := strconv.ParseInt(ref, 10, 64); err == nil {
		return s.Run(ctx, id)
	}
	runs, err := s.Runs(ctx, ref)
	if err != nil {
		return Run{}, err
	}
	if len(runs) == 0 {
		return Run{}, fmt.Errorf("%w: no run id or tag %q in %s", ErrNoRun, ref, s.path)
	}
	return runs[0], nil
}

// problemColumns are the columns of the problem key in configs and
// pruned, in the order of speak.Problem: problemDest scans them,
// problemArgs gives their values. Schema steps 4 to 6 had all but the
// last, precision (step 7).
var problemColumns = []string{"op", "trans", "dtype", "acc", "m", "n", "k", "alpha", "beta", "atomic", "layout", "precision"}

// problemFields are problemColumns of table c. Queries also partition and
// sort by them.
var problemFields = "c." + strings.Join(problemColumns, ", c.")

func problemDest(p *speak.Problem) []any {
	return []any{&p.Op, &p.Trans, &p.Dtype, &p.Acc, &p.M, &p.N, &p.K, &p.Alpha, &p.Beta, &p.Atomic, &p.Layout, &p.Precision}
}

func problemArgs(p speak.Problem) []any {
	return []any{p.Op, p.Trans, p.Dtype, p.Acc, p.M, p.N, p.K, p.Alpha, p.Beta, p.Atomic, p.Layout, p.Precision}
}

// ordinals is "1, 2, ..., n": the ORDER BY of a compound query by its
// first n result columns.
func ordinals(n int) string {
	s := make([]string, n)
	for i := range s {
		s[i] = strconv.Itoa(i + 1)
	}
	return strings.Join(s, ", ")
}

// measurementFields are a measurement's columns with its configuration's
// and environment's, from measurementFrom; scanMeasurement reads them.
var measurementFields = `m.id, m.run_id, ` + problemFields + `,
	c.params, c.source_hash, m.outcome, m.message, m.samples_ns,
	coalesce(m.median_ns, 0), coalesce(m.min_ns, 0), coalesce(m.max_ns, 0), coalesce(m.iqr_ns, 0),
	coalesce(m.ci_low_ns, 0), coalesce(m.ci_high_ns, 0), coalesce(m.gflops, 0), coalesce(m.gbs, 0),
	m.verified, m.verify_error, m.seed, m.measured_at, m.device, m.raced, m.retimed, ` + measurementEnvFields

const measurementFrom = ` FROM measurements m JOIN configs c ON c.id = m.config_id
	JOIN environments me ON me.id = m.environment_id`

func scanMeasurement(row scanner) (Measurement, error) {
	var m Measurement
	var params, measured string
	var samples []byte
	var verifyErr sql.NullFloat64
	c := &m.Config
	dest := append([]any{&m.ID, &m.RunID}, problemDest(&c.Problem)...)
	dest = append(dest, &params, &c.SourceHash, &m.Outcome, &m.Message, &samples,
		&m.MedianNS, &m.MinNS, &m.MaxNS, &m.IQRNS, &m.CILowNS, &m.CIHighNS, &m.GFLOPS, &m.GBS,
		&m.Verified, &verifyErr, &m.Seed, &measured, &m.Device, &m.Raced, &m.Retimed)
	dest = append(dest, envDest(&m.Env)...)
	if err := row.Scan(dest...); err != nil {
		return m, err
	}
	if err := json.Unmarshal([]byte(params), &c.Params); err != nil {
		return m, fmt.Errorf("measurement %d: params: %v", m.ID, err)
	}
	m.VerifyError = math.NaN()
	if verifyErr.Valid {
		m.VerifyError = verifyErr.Float64
	}
	var err error
	if m.SamplesNS, err = decodeSamples(samples); err != nil {
		return m, fmt.Errorf("measurement %d: %v", m.ID, err)
	}
	m.MeasuredAt, err = parseTime(measured)
	return m, err
}

// Measurements returns every measurement of a run, in the order recorded.
func (s *Store) Measurements(ctx context.Context, runID int64) ([]Measurement, error) {
	return collect(ctx, s, scanMeasurement, "SELECT "+measurementFields+measurementFrom+` WHERE m.run_id = ? ORDER BY m.id`, runID)
}

// MeasuredConfigs returns the configurations a run has recorded, whatever
// their outcome: a resumed run skips them.
func (s *Store) MeasuredConfigs(ctx context.Context, runID int64) (map[Config]Outcome, error) {
	ms, err := s.Measurements(ctx, runID)
	if err != nil {
		return nil, err
	}
	done := make(map[Config]Outcome, len(ms))
	for _, m := range ms {
		done[m.Config] = m.Outcome
	}
	return done, nil
}

// PrunedCounts returns what pruning rejected in a run, per problem and
// rule: the rules' counts and the configurations the recipe refused
// (stored as measurements, rule RecipeRule), in problem and rule order.
func (s *Store) PrunedCounts(ctx context.Context, runID int64) ([]PrunedCount, error) {
	return collect(ctx, s, scanPrunedCount, `SELECT `+problemFields+`, c.rule, c.count, c.example
		FROM pruned c WHERE c.run_id = ?1
		UNION ALL
		SELECT `+problemFields+`, `+messageRule+`, count(*), min(m.message)
		FROM measurements m JOIN configs c ON c.id = m.config_id
		WHERE m.run_id = ?1 AND m.outcome = 'pruned'
		GROUP BY `+problemFields+`, `+messageRule+`
		ORDER BY `+ordinals(len(problemColumns)+1), runID)
}

// RunProblems returns the problems a run recorded anything of
// (measurements or pruning counts), in problem order.
func (s *Store) RunProblems(ctx context.Context, runID int64) ([]speak.Problem, error) {
	return collect(ctx, s, scanProblem, `SELECT `+problemFields+`
		FROM measurements m JOIN configs c ON c.id = m.config_id WHERE m.run_id = ?1
		UNION
		SELECT `+problemFields+` FROM pruned c WHERE c.run_id = ?1
		ORDER BY `+ordinals(len(problemColumns)), runID)
}

func scanProblem(row scanner) (speak.Problem, error) {
	var p speak.Problem
	err := row.Scan(problemDest(&p)...)
	return p, err
}

// messageRule is the rule of a pruned measurement: its message is
// "rule: details" (a row without one is a recipe's refusal).
const messageRule = `(CASE WHEN instr(m.message, ':') > 0 THEN substr(m.message, 1, instr(m.message, ':') - 1) ELSE '` + RecipeRule + `' END)`

func scanPrunedCount(row scanner) (PrunedCount, error) {
	var c PrunedCount
	err := row.Scan(append(problemDest(&c.Problem), &c.Rule, &c.Count, &c.Example)...)
	return c, err
}

// A Filter narrows BestPerShape and TuningTable. Zero fields match all.
type Filter struct {
	RunID  int64       // only this run
	Device DeviceMatch // only these devices
	Op     string      // "gemm", "gemv" or "ger"
}

// A DeviceMatch selects stored devices by name: every device whose name
// contains Name, ignoring case, or with Exact the device of exactly that
// name. The zero value matches every device.
type DeviceMatch struct {
	Name  string
	Exact bool
}

// ThisDevice matches exactly the named device.
func ThisDevice(name string) DeviceMatch { return DeviceMatch{Name: name, Exact: true} }

// matchDevice is the SQL condition of a DeviceMatch on column e.device,
// with parameters ?name and ?exact.
func matchDevice(name, exact string) string {
	return fmt.Sprintf(`(CASE WHEN %[2]s THEN e.device = %[1]s ELSE instr(lower(e.device), lower(%[1]s)) > 0 END)`, name, exact)
}

// A Best is the fastest ok measurement of one shape on one device.
type Best struct {
	Env Environment // the measurement's
	Measurement
}

// BestPerShape returns, per device and problem (speak.Problem: op, trans,
// types, shape, α, β, atomic update, layout, precision), the ok measurement with the
// lowest median, sorted by device and problem. Other outcomes — wrong
// results above all — are never chosen.
func (s *Store) BestPerShape(ctx context.Context, f Filter) ([]Best, error) {
	return collect(ctx, s, scanBest, `WITH ranked AS (
		SELECT m.id AS id, row_number() OVER (
			PARTITION BY e.device, `+problemFields+`
			ORDER BY m.median_ns, m.id) AS rank
		FROM measurements m
		JOIN configs c ON c.id = m.config_id
		JOIN environments e ON e.id = m.environment_id
		WHERE m.outcome = 'ok'
		  AND (?1 = 0 OR m.run_id = ?1)
		  AND `+matchDevice("?2", "?4")+`
		  AND (?3 = '' OR c.op = ?3))
	SELECT `+measurementFields+measurementFrom+`
		JOIN ranked ON ranked.id = m.id AND ranked.rank = 1
		ORDER BY me.device, `+problemFields,
		f.RunID, f.Device.Name, f.Op, f.Device.Exact)
}

// scanBest reads a measurement with its environment.
func scanBest(row scanner) (Best, error) {
	m, err := scanMeasurement(row)
	return Best{Env: m.Env, Measurement: m}, err
}

// TuningTable builds the tuning table from the best measurements: one entry
// per device and problem.
func (s *Store) TuningTable(ctx context.Context, f Filter) (*tuning.Table, error) {
	best, err := s.BestPerShape(ctx, f)
	if err != nil {
		return nil, err
	}
	t := &tuning.Table{Entries: make([]tuning.Entry, len(best))}
	for i, b := range best {
		t.Entries[i] = tableEntry(b)
	}
	t.Sort()
	if err := t.Validate(); err != nil {
		return nil, fmt.Errorf("%s: stored results do not make a valid tuning table: %v", s.path, err)
	}
	return t, nil
}

func tableEntry(b Best) tuning.Entry {
	c := b.Config
	return tuning.Entry{
		Device: b.Env.Device, Driver: b.Env.Driver, Runtime: b.Env.Runtime,
		Problem: c.Problem, Params: c.Params, MedianNS: b.MedianNS, GFLOPS: b.GFLOPS, GBS: b.GBS, Run: b.RunID,
	}
}

// Ceilings returns the latest ceilings measured on env's device, driver,
// runtime and host. The tltune and compiler versions do not matter: a new
// build does not change what the hardware can do.
func (s *Store) Ceilings(ctx context.Context, env Environment) (Ceilings, error) {
	var c Ceilings
	var at string
	err := s.db.QueryRowContext(ctx, `SELECT coalesce(copy_gbs, 0), coalesce(f32_gflops, 0),
			coalesce(f64_gflops, 0), coalesce(f16_gflops, 0), coalesce(mma_f16_gflops, 0), measured_at
		FROM ceilings c JOIN environments e ON e.id = c.environment_id
		WHERE e.device = ? AND e.driver = ? AND e.runtime = ? AND e.host = ?
		ORDER BY c.measured_at DESC, c.id DESC LIMIT 1`,
		env.Device, env.Driver, env.Runtime, env.Host).Scan(&c.CopyGBS, &c.F32GFLOPS, &c.F64GFLOPS, &c.F16GFLOPS, &c.MMAGFLOPS, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return c, fmt.Errorf("%w for %s (%s %s on %s); run 'tltune peak'", ErrNoCeilings, env.Device, env.Runtime, env.Driver, env.Host)
	}
	if err != nil {
		return c, s.describe(err)
	}
	c.MeasuredAt, err = parseTime(at)
	return c, err
}
