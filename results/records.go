package results

import (
	"context"
	"crypto/rand"
	"crypto/sha1"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/mattn/go-sqlite3"

	"tltune/compiler/tuning"
	"tltune/internal/speak"
)

// An Environment is where a run was measured. Two runs share an environment
// when every field agrees.
type Environment struct {
	Device          string `json:"device"`
	Vendor          string `json:"vendor"`
	Driver          string `json:"driver"`
	Runtime         string `json:"runtime"` // "opencl" or "levelzero"
	Host            string `json:"host"`
	Version         string `json:"tltune_version"`
	Commit          string `json:"git_commit"`
	CompilerVersion string `json:"compiler_version"`
	CoreClockMHz    int    `json:"core_clock_mhz,omitempty"` // 0 when not readable
	MemoryClockMHz  int    `json:"memory_clock_mhz,omitempty"`
}

// fingerprint identifies the environment: a hash over every field, in the
// struct's fixed order.
func (e Environment) fingerprint() string {
	data, _ := json.Marshal(e) // cannot fail: strings and ints
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// A RunStatus is where a run is in its life.
type RunStatus string

const (
	Running     RunStatus = "running" // going, or killed (finished_at stays empty)
	Done        RunStatus = "done"
	Failed      RunStatus = "failed"
	Interrupted RunStatus = "interrupted" // stopped by the user; resumable
)

// A Run is one invocation of a tuning command, or the shards of one
// campaign, which share its UUID.
type Run struct {
	ID          int64  // this store's number for it
	UUID        string // the same in every store (merge), and in every shard of a campaign
	Env         Environment
	StartedAt   time.Time
	FinishedAt  time.Time // zero while running or when the run was killed
	CommandLine string
	Tag         string
	Op          string // "gemm", "gemv", "ger", "sweep", ...
	Status      RunStatus
	// Owner is the process that began the run or resumed it last, which
	// records into it while it is Running (owner.go); zero in the runs an
	// older tltune began.
	Owner     Owner
	Heartbeat time.Time // the owner's last sign of life
}

// A Config is one configuration of a recipe for one problem, identified by
// everything that went into its kernel source.
type Config struct {
	speak.Problem
	Params     tuning.Params
	SourceHash string // empty when no source was generated (pruned)
}

// An Outcome is how the evaluation of a configuration ended (DESIGN.md §5).
type Outcome string

const (
	OK            Outcome = "ok"
	Pruned        Outcome = "pruned"
	CompileError  Outcome = "compile_error"
	LaunchError   Outcome = "launch_error"
	ResourceError Outcome = "resource_error"
	Timeout       Outcome = "timeout"
	WrongResult   Outcome = "wrong_result"
	DeviceLost    Outcome = "device_lost"
	Crash         Outcome = "crash"
)

// Outcomes lists every outcome, in the order reports count them.
var Outcomes = []Outcome{OK, Pruned, CompileError, LaunchError, ResourceError, Timeout, WrongResult, DeviceLost, Crash}

// A Measurement is one evaluation of a configuration in a run. Timing fields
// are zero when nothing was timed; an OK measurement must have a median.
type Measurement struct {
	ID          int64 // set by the store
	RunID       int64 // set by the store
	Config      Config
	Outcome     Outcome
	Message     string    // compiler or runtime message; empty for ok
	SamplesNS   []float64 // every raw sample, in order of measurement
	MedianNS    float64
	MinNS       float64
	MaxNS       float64
	IQRNS       float64
	CILowNS     float64 // confidence interval of the median
	CIHighNS    float64
	GFLOPS      float64
	GBS         float64
	Verified    bool    // the output was compared with the host reference
	VerifyError float64 // ‖out−ref‖/‖ref‖; NaN when not verified or the output held NaN
	// Raced: an ok timing that stopped early, the configuration clearly
	// slower than the run's best so far; the samples are partial.
	Raced bool
	// Retimed: the timing is the run's final re-timing of its fastest
	// configurations with the full protocol (Store.Retime).
	Retimed    bool
	Seed       int64 // seed of the random inputs
	MeasuredAt time.Time
	// Env is where it was measured; Record takes the run's when it is
	// zero. Device is the device on Env's host, as the runtime numbers it
	// (e.g. opencl:1): a run may time on several devices, and hosts.
	Env    Environment
	Device string
}

// ErrAlreadyMeasured is returned by Record for a configuration the run has
// measured before; a resumed run skips those.
var ErrAlreadyMeasured = errors.New("configuration already measured in this run")

// ErrNoRun is wrapped by queries for a run that does not exist.
var ErrNoRun = errors.New("no such run")

// BeginRun records a new run in env with status Running. r supplies the
// command line, tag, op, start time (zero: now), UUID (empty: a new
// random one), owner (zero: this process, which then keeps the run's
// heartbeat until FinishRun or Close) and heartbeat (zero: now); the
// stored run is returned.
func (s *Store) BeginRun(ctx context.Context, env Environment, r Run) (Run, error) {
	if r.StartedAt.IsZero() {
		r.StartedAt = time.Now()
	}
	if r.UUID == "" {
		r.UUID = NewUUID()
	}
	if r.Owner == (Owner{}) {
		r.Owner = ThisProcess()
	}
	if r.Heartbeat.IsZero() {
		r.Heartbeat = time.Now()
	}
	r.Env, r.Status, r.FinishedAt = env, Running, time.Time{}
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		envID, err := environmentID(ctx, tx, env)
		if err != nil {
			return err
		}
		args := append([]any{envID, formatTime(r.StartedAt), r.CommandLine, r.Tag, r.Op, r.Status, r.UUID},
			ownerValues(r.Owner, r.Heartbeat)...)
		res, err := tx.ExecContext(ctx, `INSERT INTO runs (environment_id, started_at, command_line, tag, op, status, uuid,
				owner_host, owner_pid, owner_start, owner_token, heartbeat_at)
			VALUES (`+placeholders(len(args))+`)`, args...)
		if err != nil {
			return err
		}
		if r.ID, err = res.LastInsertId(); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO run_parts (run_id, part) VALUES (?, ?)`, r.ID, NewUUID())
		return err
	})
	var se sqlite3.Error
	if errors.As(err, &se) && se.ExtendedCode == sqlite3.ErrConstraintUnique {
		return r, fmt.Errorf("%s already holds run %s; resume it instead of beginning it again", s.path, r.UUID)
	}
	if err == nil && r.Owner.Token == ThisProcess().Token {
		s.beat(r.ID)
	}
	return r, s.describe(err)
}

// NewUUID returns a random RFC 4122 (version 4) UUID.
func NewUUID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("crypto/rand: " + err.Error()) // never fails on Linux
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return formatUUID(b)
}

// NameUUID returns the name-based (version 5, SHA-1) UUID of name in
// tltune's namespace: every shard of a campaign derives the same run UUID
// from the campaign's name.
func NameUUID(name string) string {
	sum := sha1.Sum(append(slices.Clip(uuidNamespace[:]), name...))
	var b [16]byte
	copy(b[:], sum[:])
	b[6] = b[6]&0x0f | 0x50
	b[8] = b[8]&0x3f | 0x80
	return formatUUID(b)
}

// uuidNamespace is tltune's UUID namespace (itself a random UUID).
var uuidNamespace = [16]byte{0x6b, 0x1e, 0x7f, 0x3a, 0x52, 0x94, 0x4c, 0x0d, 0x9b, 0x61, 0x2e, 0xa8, 0x40, 0x17, 0xc5, 0xd3}

func formatUUID(b [16]byte) string {
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// environmentID returns the row of env, inserting it when new.
func environmentID(ctx context.Context, tx *sql.Tx, env Environment) (int64, error) {
	var id int64
	err := tx.QueryRowContext(ctx, `INSERT INTO environments (fingerprint, device, vendor, driver, runtime, host,
			tltune_version, git_commit, compiler_version, core_clock_mhz, memory_clock_mhz)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (fingerprint) DO UPDATE SET device = excluded.device
		RETURNING id`,
		env.fingerprint(), env.Device, env.Vendor, env.Driver, env.Runtime, env.Host,
		env.Version, env.Commit, env.CompilerVersion, nullInt(env.CoreClockMHz), nullInt(env.MemoryClockMHz),
	).Scan(&id)
	return id, err
}

// ResumeRun marks a stored run Running again, owned by this process
// (which keeps its heartbeat until FinishRun or Close), so that Record
// accepts its measurements; the run keeps its id, start time and
// measurements. A running run whose owner is alive is refused with a
// *LiveRunError, in the transaction that would take it over: of two
// processes that resume a run at once, one gets it.
func (s *Store) ResumeRun(ctx context.Context, id int64) (Run, error) {
	me := ThisProcess()
	var live *LiveRunError
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		prev, err := scanRun(tx.QueryRowContext(ctx, runColumns+` WHERE r.id = ?`, id))
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("%w %d in %s", ErrNoRun, id, s.path)
		}
		if err != nil {
			return err
		}
		now := time.Now()
		if prev.Status == Running && prev.Owner.alive(prev.Heartbeat, now) {
			live = &LiveRunError{ID: id, Owner: prev.Owner, Heartbeat: prev.Heartbeat}
			return live
		}
		_, err = tx.ExecContext(ctx, `UPDATE runs SET status = ?, finished_at = NULL, `+ownerAssignments+` WHERE id = ?`,
			slices.Concat([]any{Running}, ownerValues(me, now), []any{id})...)
		return err
	})
	if live != nil {
		return Run{}, live
	}
	if err != nil {
		return Run{}, s.describe(err)
	}
	s.beat(id)
	return s.Run(ctx, id)
}

// FinishRun records the end of a run: its final status and time (zero:
// now). A run that another process resumed since this one began or
// resumed it is left as it is (ErrNotOwner).
func (s *Store) FinishRun(ctx context.Context, id int64, status RunStatus, at time.Time) error {
	if status == Running {
		return errors.New("FinishRun: status must be done, failed or interrupted")
	}
	if at.IsZero() {
		at = time.Now()
	}
	s.stopBeat(id)
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		var owner Owner
		err := tx.QueryRowContext(ctx, `SELECT `+ownerFields+` FROM runs r WHERE r.id = ?`, id).Scan(ownerDest(&owner)...)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("%w %d in %s", ErrNoRun, id, s.path)
		}
		if err != nil {
			return err
		}
		if err := checkOwner(id, owner); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE runs SET status = ?, finished_at = ? WHERE id = ?`, status, formatTime(at), id)
		return err
	})
	return s.describe(err)
}

// Record commits one measurement of the running run in its own transaction,
// so it survives whatever happens to the process next. It returns the
// measurement's id, or ErrAlreadyMeasured when the run has this
// configuration already.
func (s *Store) Record(ctx context.Context, runID int64, m Measurement) (int64, error) {
	if err := m.validate(); err != nil {
		return 0, err
	}
	if m.MeasuredAt.IsZero() {
		m.MeasuredAt = time.Now()
	}
	var id int64
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		envID, err := requireRunning(ctx, tx, runID)
		if err != nil {
			return err
		}
		if m.Env != (Environment{}) {
			if envID, err = environmentID(ctx, tx, m.Env); err != nil {
				return err
			}
		}
		configID, err := configID(ctx, tx, m.Config)
		if err != nil {
			return err
		}
		id, err = insertMeasurement(ctx, tx, runID, configID, envID, &m)
		return err
	})
	var se sqlite3.Error
	if errors.As(err, &se) && se.ExtendedCode == sqlite3.ErrConstraintUnique {
		return 0, fmt.Errorf("run %d: %w", runID, ErrAlreadyMeasured)
	}
	return id, s.describe(err)
}

func (m *Measurement) validate() error {
	if !slices.Contains(Outcomes, m.Outcome) {
		return fmt.Errorf("measurement outcome %q is not one of %v", m.Outcome, Outcomes)
	}
	if m.Outcome == OK && !(m.MedianNS > 0) {
		return errors.New("an ok measurement needs a positive median")
	}
	return nil
}

// requireRunning checks that the run is running and that no other
// process owns it, refreshes its heartbeat when this process does, and
// returns its environment.
func requireRunning(ctx context.Context, tx *sql.Tx, runID int64) (envID int64, err error) {
	var status RunStatus
	var owner Owner
	err = tx.QueryRowContext(ctx, `SELECT r.status, r.environment_id, `+ownerFields+` FROM runs r WHERE r.id = ?`, runID).
		Scan(append([]any{&status, &envID}, ownerDest(&owner)...)...)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return 0, fmt.Errorf("%w %d", ErrNoRun, runID)
	case err != nil:
		return 0, err
	}
	if err := checkOwner(runID, owner); err != nil {
		return 0, err
	}
	if status != Running {
		return 0, fmt.Errorf("run %d is %s; resume it before recording", runID, status)
	}
	_, err = tx.ExecContext(ctx, `UPDATE runs SET heartbeat_at = ? WHERE id = ? AND owner_token = ?`,
		formatTime(time.Now()), runID, ThisProcess().Token)
	return envID, err
}

// configID returns the row of c, inserting it when new.
func configID(ctx context.Context, tx *sql.Tx, c Config) (int64, error) {
	params, err := json.Marshal(c.Params)
	if err != nil {
		return 0, err
	}
	var id int64
	args := append(problemArgs(c.Problem), string(params), c.SourceHash)
	err = tx.QueryRowContext(ctx, `INSERT INTO configs (`+strings.Join(problemColumns, ", ")+`, params, source_hash)
		VALUES (`+placeholders(len(args))+`)
		ON CONFLICT DO UPDATE SET op = excluded.op
		RETURNING id`, args...).Scan(&id)
	return id, err
}

func insertMeasurement(ctx context.Context, tx *sql.Tx, runID, configID, envID int64, m *Measurement) (int64, error) {
	args := append([]any{runID, configID, envID, m.Device}, m.resultValues()...)
	res, err := tx.ExecContext(ctx, `INSERT INTO measurements (run_id, config_id, environment_id, device, `+resultColumns+`)
		VALUES (`+placeholders(len(args))+`)`, args...)
	if err != nil {
		return 0, err
	}
	return res.LastInsertId()
}

// resultColumns are the columns of what an evaluation found, which
// resultValues gives and Retime replaces.
const resultColumns = `outcome, message, samples_ns, median_ns, min_ns, max_ns, iqr_ns, ci_low_ns, ci_high_ns, gflops, gbs,
	verified, verify_error, seed, measured_at, raced, retimed`

// resultAssignments set resultColumns to resultValues in an UPDATE.
var resultAssignments = strings.ReplaceAll(resultColumns, ",", " = ?,") + " = ?"

func (m *Measurement) resultValues() []any {
	timed := m.MedianNS > 0
	return []any{m.Outcome, m.Message, encodeSamples(m.SamplesNS),
		nullIf(timed, m.MedianNS), nullIf(timed, m.MinNS), nullIf(timed, m.MaxNS), nullIf(timed, m.IQRNS),
		nullIf(timed, m.CILowNS), nullIf(timed, m.CIHighNS), nullIf(timed, m.GFLOPS), nullIf(timed, m.GBS),
		m.Verified, nullIf(m.Verified && !math.IsNaN(m.VerifyError), m.VerifyError), m.Seed,
		formatTime(m.MeasuredAt), m.Raced, m.Retimed}
}

// ErrNotMeasured is returned by Retime for a configuration the run has not
// recorded.
var ErrNotMeasured = errors.New("configuration not measured in this run")

// Retime replaces what the running run recorded for m's configuration
// with m, the configuration's final re-timing (m.Retimed), in one
// transaction: outcome, message, samples, timing, verification, seed and
// time; the environment and device stay the search's.
func (s *Store) Retime(ctx context.Context, runID int64, m Measurement) error {
	if err := m.validate(); err != nil {
		return err
	}
	if m.MeasuredAt.IsZero() {
		m.MeasuredAt = time.Now()
	}
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		if _, err := requireRunning(ctx, tx, runID); err != nil {
			return err
		}
		configID, err := configID(ctx, tx, m.Config)
		if err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `UPDATE measurements SET `+resultAssignments+` WHERE run_id = ? AND config_id = ?`,
			append(m.resultValues(), runID, configID)...)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("run %d, %v: %w", runID, m.Config.Params, ErrNotMeasured)
		}
		return nil
	})
	return s.describe(err)
}

// A PrunedCount is how many configurations of a problem one pruning rule
// rejected in a run.
type PrunedCount struct {
	Problem speak.Problem
	Rule    string // the rule's short name, e.g. "registers"; RecipeRule for the generator's refusals
	Count   int
	Example string // one of the rule's messages, with its numbers
}

// RecordPruned stores how many configurations of each rule the run's
// pruning rejected, replacing the counts stored before for the same
// problem and rule: a resumed run prunes the same configurations again.
func (s *Store) RecordPruned(ctx context.Context, runID int64, counts []PrunedCount) error {
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		if _, err := requireRunning(ctx, tx, runID); err != nil {
			return err
		}
		for _, c := range counts {
			if c.Count < 1 || c.Rule == "" {
				return fmt.Errorf("pruned count %d for rule %q: want a rule and a positive count", c.Count, c.Rule)
			}
			if err := insertPruned(ctx, tx, problemColumns, runID, c.Problem, c.Rule, c.Count, c.Example); err != nil {
				return err
			}
		}
		return nil
	})
	return s.describe(err)
}

// Ceilings are the measured limits of a device from `tltune peak`; zero
// means not measured.
type Ceilings struct {
	CopyGBS    float64
	F32GFLOPS  float64
	F64GFLOPS  float64
	F16GFLOPS  float64
	MMAGFLOPS  float64 // the matrix engine, f16 inputs, f32 accumulation (NVIDIA mma.sync)
	MeasuredAt time.Time
}

// ErrNoCeilings is returned by Ceilings when the device was never measured.
var ErrNoCeilings = errors.New("no measured ceilings")

// RecordCeilings stores ceilings measured in env (MeasuredAt zero: now).
func (s *Store) RecordCeilings(ctx context.Context, env Environment, c Ceilings) error {
	if c.MeasuredAt.IsZero() {
		c.MeasuredAt = time.Now()
	}
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		envID, err := environmentID(ctx, tx, env)
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO ceilings (environment_id, measured_at, copy_gbs, f32_gflops, f64_gflops, f16_gflops,
				mma_f16_gflops)
			VALUES (?, ?, ?, ?, ?, ?, ?)`, envID, formatTime(c.MeasuredAt),
			nullIf(c.CopyGBS > 0, c.CopyGBS), nullIf(c.F32GFLOPS > 0, c.F32GFLOPS),
			nullIf(c.F64GFLOPS > 0, c.F64GFLOPS), nullIf(c.F16GFLOPS > 0, c.F16GFLOPS), nullIf(c.MMAGFLOPS > 0, c.MMAGFLOPS))
		return err
	})
	return s.describe(err)
}

// timeLayout is RFC 3339 in UTC with fixed-width nanoseconds, so stored
// times sort as text.
const timeLayout = "2006-01-02T15:04:05.000000000Z07:00"

func formatTime(t time.Time) string { return t.UTC().Format(timeLayout) }

func nullInt(v int) any {
	if v == 0 {
		return nil
	}
	return v
}

func nullIf(present bool, v float64) any {
	if !present {
		return nil
	}
	return v
}

// encodeSamples packs samples as little-endian float64s: compact, exact,
// and readable from any language.
func encodeSamples(ns []float64) []byte {
	if len(ns) == 0 {
		return nil
	}
	buf := make([]byte, 0, 8*len(ns))
	for _, v := range ns {
		buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(v))
	}
	return buf
}

func decodeSamples(b []byte) ([]float64, error) {
	if len(b) == 0 {
		return nil, nil
	}
	if len(b)%8 != 0 {
		return nil, fmt.Errorf("samples blob of %d bytes is not a whole number of float64s", len(b))
	}
	ns := make([]float64, len(b)/8)
	for i := range ns {
		ns[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
	}
	return ns, nil
}
