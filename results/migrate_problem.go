package results

import (
	"context"
	"database/sql"
	"strings"

	"tltune/internal/speak"
	"tltune/kernels"
	"tltune/tuner/suite"
)

// problemKeySchema is the SQL of schema step 2: configs rebuilt with α, β
// and the atomic flag in their key, and the per-rule counts of pruned
// configurations. keyOldRows fills them from the rows of step 1.
const problemKeySchema = `
-- configs with the whole problem key: a configuration of ger 32x32 with
-- beta 0 and one with beta 1 are different rows.
CREATE TABLE configs_keyed (
	id          INTEGER PRIMARY KEY,
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
	params      TEXT NOT NULL,          -- tuning.Params as JSON, fixed field order
	source_hash TEXT NOT NULL,          -- hash of the generated kernel source
	UNIQUE (op, trans, dtype, acc, m, n, k, alpha, beta, atomic, layout, params, source_hash)
);

-- How many configurations of a problem each pruning rule rejected in a run,
-- with one of its messages. The rules reject before anything is generated,
-- and a search space holds thousands of such configurations: they are
-- counted, not stored one row each. (A configuration the search proposed and
-- the recipe refused stays a measurement with outcome 'pruned', rule
-- "recipe", so that a resumed run does not propose it again.)
CREATE TABLE pruned (
	run_id  INTEGER NOT NULL REFERENCES runs(id),
	op      TEXT NOT NULL,
	trans   TEXT NOT NULL,
	dtype   TEXT NOT NULL,
	acc     TEXT NOT NULL,
	m       INTEGER NOT NULL,
	n       INTEGER NOT NULL,
	k       INTEGER NOT NULL,
	alpha   TEXT NOT NULL,
	beta    TEXT NOT NULL,
	atomic  INTEGER NOT NULL,
	layout  TEXT NOT NULL,
	rule    TEXT NOT NULL,
	count   INTEGER NOT NULL CHECK (count > 0),
	example TEXT NOT NULL,
	PRIMARY KEY (run_id, op, trans, dtype, acc, m, n, k, alpha, beta, atomic, layout, rule)
);
`

// RecipeRule is the rule of a configuration the search proposed and the
// recipe's generator refused.
const RecipeRule = "recipe"

// keyOldRows keys the configurations of schema 1, which lacked α, β and
// the atomic flag, by what each run was asked to tune: the --alpha and
// --beta of a gemm, gemv or ger command line, the suite's values for a
// sweep (read again from the suite it names), and the commands' defaults
// (α = 1, β = 0, not atomic) where neither says more. Pruned rows move
// into the counts; configurations left without measurements go.
func keyOldRows(ctx context.Context, tx *sql.Tx) error {
	scalars, err := runScalars(ctx, tx)
	if err != nil {
		return err
	}
	rows, err := oldRows(ctx, tx)
	if err != nil {
		return err
	}
	k := rekeyer{tx: tx, ids: map[rekeyed]int64{}, taken: map[int64]bool{}, counts: map[prunedKey]*prunedCount{}}
	for _, r := range rows {
		p := r.problem
		p.Alpha, p.Beta, p.Atomic = scalars[r.runID].of(p)
		if err := k.add(ctx, r, p); err != nil {
			return err
		}
	}
	if err := k.flushCounts(ctx); err != nil {
		return err
	}
	for _, q := range []string{`DROP TABLE configs`, `ALTER TABLE configs_keyed RENAME TO configs`} {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return err
		}
	}
	return nil
}

// oldRow is one measurement of schema 1 with its configuration.
type oldRow struct {
	id, runID, configID int64
	outcome, message    string
	problem             speak.Problem // without scalars
	params, sourceHash  string
}

func oldRows(ctx context.Context, tx *sql.Tx) ([]oldRow, error) {
	rows, err := tx.QueryContext(ctx, `SELECT m.id, m.run_id, m.config_id, m.outcome, m.message,
			c.op, c.trans, c.dtype, c.acc, c.m, c.n, c.k, c.layout, c.params, c.source_hash
		FROM measurements m JOIN configs c ON c.id = m.config_id ORDER BY m.id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []oldRow
	for rows.Next() {
		var r oldRow
		p := &r.problem
		if err := rows.Scan(&r.id, &r.runID, &r.configID, &r.outcome, &r.message,
			&p.Op, &p.Trans, &p.Dtype, &p.Acc, &p.M, &p.N, &p.K, &p.Layout, &r.params, &r.sourceHash); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// rekeyer writes the keyed configurations and the pruned counts.
type rekeyer struct {
	tx     *sql.Tx
	ids    map[rekeyed]int64 // keyed configuration → its row
	taken  map[int64]bool    // old configuration ids already reused
	counts map[prunedKey]*prunedCount
	order  []prunedKey
}

// rekeyed is an old configuration under one problem key. One old row
// measured under two keys (only a pruned row, which had no source hash,
// could be) becomes two rows.
type rekeyed struct {
	configID    int64
	alpha, beta string
	atomic      bool
}

type prunedKey struct {
	runID   int64
	problem speak.Problem
	rule    string
}

type prunedCount struct {
	n       int
	example string
}

func (k *rekeyer) add(ctx context.Context, r oldRow, p speak.Problem) error {
	if r.outcome == string(Pruned) {
		rule, _, _ := strings.Cut(r.message, ":")
		if rule != RecipeRule {
			k.count(prunedKey{r.runID, p, rule}, r.message)
			_, err := k.tx.ExecContext(ctx, `DELETE FROM measurements WHERE id = ?`, r.id)
			return err
		}
	}
	key := rekeyed{r.configID, p.Alpha, p.Beta, p.Atomic}
	id, ok := k.ids[key]
	if !ok {
		var err error
		if id, err = k.insert(ctx, r, p); err != nil {
			return err
		}
		k.ids[key] = id
	}
	if id == r.configID {
		return nil
	}
	_, err := k.tx.ExecContext(ctx, `UPDATE measurements SET config_id = ? WHERE id = ?`, id, r.id)
	return err
}

// insert writes the keyed configuration, under its old id the first time
// the old row is keyed, so that its measurements keep pointing at it.
func (k *rekeyer) insert(ctx context.Context, r oldRow, p speak.Problem) (int64, error) {
	var id any
	if !k.taken[r.configID] {
		id, k.taken[r.configID] = r.configID, true
	}
	res, err := k.tx.ExecContext(ctx, `INSERT INTO configs_keyed (id, op, trans, dtype, acc, m, n, k,
			alpha, beta, atomic, layout, params, source_hash)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		id, p.Op, p.Trans, p.Dtype, p.Acc, p.M, p.N, p.K, p.Alpha, p.Beta, p.Atomic, p.Layout, r.params, r.sourceHash)
	if err != nil {
		return 0, err
	}
	return res.LastInsertId()
}

func (k *rekeyer) count(key prunedKey, message string) {
	c := k.counts[key]
	if c == nil {
		c = &prunedCount{example: message}
		k.counts[key] = c
		k.order = append(k.order, key)
	}
	c.n++
}

func (k *rekeyer) flushCounts(ctx context.Context) error {
	for _, key := range k.order {
		c := k.counts[key]
		if err := insertPruned(ctx, k.tx, keyedColumns, key.runID, key.problem, key.rule, c.n, c.example); err != nil {
			return err
		}
	}
	return nil
}

// keyedColumns are the problem columns of this step's tables: precision
// came later (schema step 7).
var keyedColumns = problemColumns[:len(problemColumns)-1]

// insertPruned stores the count of one rule for a problem in a run,
// replacing an earlier count: a resumed run prunes the same
// configurations again. columns are the pruned table's problem columns
// (a prefix of problemColumns: fewer while migrating).
func insertPruned(ctx context.Context, tx *sql.Tx, columns []string, runID int64, p speak.Problem, rule string, n int, example string) error {
	args := append(append([]any{runID}, problemArgs(p)[:len(columns)]...), rule, n, example)
	_, err := tx.ExecContext(ctx, `INSERT INTO pruned (run_id, `+strings.Join(columns, ", ")+`, rule, count, example)
		VALUES (`+placeholders(len(args))+`)
		ON CONFLICT DO UPDATE SET count = excluded.count, example = excluded.example`, args...)
	return err
}

// placeholders is "?, ?, ..." for n values.
func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}

// scalarSource says which α, β and atomic flag a run tuned a problem with.
type scalarSource struct {
	flags kernels.Flags  // the command line's --alpha and --beta, or the defaults
	cases []kernels.Spec // a sweep's suite, when it could be read
}

// of returns the scalars of problem p (whose own are unset): the suite
// case of the same shape, else the command line's.
func (s scalarSource) of(p speak.Problem) (alpha, beta string, atomic bool) {
	for _, c := range s.cases {
		q := c.Problem()
		alpha, beta, atomic = q.Alpha, q.Beta, q.Atomic
		q.Alpha, q.Beta, q.Atomic = "", "", false
		if q == p {
			return alpha, beta, atomic
		}
	}
	// The command's own flag parsing, so the scalars are rounded and
	// spelt as a new run of the same command line would key them.
	f := s.flags
	f.M, f.N, f.K, f.DType, f.Acc, f.Trans, f.Layout = p.M, p.N, p.K, p.Dtype, p.Acc, p.Trans, p.Layout
	if op, err := kernels.ParseOp(p.Op); err == nil {
		if spec, err := f.Spec(op); err == nil {
			q := spec.Problem()
			return q.Alpha, q.Beta, q.Atomic
		}
	}
	return speak.DefaultAlpha, speak.DefaultBeta, false
}

var defaultScalars = kernels.Flags{Alpha: speak.DefaultAlpha, Beta: speak.DefaultBeta}

// runScalars reads each run's command line.
func runScalars(ctx context.Context, tx *sql.Tx) (map[int64]scalarSource, error) {
	rows, err := tx.QueryContext(ctx, `SELECT id, op, command_line FROM runs`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[int64]scalarSource{}
	for rows.Next() {
		var id int64
		var op, line string
		if err := rows.Scan(&id, &op, &line); err != nil {
			return nil, err
		}
		args := strings.Fields(line)
		src := scalarSource{flags: defaultScalars}
		src.flags.Alpha = flagValue(args, "alpha", src.flags.Alpha)
		src.flags.Beta = flagValue(args, "beta", src.flags.Beta)
		if op == "sweep" {
			src.cases = suiteCases(args)
		}
		out[id] = src
	}
	return out, rows.Err()
}

// flagValue is the value of -name or --name in args (as "--name V" or
// "--name=V"), the last one winning as in package flag, or def.
func flagValue(args []string, name, def string) string {
	for i, a := range args {
		flag := strings.TrimLeft(a, "-")
		if len(flag) == len(a) {
			continue
		}
		if v, ok := strings.CutPrefix(flag, name+"="); ok {
			def = v
		} else if flag == name && i+1 < len(args) {
			def = args[i+1]
		}
	}
	return def
}

// suiteCases reads the suite a sweep's command line names: the first
// argument that loads as a suite, files named .toml before shipped names
// (a tag may spell a shipped suite's name). None: the suite is gone.
func suiteCases(args []string) []kernels.Spec {
	var names, files []string
	for _, a := range args[1:] {
		switch {
		case strings.HasPrefix(a, "-"):
		case strings.HasSuffix(a, ".toml"):
			files = append(files, a)
		default:
			names = append(names, a)
		}
	}
	for _, path := range append(files, names...) {
		s, err := suite.Load(path)
		if err != nil {
			continue
		}
		specs := make([]kernels.Spec, len(s.Cases))
		for i, c := range s.Cases {
			specs[i] = c.Spec
		}
		return specs
	}
	return nil
}
