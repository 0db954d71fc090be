package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

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

// buildNoteKey names the note of a shape's configurations compiled with copts.
func (r *tuneRun) buildNoteKey(spec kernels.Spec, copts compiler.Options) string {
	return bincache.Key("configurations", r.compileID(copts), spec.Name(), spec.Layout.String())
}

// cheapConfigs returns the configurations of recipe that the note lists and
// whose kernels the cache holds; none without a cache. It drops the others
// from the note, so that the note stays as small as the shape's part of the
// cache, whose size is capped: each line costs a source generation here.
func (r *tuneRun) cheapConfigs(recipe kernels.Recipe, copts compiler.Options) []tuning.Params {
	if r.bins == nil {
		return nil
	}
	noteKey := r.buildNoteKey(recipe.Spec(), copts)
	lines, err := r.bins.Noted(noteKey)
	if err != nil {
		return nil // a hint only: the search goes on without it
	}
	var cheap []tuning.Params
	var live []string
	for _, line := range lines {
		if p, ok := r.cached(recipe, copts, line); ok {
			cheap, live = append(cheap, p), append(live, line)
		}
	}
	if len(live) < len(lines) {
		_ = r.bins.SetNote(noteKey, live) // a smaller hint next time, or the same
	}
	return cheap
}

// cached parses a line of a note and reports whether the configuration's
// kernel, compiled from its source as today, is in the cache.
func (r *tuneRun) cached(recipe kernels.Recipe, copts compiler.Options, line string) (tuning.Params, bool) {
	var p tuning.Params
	if json.Unmarshal([]byte(line), &p) != nil {
		return p, false
	}
	src, err := recipe.Source(p)
	if err != nil {
		return p, false
	}
	sum := sha256.Sum256([]byte(src))
	hash := hex.EncodeToString(sum[:])
	key := r.kernelKey(copts)
	for _, path := range []devcall.Path{devcall.PathOpenCLC, devcall.PathSPIRV} {
		if _, _, ok := r.bins.Lookup(key(path, hash)); ok {
			return p, true
		}
	}
	return p, false
}

// noteBuilt adds the configurations of rep that ran correctly to the
// shape's note.
func (r *tuneRun) noteBuilt(spec kernels.Spec, copts compiler.Options, rep *tuner.Report) error {
	if r.bins == nil {
		return nil
	}
	var lines []string
	for _, o := range rep.Outcomes {
		if o.Kind != tuner.OK {
			continue
		}
		line, err := json.Marshal(o.Params)
		if err != nil {
			return err
		}
		lines = append(lines, string(line))
	}
	return r.bins.Note(r.buildNoteKey(spec, copts), lines)
}
