package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"tltune/results"
)

// dbFlag adds --db to fs: the results database every storing or reading
// command uses.
func dbFlag(fs *flag.FlagSet) *string {
	return fs.String("db", "", "results database (default $XDG_DATA_HOME/tltune/results.db, else ~/.local/share/tltune/results.db)")
}

// openStore opens the database named by --db, or the default one. Commands
// that only read pass create=false, so that a mistyped path is an error
// rather than a new empty database.
func openStore(path string, create bool) (*results.Store, error) {
	if path == "" {
		var err error
		if path, err = results.DefaultPath(); err != nil {
			return nil, err
		}
	}
	if create {
		return results.Open(path)
	}
	return results.OpenExisting(path)
}

// writeOutput sends what write produces to stdout when path is empty, else
// to the file at path. The file is written beside it first and renamed, so
// an error never leaves half a file or clobbers an old one; a path that
// must not be replaced (checkOutput) is refused before anything is written.
func writeOutput(stdout io.Writer, path string, write func(io.Writer) error) error {
	if path == "" {
		return write(stdout)
	}
	if err := checkOutput(path); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // no-op after the rename
	if err := write(tmp); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o644); err != nil { // CreateTemp makes it private
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// checkOutput refuses an output path that names a folder, or an SQLite
// database: renamed over a results store (-o results.db, the --db the
// command reads), an export or a report would destroy every run in it.
func checkOutput(path string) error {
	if info, err := os.Stat(path); err == nil && info.IsDir() {
		return inputError{fmt.Errorf("%s is a folder; name a file to write", path)}
	}
	if results.IsSQLite(path) {
		return inputError{fmt.Errorf("%s is an SQLite database (a results store?), which writing it would destroy; name another file", path)}
	}
	return nil
}
