package results

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Merging stores (tltune merge). Stores made apart — the shards of a job
// array, the nodes of a cluster, a laptop and a CI runner — are merged
// row by row into one, table by table in foreign-key order, with every
// reference renumbered into the destination. A row the destination holds
// already (by its table's key) is not copied again, so merging twice
// changes nothing. Runs are matched by UUID: the shards of one campaign
// share it and become one run.
//
// Each table of the schema has a rule in mergeRules; a table without one
// fails TestMergeRulesCoverSchema, so a migration that adds a table must
// say how it merges.

// A mergeKind says how the rows of a table merge.
type mergeKind int

const (
	// byKey copies the rows whose key the destination lacks; a row with
	// the key of a destination row is the same fact and is left alone.
	byKey mergeKind = iota
	// runRows are the runs themselves, matched by UUID; see mergeRun.
	runRows
	// runTotals are per-run sums (evaluations, seconds), keyed by their
	// primary key: a run's totals from a store that recorded other parts
	// of it are added, from a store that holds all the destination knows
	// of it they replace the destination's (see partsRelation).
	runTotals
	// notMerged tables belong to the store itself.
	notMerged
)

// A mergeRule is how one table merges.
type mergeRule struct {
	kind mergeKind
	key  []string // byKey: the columns that identify a row; nil: every column but the row id
}

// mergeRules has a rule for every table of the schema.
var mergeRules = map[string]mergeRule{
	"schema_version": {kind: notMerged},
	"environments":   {key: []string{"fingerprint"}},
	"runs":           {kind: runRows},
	"run_parts":      {key: []string{"run_id", "part"}},
	"configs":        {},
	"measurements":   {key: []string{"run_id", "config_id"}},
	"ceilings":       {},
	"run_throughput": {kind: runTotals},
	"run_time_split": {kind: runTotals},
	// One run's count of one rule for one problem: shards of a campaign
	// tune different problems, so their rows never share a key.
	"pruned": {key: slices.Concat([]string{"run_id"}, problemColumns, []string{"rule"})},
}

// A MergeReport says what one merge did.
type MergeReport struct {
	Source string         `json:"source"`
	Added  map[string]int `json:"added"` // new rows per table
	Runs   []MergedRun    `json:"runs"`
}

// A MergedRun is what became of one run of the source.
type MergedRun struct {
	UUID   string `json:"uuid"`
	From   int64  `json:"from"` // its id in the source
	Into   int64  `json:"into"` // its id in the destination
	Result string `json:"result"`
}

// What became of a source run (MergedRun.Result). A part of a run is its
// record in the store it was begun in: a shard's, for a campaign.
const (
	RunNew       = "new"            // the destination did not have it
	RunRefreshed = "refreshed"      // the destination had only parts the source has: the source's copy replaced it
	RunJoined    = "joined"         // the destination had other parts of it only (another shard of a campaign)
	RunMerged    = "already merged" // the destination had every part the source has
	RunOverlap   = "overlapping"    // the stores share some parts of it: its totals were left as they were
)

// ErrMergeSchema is wrapped by Merge when a source's schema cannot be merged.
var ErrMergeSchema = errors.New("cannot merge")

// CheckMergeable checks that the store at path can be merged into a store
// of this tltune: a results store of this schema version or an older one.
func CheckMergeable(path string) error {
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("%w %s: %v", ErrMergeSchema, path, errors.Unwrap(err))
	}
	v, err := sourceVersion(path)
	if err != nil {
		return err
	}
	if v > SchemaVersion() {
		return fmt.Errorf("%w %s: it has schema version %d, newer than this tltune's %d; merge with a tltune at least as new as the one that wrote it",
			ErrMergeSchema, path, v, SchemaVersion())
	}
	return nil
}

// sourceVersion is the schema version of the results store at path,
// which must exist; it is read without writing anything.
func sourceVersion(path string) (int, error) {
	if _, err := inspect(path, false); err != nil && !errors.Is(err, ErrNewerSchema) {
		return 0, err
	}
	db, err := sql.Open("sqlite3", dsn(path, "mode=ro&_busy_timeout=5000"))
	if err != nil {
		return 0, err
	}
	defer db.Close()
	var v int
	err = db.QueryRow(`SELECT coalesce(max(version), 0) FROM schema_version`).Scan(&v)
	if err != nil || v == 0 {
		return 0, notDatabase(path, "it holds no schema_version row")
	}
	return v, nil
}

// Merge merges the results store at path into s, in one transaction: on
// an error s is as it was. A source of an older schema is merged from a
// migrated copy; the source itself is only read.
func (s *Store) Merge(ctx context.Context, path string) (MergeReport, error) {
	rep := MergeReport{Source: path, Added: map[string]int{}}
	if err := CheckMergeable(path); err != nil {
		return rep, err
	}
	if same, err := sameFile(path, s.path); err != nil || same {
		if err == nil {
			err = fmt.Errorf("%w %s into itself", ErrMergeSchema, path)
		}
		return rep, err
	}
	src, cleanup, err := currentSchema(path)
	if err != nil {
		return rep, err
	}
	defer cleanup()
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return rep, s.describe(err)
	}
	// The connection carries the attached source and temporary tables:
	// it is closed afterwards, not returned to the pool.
	defer func() {
		conn.Raw(func(any) error { return driver.ErrBadConn })
		conn.Close()
	}()
	if _, err := conn.ExecContext(ctx, `ATTACH DATABASE ? AS src`, dsn(src, "mode=ro")); err != nil {
		return rep, fmt.Errorf("%s: %w", path, err)
	}
	m := &merger{ctx: ctx, conn: conn, rep: &rep, relation: map[int64]partsRelation{}}
	if err := m.merge(); err != nil {
		return rep, fmt.Errorf("merging %s into %s: %w", path, s.path, err)
	}
	return rep, nil
}

func sameFile(a, b string) (bool, error) {
	ia, err := os.Stat(a)
	if err != nil {
		return false, err
	}
	ib, err := os.Stat(b)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	return err == nil && os.SameFile(ia, ib), err
}

// currentSchema returns path, or, for a store of an older schema, a
// migrated copy of it in a temporary folder that cleanup removes.
func currentSchema(path string) (string, func(), error) {
	v, err := sourceVersion(path)
	if err != nil || v == SchemaVersion() {
		return path, func() {}, err
	}
	dir, err := os.MkdirTemp("", "tltune-merge-")
	if err != nil {
		return "", nil, err
	}
	cleanup := func() { os.RemoveAll(dir) }
	copied := filepath.Join(dir, "upgraded.db")
	db, err := sql.Open("sqlite3", dsn(path, "mode=ro&_busy_timeout=5000"))
	if err == nil {
		_, err = db.Exec(`VACUUM INTO ?`, copied)
		db.Close()
	}
	var st *Store
	if err == nil {
		st, err = Open(copied)
	}
	if err != nil {
		cleanup()
		return "", nil, fmt.Errorf("upgrading a copy of %s (schema version %d) to merge it: %w", path, v, err)
	}
	st.Close()
	return copied, cleanup, nil
}

// merger merges the attached database src into main on one connection.
type merger struct {
	ctx      context.Context
	conn     *sql.Conn
	tx       *sql.Tx
	rep      *MergeReport
	tables   map[string]*tableInfo
	relation map[int64]partsRelation // of each source run, by source id
}

// tableInfo is what a merge needs to know of a table.
type tableInfo struct {
	name    string
	columns []string          // all but rowID, in declaration order
	rowID   string            // the INTEGER PRIMARY KEY column, if any
	primary []string          // the primary key columns, when not rowID
	parents map[string]string // foreign-key column → referenced table
}

func (m *merger) merge() error {
	var err error
	if m.tables, err = m.schema("main"); err != nil {
		return err
	}
	srcTables, err := m.schema("src")
	if err != nil {
		return err
	}
	if err := sameSchema(m.tables, srcTables); err != nil {
		return err
	}
	order, err := mergeOrder(m.tables)
	if err != nil {
		return err
	}
	if m.tx, err = m.conn.BeginTx(m.ctx, nil); err != nil {
		return err
	}
	defer m.tx.Rollback() // no-op after Commit
	for _, t := range order {
		if err := m.mergeTable(t); err != nil {
			return fmt.Errorf("table %s: %w", t.name, err)
		}
	}
	return m.tx.Commit()
}

// schema reads the tables of the database db ("main" or "src"). Every
// table must have a merge rule.
func (m *merger) schema(db string) (map[string]*tableInfo, error) {
	names, err := queryStrings(m.ctx, m.conn, `SELECT name FROM `+db+`.sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`)
	if err != nil {
		return nil, err
	}
	tables := map[string]*tableInfo{}
	for _, name := range names {
		if _, ok := mergeRules[name]; !ok {
			return nil, fmt.Errorf("table %s has no merge rule in this tltune", name)
		}
		t, err := readTableInfo(m.ctx, m.conn, db, name)
		if err != nil {
			return nil, err
		}
		tables[name] = t
	}
	return tables, nil
}

func readTableInfo(ctx context.Context, conn *sql.Conn, db, name string) (*tableInfo, error) {
	t := &tableInfo{name: name, parents: map[string]string{}}
	rows, err := conn.QueryContext(ctx, `SELECT name, upper(type), pk FROM pragma_table_info(?, ?) ORDER BY cid`, name, db)
	if err != nil {
		return nil, err
	}
	type column struct {
		name, typ string
		pk        int
	}
	var cols []column
	for rows.Next() {
		var c column
		if err := rows.Scan(&c.name, &c.typ, &c.pk); err != nil {
			rows.Close()
			return nil, err
		}
		cols = append(cols, c)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	pks := 0
	for _, c := range cols {
		if c.pk > 0 {
			pks++
		}
	}
	for _, c := range cols {
		switch {
		case c.pk > 0 && pks == 1 && c.typ == "INTEGER":
			t.rowID = c.name
			continue
		case c.pk > 0:
			t.primary = append(t.primary, c.name)
		}
		t.columns = append(t.columns, c.name)
	}
	rows, err = conn.QueryContext(ctx, `SELECT "from", "table" FROM pragma_foreign_key_list(?, ?)`, name, db)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var from, parent string
		if err := rows.Scan(&from, &parent); err != nil {
			return nil, err
		}
		t.parents[from] = parent
	}
	return t, rows.Err()
}

// sameSchema checks that the source has the destination's tables and
// columns: stores of one schema version do.
func sameSchema(dst, src map[string]*tableInfo) error {
	for name, d := range dst {
		s, ok := src[name]
		if !ok || !slices.Equal(s.columns, d.columns) {
			return fmt.Errorf("%w: the source's table %s differs from this schema's; both stores must be of schema version %d", ErrMergeSchema, name, SchemaVersion())
		}
	}
	return nil
}

// mergeOrder returns the merged tables so that every table comes after
// the tables it references (by name where that leaves a choice).
func mergeOrder(tables map[string]*tableInfo) ([]*tableInfo, error) {
	var names []string
	for n := range tables {
		if mergeRules[n].kind != notMerged {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	var order []*tableInfo
	done := map[string]bool{}
	for len(order) < len(names) {
		next := slices.IndexFunc(names, func(n string) bool { return !done[n] && parentsDone(tables[n], done) })
		if next < 0 {
			return nil, errors.New("the tables' foreign keys form a cycle")
		}
		done[names[next]] = true
		order = append(order, tables[names[next]])
	}
	return order, nil
}

func parentsDone(t *tableInfo, done map[string]bool) bool {
	for _, p := range t.parents {
		if p != t.name && !done[p] {
			return false
		}
	}
	return true
}

// mapTable is the temporary table mapping the row ids of a source table
// to the destination's.
func mapTable(table string) string { return "temp.merge_ids_" + table }

// sourceValue is the SQL expression for column col of the source row s,
// renumbered into the destination when it references another table.
func (t *tableInfo) sourceValue(col string) string {
	if parent, ok := t.parents[col]; ok {
		return fmt.Sprintf(`(SELECT dst FROM %s WHERE src = s."%s")`, mapTable(parent), col)
	}
	return fmt.Sprintf(`s."%s"`, col)
}

func (t *tableInfo) sourceValues(cols []string) string {
	vals := make([]string, len(cols))
	for i, c := range cols {
		vals[i] = t.sourceValue(c)
	}
	return strings.Join(vals, ", ")
}

// matches is the condition that destination row d has source row s's key.
func (t *tableInfo) matches(key []string) string {
	conds := make([]string, len(key))
	for i, c := range key {
		conds[i] = fmt.Sprintf(`d."%s" IS %s`, c, t.sourceValue(c))
	}
	return strings.Join(conds, " AND ")
}

func quoted(cols []string) string {
	q := make([]string, len(cols))
	for i, c := range cols {
		q[i] = `"` + c + `"`
	}
	return strings.Join(q, ", ")
}

// referenced reports whether another table references t's rows.
func (m *merger) referenced(t *tableInfo) bool {
	for _, other := range m.tables {
		for _, p := range other.parents {
			if p == t.name && other != t {
				return true
			}
		}
	}
	return false
}

func (m *merger) mergeTable(t *tableInfo) error {
	m.rep.Added[t.name] = 0
	if m.referenced(t) {
		if t.rowID == "" {
			return errors.New("referenced by another table but has no INTEGER PRIMARY KEY")
		}
		if err := m.exec(`CREATE TEMP TABLE ` + strings.TrimPrefix(mapTable(t.name), "temp.") + ` (src INTEGER PRIMARY KEY, dst INTEGER NOT NULL)`); err != nil {
			return err // the connection is new (see Merge): none is left from before
		}
	}
	switch rule := mergeRules[t.name]; rule.kind {
	case runRows:
		return m.mergeRuns(t)
	case runTotals:
		return m.mergeTotals(t)
	default:
		return m.mergeByKey(t, rule.key)
	}
}

// mergeByKey copies the source rows whose key the destination lacks, and
// maps every source row id to the destination row with its key.
func (m *merger) mergeByKey(t *tableInfo, key []string) error {
	if key == nil {
		key = t.columns
	}
	n, err := m.count(fmt.Sprintf(`INSERT INTO main."%[1]s" (%[2]s) SELECT %[3]s FROM src."%[1]s" AS s
		WHERE NOT EXISTS (SELECT 1 FROM main."%[1]s" AS d WHERE %[4]s)`,
		t.name, quoted(t.columns), t.sourceValues(t.columns), t.matches(key)))
	if err != nil {
		return err
	}
	m.rep.Added[t.name] += n
	if !m.referenced(t) {
		return nil
	}
	return m.exec(fmt.Sprintf(`INSERT INTO %[1]s (src, dst) SELECT s."%[2]s", d."%[2]s" FROM src."%[3]s" AS s JOIN main."%[3]s" AS d ON %[4]s`,
		mapTable(t.name), t.rowID, t.name, t.matches(key)))
}

// partsRelation is how the parts of a source run (the stores it was
// recorded in) relate to the destination's parts of it.
type partsRelation int

const (
	covers    partsRelation = iota // the source has every part the destination has: it replaces them
	disjoint                       // no part in common: the source's totals add to the destination's
	contained                      // the destination has every part the source has, and more
	overlaps                       // some in common: adding would count those twice
)

// runResults names the relations in a MergeReport.
var runResults = map[partsRelation]string{covers: RunRefreshed, disjoint: RunJoined, contained: RunMerged, overlaps: RunOverlap}

// mergeRuns merges the source's runs one by one: a run the destination
// lacks is copied; one it has (by UUID) is updated from the source when
// the source covers every part of it the destination has, and otherwise
// combined: the earliest start, the latest end, the worst status.
func (m *merger) mergeRuns(t *tableInfo) error {
	type srcRun struct {
		id   int64
		uuid string
	}
	rows, err := m.tx.QueryContext(m.ctx, `SELECT id, uuid FROM src.runs ORDER BY id`)
	if err != nil {
		return err
	}
	var runs []srcRun
	for rows.Next() {
		var r srcRun
		if err := rows.Scan(&r.id, &r.uuid); err != nil {
			rows.Close()
			return err
		}
		runs = append(runs, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, r := range runs {
		merged := MergedRun{UUID: r.uuid, From: r.id}
		if err := m.mergeRun(t, r.id, &merged); err != nil {
			return fmt.Errorf("run %d (%s): %w", r.id, r.uuid, err)
		}
		m.rep.Runs = append(m.rep.Runs, merged)
	}
	return nil
}

func (m *merger) mergeRun(t *tableInfo, id int64, out *MergedRun) error {
	err := m.tx.QueryRowContext(m.ctx, `SELECT id FROM main.runs WHERE uuid = ?`, out.UUID).Scan(&out.Into)
	cols := slices.DeleteFunc(slices.Clone(t.columns), func(c string) bool { return c == "uuid" })
	switch {
	case errors.Is(err, sql.ErrNoRows):
		res, err := m.tx.ExecContext(m.ctx, fmt.Sprintf(`INSERT INTO main.runs (%s) SELECT %s FROM src.runs AS s WHERE s.id = ?`,
			quoted(t.columns), t.sourceValues(t.columns)), id)
		if err != nil {
			return err
		}
		if out.Into, err = res.LastInsertId(); err != nil {
			return err
		}
		m.relation[id], out.Result = covers, RunNew
		m.rep.Added["runs"]++
	case err != nil:
		return err
	default:
		rel, err := m.partsRelation(id, out.Into)
		if err != nil {
			return err
		}
		m.relation[id] = rel
		out.Result = runResults[rel]
		if rel == covers {
			err = m.execArgs(fmt.Sprintf(`UPDATE main.runs SET (%s) = (SELECT %s FROM src.runs AS s WHERE s.id = ?) WHERE id = ?`,
				quoted(cols), t.sourceValues(cols)), id, out.Into)
		} else {
			err = m.execArgs(combineRuns, id, out.Into)
		}
		if err != nil {
			return err
		}
	}
	return m.execArgs(`INSERT INTO `+mapTable("runs")+` (src, dst) VALUES (?, ?)`, id, out.Into)
}

// combineRuns combines source run ?1 with destination run ?2: the earliest
// start, no end while a part has none (it is running, or was killed), the
// worst status (failed, then running, interrupted, done).
const combineRuns = `UPDATE main.runs AS d SET
	started_at = min(d.started_at, s.started_at),
	finished_at = CASE WHEN d.finished_at IS NULL OR s.finished_at IS NULL THEN NULL ELSE max(d.finished_at, s.finished_at) END,
	status = CASE WHEN instr('done interrupted running failed', s.status) > instr('done interrupted running failed', d.status)
		THEN s.status ELSE d.status END
	FROM src.runs AS s WHERE s.id = ?1 AND d.id = ?2`

func (m *merger) partsRelation(srcID, dstID int64) (partsRelation, error) {
	src, err := queryStrings(m.ctx, m.tx, `SELECT part FROM src.run_parts WHERE run_id = ?`, srcID)
	if err != nil {
		return 0, err
	}
	dst, err := queryStrings(m.ctx, m.tx, `SELECT part FROM main.run_parts WHERE run_id = ?`, dstID)
	if err != nil {
		return 0, err
	}
	shared := 0
	for _, p := range dst {
		if slices.Contains(src, p) {
			shared++
		}
	}
	switch shared {
	case len(dst):
		return covers, nil
	case 0:
		return disjoint, nil
	case len(src):
		return contained, nil
	}
	return overlaps, nil
}

// mergeTotals merges a table of per-run totals: for each source run, its
// rows replace the destination's (covers), add to them (disjoint), or are
// left out (the destination has some of its parts already).
func (m *merger) mergeTotals(t *tableInfo) error {
	runCol := ""
	for col, parent := range t.parents {
		if parent == "runs" {
			runCol = col
		}
	}
	key := t.primary
	if t.rowID != "" {
		key = []string{t.rowID}
	}
	if runCol == "" || !slices.Contains(key, runCol) {
		return errors.New("a table of run totals needs a primary key that holds its run")
	}
	var sums []string
	for _, c := range t.columns {
		if !slices.Contains(key, c) {
			sums = append(sums, fmt.Sprintf(`"%s" = "%[1]s" + excluded."%[1]s"`, c))
		}
	}
	cols := t.columns
	if t.rowID != "" {
		cols = append([]string{t.rowID}, cols...)
	}
	insert := fmt.Sprintf(`INSERT INTO main."%[1]s" (%[2]s) SELECT %[3]s FROM src."%[1]s" AS s WHERE s."%[4]s" = ?`,
		t.name, quoted(cols), t.sourceValues(cols), runCol)
	for srcID, rel := range m.relation {
		var err error
		switch rel {
		case covers:
			if err = m.execArgs(fmt.Sprintf(`DELETE FROM main."%s" WHERE "%s" = (SELECT dst FROM %s WHERE src = ?)`, t.name, runCol, mapTable("runs")), srcID); err == nil {
				err = m.execArgs(insert, srcID)
			}
		case disjoint:
			err = m.execArgs(insert+fmt.Sprintf(` ON CONFLICT (%s) DO UPDATE SET %s`, quoted(key), strings.Join(sums, ", ")), srcID)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (m *merger) exec(query string) error { return m.execArgs(query) }

func (m *merger) execArgs(query string, args ...any) error {
	var err error
	if m.tx != nil {
		_, err = m.tx.ExecContext(m.ctx, query, args...)
	} else {
		_, err = m.conn.ExecContext(m.ctx, query, args...)
	}
	return err
}

// count runs a statement and returns the rows it changed.
func (m *merger) count(query string) (int, error) {
	res, err := m.tx.ExecContext(m.ctx, query)
	if err != nil {
		return 0, err
	}
	n, err := res.RowsAffected()
	return int(n), err
}

type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

func queryStrings(ctx context.Context, q querier, query string, args ...any) ([]string, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}
