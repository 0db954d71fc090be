package main

import (
	stdctx "context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"tltune/internal/speak"
	"tltune/results"
)

func init() {
	register(&command{
		name:    "merge",
		summary: "merge results stores (the shards of a campaign, other machines' stores) into one; merging twice changes nothing",
		usage:   "OUT.db IN.db... [--json]",
		run:     mergeCmd,
	})
}

func mergeCmd(c *context, args []string) int {
	fs := c.flags()
	asJSON := fs.Bool("json", false, "print what each merge added as JSON")
	pos, status, ok := parseInterleaved(c, fs, args)
	if !ok {
		return status
	}
	if len(pos) < 2 {
		return c.usageError("name the store to merge into and at least one store to merge (tltune merge OUT.db IN.db...)")
	}
	out, inputs := pos[0], pos[1:]
	// Every input is checked before anything is written, so that a typo in
	// the last one does not leave the others merged.
	for _, in := range inputs {
		if err := results.CheckMergeable(in); err != nil {
			fmt.Fprintf(c.stderr, "tltune merge: %v\n", refix(err, "merge results store files only (tltune merge OUT.db IN.db...)"))
			return exitUsage
		}
	}
	store, err := openStore(out, true)
	if err != nil {
		fix := "merge into another file (a new one is created)"
		if errors.Is(err, results.ErrNewerSchema) {
			fix = "upgrade tltune or merge into another file"
		}
		return c.fail(refix(err, fix))
	}
	defer store.Close()
	var reports []results.MergeReport
	for _, in := range inputs {
		rep, err := store.Merge(stdctx.Background(), in)
		if errors.Is(err, results.ErrMergeSchema) {
			fmt.Fprintf(c.stderr, "tltune merge: %v\n", err)
			return exitUsage
		}
		if err != nil {
			return c.fail(err)
		}
		reports = append(reports, rep)
		if !*asJSON {
			writeMergeLine(c.stdout, rep)
		}
	}
	if *asJSON {
		err = speak.WriteJSON(c.stdout, reports)
	} else {
		err = writeMergeTotal(c.stdout, store.Path(), reports)
	}
	if err != nil {
		return c.fail(err)
	}
	return exitOK
}

// refix words the remedy of a file that is no results store (a
// results.StoreError, whose remedy names --db) with fix: merge names its
// stores by argument. Other errors are returned as they are.
func refix(err error, fix string) error {
	var se *results.StoreError
	if !errors.As(err, &se) || se.Fix == "" {
		return err
	}
	return &results.StoreError{Problem: se.Problem, Fix: fix, Err: se.Err}
}

// writeMergeLine says what merging one store did: where each of its runs
// went, and the rows it added.
func writeMergeLine(w io.Writer, rep results.MergeReport) {
	runs := make([]string, len(rep.Runs))
	for i, r := range rep.Runs {
		runs[i] = fmt.Sprintf("run %d → %d %s", r.From, r.Into, r.Result)
	}
	if len(runs) == 0 {
		runs = []string{"no runs"}
	}
	fmt.Fprintf(w, "%s: %s; added %s\n", rep.Source, strings.Join(runs, ", "), addedRows(rep.Added))
}

// addedRows lists the nonzero counts of added rows by table, or says that
// nothing was new.
func addedRows(added map[string]int) string {
	var parts []string
	for _, table := range slices.Sorted(maps.Keys(added)) {
		if n := added[table]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", table, n))
		}
	}
	if len(parts) == 0 {
		return "nothing (everything was merged before)"
	}
	return strings.Join(parts, ", ")
}

func writeMergeTotal(w io.Writer, out string, reports []results.MergeReport) error {
	total := map[string]int{}
	runs := map[int]bool{}
	for _, rep := range reports {
		for table, n := range rep.Added {
			total[table] += n
		}
		for _, r := range rep.Runs {
			runs[int(r.Into)] = true
		}
	}
	ids := slices.Sorted(maps.Keys(runs))
	_, err := fmt.Fprintf(w, "merged %d store(s) into %s: runs %s; added %s\n", len(reports), out, intsString(ids), addedRows(total))
	return err
}
