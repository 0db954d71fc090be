// Package results owns the results store: the SQLite database in which every
// tuning run records its environment, the configurations it tried and each
// measurement with its raw samples, and the queries over it (best
// configuration per shape, resumable runs, tuning-table and CSV/JSON export,
// measured ceilings).
//
// Every measurement is committed in its own transaction as it is recorded,
// so a killed run loses nothing and can be resumed. A run records the
// process that records into it (owner.go), so that a run whose process
// still runs is not resumed under it. The schema is migrated in
// numbered steps; a database written by a newer tltune, a damaged file, or an
// SQLite database that is not a results store is refused without being
// touched.
//
// Comparison of runs (regression) and charts live in the subpackages compare
// and chart.
package results

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/mattn/go-sqlite3"

	"tltune/internal/xdg"
)

// Errors that Open and the queries wrap; test them with errors.Is.
var (
	ErrNoDatabase  = errors.New("no results database")
	ErrNotDatabase = errors.New("not a usable tltune results database")
	ErrNewerSchema = errors.New("results database is newer than this tltune")
)

// A StoreError is a file that cannot serve as a results store. Its
// message is Problem, what is wrong with the file, then Fix, what to do,
// worded for the commands that name their store with --db; a command that
// names stores otherwise (merge, by its arguments) rewords Fix. It wraps
// Err, the case it is of: ErrNoDatabase, ErrNotDatabase or ErrNewerSchema.
type StoreError struct {
	Problem string // e.g. "x.db is a folder, not a usable tltune results database"
	Fix     string // e.g. "pass --db with a file path"
	Err     error
}

func (e *StoreError) Error() string { return e.Problem + "; " + e.Fix }
func (e *StoreError) Unwrap() error { return e.Err }

// A Store is an open results database. It is safe for concurrent use.
type Store struct {
	db   *sql.DB
	path string

	mu    sync.Mutex
	beats map[int64]func() // stops the heartbeat of a run this process owns (owner.go)
}

// DefaultPath is $XDG_DATA_HOME/tltune/results.db, or
// ~/.local/share/tltune/results.db when XDG_DATA_HOME is unset or not
// absolute (the XDG base-directory rule).
func DefaultPath() (string, error) {
	dir, err := xdg.Dir("XDG_DATA_HOME", filepath.Join(".local", "share"))
	if err != nil {
		return "", fmt.Errorf("cannot find the results database: %v, or pass --db PATH", err)
	}
	return filepath.Join(dir, "results.db"), nil
}

// Open opens the database at path, creating it (and its folder) when it
// does not exist, and migrates it to the current schema.
func Open(path string) (*Store, error) {
	return open(path, true)
}

// OpenExisting is Open for commands that only read: a missing file is
// ErrNoDatabase rather than a new empty database.
func OpenExisting(path string) (*Store, error) {
	return open(path, false)
}

func open(path string, create bool) (*Store, error) {
	fresh, err := inspect(path, create)
	if err != nil {
		return nil, err
	}
	if fresh {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return nil, fmt.Errorf("cannot create the results database: %v", err)
		}
	}
	db, err := sql.Open("sqlite3", dsn(path, "_journal_mode=WAL&_busy_timeout=5000&_foreign_keys=on&_txlock=immediate"))
	if err != nil {
		return nil, err
	}
	s := &Store{db: db, path: path, beats: map[int64]func(){}}
	if err := s.migrate(context.Background()); err != nil {
		db.Close()
		return nil, s.describe(err)
	}
	return s, nil
}

// inspect checks an existing file before anything can write to it: it must
// be an SQLite file, readable, and either empty of tables or a results store
// of a schema this tltune knows. An empty file is a new database when
// create is set, and refused otherwise: opened, it would become one. It
// reports whether the database is new.
func inspect(path string, create bool) (fresh bool, err error) {
	info, err := os.Stat(path)
	switch {
	case errors.Is(err, os.ErrNotExist) && create:
		return true, nil
	case errors.Is(err, os.ErrNotExist):
		return false, &StoreError{fmt.Sprintf("%v at %s", ErrNoDatabase, path), "run a tuning command first or pass --db with an existing database", ErrNoDatabase}
	case err != nil:
		return false, fmt.Errorf("results database: %w", err)
	case info.IsDir():
		return false, &StoreError{fmt.Sprintf("%s is a folder, %v", path, ErrNotDatabase), "pass --db with a file path", ErrNotDatabase}
	case info.Size() == 0 && create:
		return true, nil // SQLite treats an empty file as an empty database
	case info.Size() == 0: // which reading it would make it
		return false, &StoreError{fmt.Sprintf("%s is empty, not a tltune results database", path),
			"pass --db with a results store (a tuning command given this --db would make it one)", ErrNotDatabase}
	}
	if err := checkHeader(path); err != nil {
		return false, err
	}
	return false, probe(path)
}

// sqliteMagic starts every SQLite 3 database file.
var sqliteMagic = []byte("SQLite format 3\x00")

func checkHeader(path string) error {
	sqlite, err := isSQLite(path)
	switch {
	case err != nil:
		return fmt.Errorf("results database: %v", err)
	case !sqlite:
		return notDatabase(path, "it is not an SQLite file")
	}
	return nil
}

// IsSQLite reports whether the file at path is an SQLite database (a
// results store or another), by its header; false when it cannot be read.
// Commands that write a file check it first, so that an export written to
// the path of a store never replaces the store.
func IsSQLite(path string) bool {
	sqlite, _ := isSQLite(path)
	return sqlite
}

func isSQLite(path string) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	head := make([]byte, len(sqliteMagic))
	if _, err := io.ReadFull(f, head); err != nil {
		return false, nil // shorter than the header
	}
	return bytes.Equal(head, sqliteMagic), nil
}

// probe reads the schema through a read-only connection, so that a damaged
// file, a foreign database or a newer schema is refused before the
// read-write connection (which switches the journal to WAL) is opened.
//
// Without a -wal file beside it the database is all in the one file, and
// it is read as immutable: SQLite then creates no -wal or -shm file next to
// a file it may refuse. With one, committed pages may live in the WAL, so
// it is read normally.
func probe(path string) error {
	params := "immutable=1"
	if _, err := os.Stat(path + "-wal"); err == nil {
		params = "mode=ro&_busy_timeout=5000"
	}
	db, err := sql.Open("sqlite3", dsn(path, params))
	if err != nil {
		return err
	}
	defer db.Close()
	var tables, versioned int
	err = db.QueryRow(`SELECT count(*), count(*) FILTER (WHERE name = 'schema_version')
		FROM sqlite_master WHERE type = 'table'`).Scan(&tables, &versioned)
	if err != nil {
		return classify(path, err)
	}
	if tables > 0 && versioned == 0 {
		return notDatabase(path, "it is an SQLite database without a schema_version table")
	}
	if versioned == 0 {
		return nil
	}
	var version int
	if err := db.QueryRow(`SELECT coalesce(max(version), 0) FROM schema_version`).Scan(&version); err != nil {
		return classify(path, err)
	}
	return checkVersion(path, version)
}

func checkVersion(path string, version int) error {
	if version > len(migrations) {
		return &StoreError{fmt.Sprintf("%v: %s has schema version %d, this tltune knows up to %d", ErrNewerSchema, path, version, len(migrations)),
			"upgrade tltune or pass --db with another database", ErrNewerSchema}
	}
	return nil
}

func notDatabase(path, why string) error {
	return &StoreError{fmt.Sprintf("%s is %v (%s)", path, ErrNotDatabase, why), "move it aside or pass --db with another path", ErrNotDatabase}
}

// classify turns SQLite's "not a database" and "malformed" errors into
// ErrNotDatabase naming the file; other errors get the path in front.
func classify(path string, err error) error {
	var se sqlite3.Error
	if errors.As(err, &se) && (se.Code == sqlite3.ErrNotADB || se.Code == sqlite3.ErrCorrupt) {
		return notDatabase(path, "damaged: "+se.Error())
	}
	return fmt.Errorf("results database %s: %w", path, err)
}

// describe adds the store's path to errors that do not name it yet.
func (s *Store) describe(err error) error {
	if err == nil || strings.Contains(err.Error(), s.path) {
		return err
	}
	return classify(s.path, err)
}

// dsn builds an SQLite URI filename. Characters that end or escape the path
// part of a URI are percent-encoded so that any file name works.
func dsn(path, params string) string {
	esc := strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23")
	return "file:" + esc.Replace(path) + "?" + params
}

// Path is the file the store was opened from.
func (s *Store) Path() string { return s.path }

// Close stops the heartbeats of the runs the store owns and closes the
// database. Pending measurements are already committed.
func (s *Store) Close() error {
	s.stopBeats()
	return s.db.Close()
}
