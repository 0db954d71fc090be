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
// whose kernels the cache holds; none without a cache.
func (r *tuneRun) cheapConfigs(recipe kernels.Recipe, copts compiler.Options) []tuning.Params {
	if r.bins == nil {
		return nil
	}
	lines, err := r.bins.Noted(r.buildNoteKey(recipe.Spec(), copts))
	if err != nil {
		return nil // a hint only: the search goes on without it
	}
	key := r.kernelKey(copts)
	var cheap []tuning.Params
	for _, line := range lines {
		var p tuning.Params
		if json.Unmarshal([]byte(line), &p) != nil {
			continue
		}
		src, err := recipe.Source(p)
		if err != nil {
			continue
		}
		sum := sha256.Sum256([]byte(src))
		hash := hex.EncodeToString(sum[:])
		for _, path := range []devcall.Path{devcall.PathOpenCLC, devcall.PathSPIRV} {
			if _, _, ok := r.bins.Lookup(key(path, hash)); ok {
				cheap = append(cheap, p)
				break
			}
		}
	}
	return cheap
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
