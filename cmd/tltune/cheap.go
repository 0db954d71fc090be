package main

import (
	"encoding/json"
	"slices"
	"strconv"

	"tltune/compiler"
	"tltune/compiler/hostcall/devcall"
	"tltune/compiler/tuning"
	"tltune/kernels"
	"tltune/tuner"
	"tltune/tuner/bincache"
)

// Which configurations of a shape the binary cache can supply: a run notes
// the configurations that built and ran correctly (noteBuilt), and the next
// search of the same shape with the same compiler and driver prefers those
// whose kernels are still cached (cheapConfigs, tuner.Options.Cheap), so
// that tuning a space again builds little. The note only says where to
// look: a configuration counts as cheap when its kernel, compiled from its
// source as today, is in the cache's index and its program is there.
//
// A gp run also leaves its path, the configurations it proposed in order
// (notePath), which the next gp run of the shape with the same seed
// retraces (searchPath, tuner.Options.Path): its measurements scatter from
// the first's, and without the path it would soon propose others, which
// the cache does not hold.

// shapeKey names what the cache keeps of kind for a shape compiled with
// copts: more sets it apart further (a path's seed).
func (r *tuneRun) shapeKey(kind string, spec kernels.Spec, copts compiler.Options, more ...string) string {
	return bincache.Key(append([]string{kind, r.compileID(copts), spec.Name(), spec.Layout.String()}, more...)...)
}

// buildNoteKey names the note of a shape's configurations compiled with copts.
func (r *tuneRun) buildNoteKey(spec kernels.Spec, copts compiler.Options) string {
	return r.shapeKey("configurations", spec, copts)
}

// configLines writes the configurations of outcomes one a line, as notes
// and paths keep them.
func configLines(outcomes []tuner.Outcome) ([]string, error) {
	lines := make([]string, len(outcomes))
	for i, o := range outcomes {
		line, err := json.Marshal(o.Params)
		if err != nil {
			return nil, err
		}
		lines[i] = string(line)
	}
	return lines, nil
}

// parseConfig reads a configuration from a line of a note or a path.
func parseConfig(line string) (tuning.Params, bool) {
	var p tuning.Params
	return p, json.Unmarshal([]byte(line), &p) == nil
}

// cheapConfigs returns the configurations of recipe that the note lists and
// whose kernels the cache holds; none without a cache. It drops the others
// from the note, so that the note stays as small as the shape's part of the
// cache, whose size is capped: each line costs a source generation here.
func (r *tuneRun) cheapConfigs(recipe kernels.Recipe) []tuning.Params {
	if r.bins == nil {
		return nil
	}
	copts := r.setupFor(recipe.Spec().Precision).copts
	noteKey := r.buildNoteKey(recipe.Spec(), copts)
	lines, err := r.bins.Noted(noteKey)
	if err != nil {
		return nil // a hint only: the search goes on without it
	}
	key := r.kernelKey(copts)
	paths := []devcall.Path{devcall.PathOpenCLC, devcall.PathSPIRV}
	if copts.PTX {
		paths = append(paths, devcall.PathPTX)
	}
	var cheap []tuning.Params
	var live []string
	for _, line := range lines {
		if p, ok := r.cached(recipe, key, paths, line); ok {
			cheap, live = append(cheap, p), append(live, line)
		}
	}
	if len(live) < len(lines) {
		_ = r.bins.SetNote(noteKey, live) // a smaller hint next time, or the same
	}
	return cheap
}

// cached parses a line of a note and reports whether the configuration's
// kernel, compiled from its source as today, is in the cache under key
// for one of paths.
func (r *tuneRun) cached(recipe kernels.Recipe, key func(devcall.Path, string) string, paths []devcall.Path, line string) (tuning.Params, bool) {
	p, ok := parseConfig(line)
	if !ok {
		return p, false
	}
	src, err := recipe.Source(p)
	if err != nil {
		return p, false
	}
	hash := tuner.SourceHash(src)
	for _, path := range paths {
		if _, _, ok := r.bins.Lookup(key(path, hash)); ok {
			return p, true
		}
	}
	return p, false
}

// pathKey names the path of the gp runs of a shape compiled with copts
// and the run's seed.
func (r *tuneRun) pathKey(spec kernels.Spec, copts compiler.Options) string {
	return r.shapeKey("path", spec, copts, strconv.FormatUint(r.flags.seed, 10))
}

// searchPath returns the configurations of the path an earlier gp run of
// recipe's shape left with this seed, in order; none without a cache.
func (r *tuneRun) searchPath(recipe kernels.Recipe) []tuning.Params {
	if r.bins == nil || r.flags.strategy != "gp" {
		return nil
	}
	lines, err := r.bins.Path(r.pathKey(recipe.Spec(), r.setupFor(recipe.Spec().Precision).copts))
	if err != nil {
		return nil // a hint only
	}
	var path []tuning.Params
	for _, line := range lines {
		if p, ok := parseConfig(line); ok {
			path = append(path, p)
		}
	}
	return path
}

// retraces reports whether a gp run left a path for every one of recipes'
// shapes with this seed (searchPath): this run then retraces those runs and
// finds most of its programs in the cache, so its worker starts builders
// only as builds need them. Any other run will build, and prestarts them
// (worker.Client.Prestart).
func (r *tuneRun) retraces(recipes []kernels.Recipe) bool {
	for _, recipe := range recipes {
		if len(r.searchPath(recipe)) == 0 {
			return false
		}
	}
	return true
}

// notePath makes the configurations rep evaluated, in the order proposed,
// the shape's path, unless the path there already begins with them (a
// shorter run retracing a longer one leaves the longer).
func (r *tuneRun) notePath(spec kernels.Spec, rep *tuner.Report) error {
	if r.bins == nil || r.flags.strategy != "gp" {
		return nil
	}
	evaluated := slices.DeleteFunc(slices.Clone(rep.Outcomes), func(o tuner.Outcome) bool { return o.Seq == 0 })
	slices.SortFunc(evaluated, func(a, b tuner.Outcome) int { return a.Seq - b.Seq })
	lines, err := configLines(evaluated)
	if err != nil {
		return err
	}
	key := r.pathKey(spec, r.setupFor(spec.Precision).copts)
	if old, err := r.bins.Path(key); err == nil && len(old) >= len(lines) && slices.Equal(old[:len(lines)], lines) {
		return nil
	}
	return r.bins.SetPath(key, lines)
}

// noteBuilt adds the configurations of rep that ran correctly to the
// shape's note.
func (r *tuneRun) noteBuilt(spec kernels.Spec, rep *tuner.Report) error {
	if r.bins == nil {
		return nil
	}
	lines, err := configLines(slices.DeleteFunc(slices.Clone(rep.Outcomes), func(o tuner.Outcome) bool { return o.Kind != tuner.OK }))
	if err != nil {
		return err
	}
	return r.bins.Note(r.buildNoteKey(spec, r.setupFor(spec.Precision).copts), lines)
}
