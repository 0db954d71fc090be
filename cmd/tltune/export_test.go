package main

import (
	"os"
	"path/filepath"
	"testing"
)

func TestExportGolden(t *testing.T) {
	db := fixtureDB(t)
	tests := []struct {
		name string
		args []string
	}{
		{"export-run1.csv.stdout", []string{"--run", "1"}},
		{"export-nightly.json.stdout", []string{"--run", "nightly", "--format", "json"}},
		{"export-last.json.stdout", []string{"--format", "json"}},
		{"export-run1-ok.csv.stdout", []string{"--run", "1", "--outcome", "ok"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status, out, errOut := tltune(append([]string{"export", "--db", db}, tc.args...)...)
			if status != exitOK || errOut != "" {
				t.Fatalf("status %d, stderr %q", status, errOut)
			}
			checkGolden(t, tc.name, []byte(out))
		})
	}
}

func TestExportFile(t *testing.T) {
	db := fixtureDB(t)
	path := filepath.Join(t.TempDir(), "run.csv")
	if status, out, errOut := tltune("export", "--db", db, "--run", "1", "-o", path); status != exitOK || out != "" || errOut != "" {
		t.Fatalf("status %d, stdout %q, stderr %q", status, out, errOut)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "export-run1.csv.stdout", got)
}

func TestExportErrors(t *testing.T) {
	db := fixtureDB(t)
	tests := []struct {
		args   []string
		status int
		want   string
	}{
		{[]string{"--format", "xml"}, exitUsage, `--format "xml": want one of csv, json`},
		{[]string{"--run", "7"}, exitUsage, "no such run 7 in " + db},
		{[]string{"--run", "weekly"}, exitUsage, `no run id or tag "weekly"`},
		{[]string{"run1"}, exitUsage, `unexpected argument "run1"`},
		{[]string{"--outcome", "ok,fine"}, exitUsage, `--outcome: outcome "fine": want one of ok, pruned,`},
	}
	for _, tc := range tests {
		status, out, errOut := tltune(append([]string{"export", "--db", db}, tc.args...)...)
		checkOneLine(t, status, tc.status, out, errOut, tc.want)
	}
}
