package results

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// A migration takes the schema one version up: SQL, or a Go step for what
// SQL alone cannot work out (apply runs after sql, in the same
// transaction).
type migration struct {
	sql   string
	apply func(ctx context.Context, tx *sql.Tx) error
}

// migrations[i] takes the schema from version i to version i+1. Released
// steps are never edited: a change is a new step appended at the end.
var migrations = []migration{
	// 1: the first schema.
	{sql: `
-- One row per distinct environment; fingerprint hashes every field, so runs
-- on the same machine, driver and build share a row.
CREATE TABLE environments (
	id               INTEGER PRIMARY KEY,
	fingerprint      TEXT NOT NULL UNIQUE,
	device           TEXT NOT NULL,
	vendor           TEXT NOT NULL,
	driver           TEXT NOT NULL,
	runtime          TEXT NOT NULL,
	host             TEXT NOT NULL,
	tltune_version   TEXT NOT NULL,
	git_commit       TEXT NOT NULL,
	compiler_version TEXT NOT NULL,
	core_clock_mhz   INTEGER,            -- NULL when not readable
	memory_clock_mhz INTEGER
);

-- finished_at stays NULL while a run is going, and forever when it was killed.
CREATE TABLE runs (
	id             INTEGER PRIMARY KEY,
	environment_id INTEGER NOT NULL REFERENCES environments(id),
	started_at     TEXT NOT NULL,
	finished_at    TEXT,
	command_line   TEXT NOT NULL,
	tag            TEXT NOT NULL DEFAULT '',
	op             TEXT NOT NULL,
	status         TEXT NOT NULL CHECK (status IN ('running', 'done', 'failed', 'interrupted'))
);
CREATE INDEX runs_by_tag ON runs(tag, id);

-- A configuration of a recipe for one shape. Unique, so that a configuration
-- measured before a run was interrupted is recognised when it is resumed.
CREATE TABLE configs (
	id          INTEGER PRIMARY KEY,
	op          TEXT NOT NULL,
	m           INTEGER NOT NULL,
	n           INTEGER NOT NULL,
	k           INTEGER NOT NULL,
	dtype       TEXT NOT NULL,
	acc         TEXT NOT NULL,
	trans       TEXT NOT NULL,
	layout      TEXT NOT NULL,
	params      TEXT NOT NULL,          -- tuning.Params as JSON, fixed field order
	source_hash TEXT NOT NULL,          -- hash of the generated kernel source
	UNIQUE (op, m, n, k, dtype, acc, trans, layout, params, source_hash)
);

-- One evaluation of a configuration in a run, whatever its outcome. Timing
-- columns are NULL when nothing was timed; an ok outcome always has a median.
CREATE TABLE measurements (
	id           INTEGER PRIMARY KEY,
	run_id       INTEGER NOT NULL REFERENCES runs(id),
	config_id    INTEGER NOT NULL REFERENCES configs(id),
	outcome      TEXT NOT NULL CHECK (outcome IN ('ok', 'pruned', 'compile_error', 'launch_error',
	                 'resource_error', 'timeout', 'wrong_result', 'device_lost')),
	message      TEXT NOT NULL,
	samples_ns   BLOB,                  -- raw samples, little-endian float64 each
	median_ns    REAL,
	min_ns       REAL,
	max_ns       REAL,
	iqr_ns       REAL,
	ci_low_ns    REAL,
	ci_high_ns   REAL,
	gflops       REAL,
	gbs          REAL,
	verified     INTEGER NOT NULL,      -- 1 when the output was checked
	verify_error REAL,                  -- NULL when not verified, or NaN
	seed         INTEGER NOT NULL,      -- input seed
	measured_at  TEXT NOT NULL,
	UNIQUE (run_id, config_id),         -- nothing is measured twice in a run
	CHECK (outcome <> 'ok' OR median_ns > 0)
);
CREATE INDEX measurements_by_config ON measurements(config_id);

-- Measured ceilings from 'tltune peak'; NULL where a ceiling was not measured.
CREATE TABLE ceilings (
	id             INTEGER PRIMARY KEY,
	environment_id INTEGER NOT NULL REFERENCES environments(id),
	measured_at    TEXT NOT NULL,
	copy_gbs       REAL,
	f32_gflops     REAL,
	f64_gflops     REAL,
	f16_gflops     REAL
);
`},
	// 2: where the wall time of a run went (tuning throughput). Each tuned
	// shape adds its seconds and evaluations, so the shapes of a sweep and
	// the processes of a resumed run add up.
	{sql: `
CREATE TABLE run_throughput (
	run_id      INTEGER PRIMARY KEY REFERENCES runs(id),
	evaluations INTEGER NOT NULL,   -- evaluated by the processes whose time is below
	wall_s      REAL NOT NULL
);
CREATE TABLE run_time_split (
	run_id  INTEGER NOT NULL REFERENCES runs(id),
	phase   TEXT NOT NULL,          -- setup, propose, compile, build, verify, time, record, idle
	seconds REAL NOT NULL,          -- wall time: the phases of a run add up to its wall_s
	PRIMARY KEY (run_id, phase)
);
`},
	// 3: scale-out. A run has a globally unique id, so that merged stores
	// keep their runs apart, and the shards of one campaign, which share it,
	// together; run_parts lists the stores a run was recorded in (a merge
	// adds a shard's totals to a run only once). A merged run may span
	// hosts and devices, so each measurement records its environment and
	// the device it ran on.
	{sql: `
ALTER TABLE runs ADD COLUMN uuid TEXT;
UPDATE runs SET uuid = lower(printf('%s-%s-4%s-%s%s-%s', hex(randomblob(4)), hex(randomblob(2)),  -- random (version 4)
	substr(hex(randomblob(2)), 2), substr('89ab', 1 + abs(random()) % 4, 1), substr(hex(randomblob(2)), 2), hex(randomblob(6))));
CREATE UNIQUE INDEX runs_by_uuid ON runs(uuid);

CREATE TABLE run_parts (
	run_id INTEGER NOT NULL REFERENCES runs(id),
	part   TEXT NOT NULL,               -- random, one per store the run was begun in
	PRIMARY KEY (run_id, part)
);
INSERT INTO run_parts (run_id, part) SELECT id, lower(hex(randomblob(16))) FROM runs;

ALTER TABLE measurements ADD COLUMN environment_id INTEGER REFERENCES environments(id);
ALTER TABLE measurements ADD COLUMN device TEXT NOT NULL DEFAULT '';  -- e.g. opencl:1, on the environment's host
UPDATE measurements SET environment_id = (SELECT r.environment_id FROM runs r WHERE r.id = measurements.run_id);
`},
	// 4: the whole problem key (α, β, atomic update) in configs, and
	// pruned configurations counted per rule instead of stored one row
	// each (migrate_problem.go).
	{sql: problemKeySchema, apply: keyOldRows},
	// 5: the outcome 'crash' (a configuration during which the driver's
	// process died twice). SQLite cannot alter a CHECK constraint, so the
	// table is rebuilt; nothing references it.
	{sql: `
CREATE TABLE measurements_crash (
	id           INTEGER PRIMARY KEY,
	run_id       INTEGER NOT NULL REFERENCES runs(id),
	config_id    INTEGER NOT NULL REFERENCES configs(id),
	outcome      TEXT NOT NULL CHECK (outcome IN ('ok', 'pruned', 'compile_error', 'launch_error',
	                 'resource_error', 'timeout', 'wrong_result', 'device_lost', 'crash')),
	message      TEXT NOT NULL,
	samples_ns   BLOB,
	median_ns    REAL,
	min_ns       REAL,
	max_ns       REAL,
	iqr_ns       REAL,
	ci_low_ns    REAL,
	ci_high_ns   REAL,
	gflops       REAL,
	gbs          REAL,
	verified     INTEGER NOT NULL,
	verify_error REAL,
	seed         INTEGER NOT NULL,
	measured_at  TEXT NOT NULL,
	environment_id INTEGER REFERENCES environments(id),
	device       TEXT NOT NULL DEFAULT '',
	UNIQUE (run_id, config_id),
	CHECK (outcome <> 'ok' OR median_ns > 0)
);
INSERT INTO measurements_crash SELECT * FROM measurements;
DROP TABLE measurements;
ALTER TABLE measurements_crash RENAME TO measurements;
CREATE INDEX measurements_by_config ON measurements(config_id);
`},
	// 6: the matrix-engine ceiling (tensor cores through mma.sync on
	// NVIDIA), the roof of GEMMs that use it.
	{sql: `ALTER TABLE ceilings ADD COLUMN mma_f16_gflops REAL;`},
	// 7: the precision in the problem key ('' exact, 'tf32'): a tf32 run
	// and an exact run of one shape are different problems. Every stored
	// row was exact. The keys are UNIQUE and PRIMARY KEY constraints, which
	// SQLite cannot alter, so configs and pruned are rebuilt with the
	// same ids (measurements keep referencing their configurations).
	{sql: `
CREATE TABLE configs_precision (
	id          INTEGER PRIMARY KEY,` + keyColumnsSQL + `
	params      TEXT NOT NULL,
	source_hash TEXT NOT NULL,
	UNIQUE (op, trans, dtype, acc, m, n, k, alpha, beta, atomic, layout, precision, params, source_hash)
);
INSERT INTO configs_precision (id, op, trans, dtype, acc, m, n, k, alpha, beta, atomic, layout, params, source_hash)
	SELECT id, op, trans, dtype, acc, m, n, k, alpha, beta, atomic, layout, params, source_hash FROM configs;
DROP TABLE configs;
ALTER TABLE configs_precision RENAME TO configs;

CREATE TABLE pruned_precision (
	run_id      INTEGER NOT NULL REFERENCES runs(id),` + keyColumnsSQL + `
	rule        TEXT NOT NULL,
	count       INTEGER NOT NULL CHECK (count > 0),
	example     TEXT NOT NULL,
	PRIMARY KEY (run_id, op, trans, dtype, acc, m, n, k, alpha, beta, atomic, layout, precision, rule)
);
INSERT INTO pruned_precision (run_id, op, trans, dtype, acc, m, n, k, alpha, beta, atomic, layout, rule, count, example)
	SELECT run_id, op, trans, dtype, acc, m, n, k, alpha, beta, atomic, layout, rule, count, example FROM pruned;
DROP TABLE pruned;
ALTER TABLE pruned_precision RENAME TO pruned;
`},
	// 8: racing (DESIGN.md §5, measure.Race). An ok measurement whose
	// timing stopped early, clearly slower than the run's best so far,
	// keeps its partial samples and says so; the run's fastest are timed
	// again at the end with the full protocol, which replaces their
	// search timing and says so. Older rows were timed in full.
	{sql: `
ALTER TABLE measurements ADD COLUMN raced INTEGER NOT NULL DEFAULT 0;    -- 1: the samples are partial (stopped early)
ALTER TABLE measurements ADD COLUMN retimed INTEGER NOT NULL DEFAULT 0;  -- 1: the timing is the run's final re-timing
`},
	// 9: the owner of a run, the process that records into it (owner.go):
	// a run stays 'running' both while its process lives and after it was
	// killed, and only a dead owner's run may be resumed. The owner
	// refreshes heartbeat_at while it runs. NULL in the runs an older
	// tltune began: nothing is known of their processes.
	{sql: `
ALTER TABLE runs ADD COLUMN owner_host TEXT;    -- host name
ALTER TABLE runs ADD COLUMN owner_pid INTEGER;
ALTER TABLE runs ADD COLUMN owner_start TEXT;   -- the process's start on its host: tells a reused pid apart ('' untold)
ALTER TABLE runs ADD COLUMN owner_token TEXT;   -- random, one per process: the owner's writes carry it
ALTER TABLE runs ADD COLUMN heartbeat_at TEXT;  -- the owner's last sign of life
`},
}

// keyColumnsSQL are the problem key's columns (problemColumns) as schema
// step 7 defines them in configs and pruned. It is part of that step and,
// like every released step, never edited.
const keyColumnsSQL = `
	op          TEXT NOT NULL,
	trans       TEXT NOT NULL,
	dtype       TEXT NOT NULL,
	acc         TEXT NOT NULL,
	m           INTEGER NOT NULL,
	n           INTEGER NOT NULL,
	k           INTEGER NOT NULL,
	alpha       TEXT NOT NULL,          -- speak.FormatScalar, rounded to dtype
	beta        TEXT NOT NULL,          -- rounded to acc
	atomic      INTEGER NOT NULL,       -- 1: C updated atomically
	layout      TEXT NOT NULL,          -- batch layout
	precision   TEXT NOT NULL DEFAULT '', -- '' exact, 'tf32': f32 inputs rounded to tf32`

// SchemaVersion is the schema version this build writes.
func SchemaVersion() int { return len(migrations) }

// migrate applies the missing steps, each in its own transaction together
// with its schema_version row. The transactions are immediate, so two
// processes opening a new database at once apply each step once.
//
// A step may rebuild a table that others reference, which SQLite allows
// only with foreign keys off (its documented ALTER TABLE procedure); the
// connection that migrates turns them off, and each step checks every
// reference with foreign_key_check before it commits.
func (s *Store) migrate(ctx context.Context) error {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_version (
		version    INTEGER PRIMARY KEY,
		applied_at TEXT NOT NULL)`); err != nil {
		return err
	}
	if _, err := conn.ExecContext(ctx, `PRAGMA foreign_keys = OFF`); err != nil {
		return err
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), `PRAGMA foreign_keys = ON`)
	for {
		done, err := s.migrateStep(ctx, conn)
		if err != nil || done {
			return err
		}
	}
}

// migrateStep applies the next missing migration and reports whether the
// schema was already current.
func (s *Store) migrateStep(ctx context.Context, conn *sql.Conn) (done bool, err error) {
	err = inTx(ctx, conn, func(tx *sql.Tx) error {
		var version int
		if err := tx.QueryRowContext(ctx, `SELECT coalesce(max(version), 0) FROM schema_version`).Scan(&version); err != nil {
			return err
		}
		if err := checkVersion(s.path, version); err != nil {
			return err
		}
		if version == len(migrations) {
			done = true
			return nil
		}
		m := migrations[version]
		if _, err := tx.ExecContext(ctx, m.sql); err != nil {
			return err
		}
		if m.apply != nil {
			if err := m.apply(ctx, tx); err != nil {
				return fmt.Errorf("migrating to schema version %d: %w", version+1, err)
			}
		}
		if err := checkForeignKeys(ctx, tx); err != nil {
			return fmt.Errorf("migrating to schema version %d: %w", version+1, err)
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO schema_version (version, applied_at) VALUES (?, ?)`,
			version+1, formatTime(time.Now()))
		return err
	})
	return done, err
}

// checkForeignKeys fails when a row references a missing one.
func checkForeignKeys(ctx context.Context, tx *sql.Tx) error {
	rows, err := tx.QueryContext(ctx, `PRAGMA foreign_key_check`)
	if err != nil {
		return err
	}
	defer rows.Close()
	if rows.Next() {
		var table, parent string
		var rowid sql.NullInt64
		var fk int
		if err := rows.Scan(&table, &rowid, &parent, &fk); err != nil {
			return err
		}
		return fmt.Errorf("row %d of %s references a missing %s row", rowid.Int64, table, parent)
	}
	return rows.Err()
}

// beginner is what transactions start on: the pool, or the one
// connection a migration holds.
type beginner interface {
	BeginTx(ctx context.Context, opts *sql.TxOptions) (*sql.Tx, error)
}

// inTx runs f in a transaction of the store and commits it, or rolls it
// back when f fails.
func (s *Store) inTx(ctx context.Context, f func(*sql.Tx) error) error {
	return inTx(ctx, s.db, f)
}

func inTx(ctx context.Context, db beginner, f func(*sql.Tx) error) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := f(tx); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}
