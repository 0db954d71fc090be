package tuner

import (
	"context"
	"math"

	"tltune/tuner/measure"
)

// Racing (Options.Race). Each configuration's timing races the best one
// timed before it: the Measurer gets measure.Race through RaceOf, with the
// lowest upper end of an OK outcome's confidence interval so far, and
// stops timing once the configuration is clearly slower than that. The
// outcome stays OK, with its partial samples (Outcome.Raced): a
// configuration is never made into another result by racing. Its median
// lies above the raced-against configuration's (its lower bound does), so
// a raced outcome never leads the ranking of the search; and at the end
// retime times the fastest again with the full protocol, back to back,
// until the top RetimeTop are all re-timed, so that the winner and its
// runners-up are measured as carefully as without racing and compared
// under the same conditions.

// race is the race of the next configuration timed.
func (r *run) race() measure.Race {
	return measure.Race{Above: r.raceAbove, Margin: r.opts.RaceMargin}
}

// noteTimed lowers the bound configurations race against to o's upper
// confidence bound, when o is OK and its interval is bounded.
func (r *run) noteTimed(o *Outcome) {
	hi := o.Result.Summary.Hi
	if o.Kind != OK || math.IsInf(hi, 0) || !(hi > 0) {
		return
	}
	if r.raceAbove == 0 || hi < r.raceAbove {
		r.raceAbove = hi
	}
}

// retime times the RetimeTop fastest OK outcomes again with the full
// protocol, one after another, until the fastest RetimeTop are all
// re-timed: one that comes out slower (or fails now) lets the next move
// up, raced or not, and that one is re-timed in turn. Each configuration is
// re-timed once; a resumed run re-times only what its predecessor had not.
func (r *run) retime(ctx context.Context) {
	tried := map[int]bool{}
	for r.fatal == nil && ctx.Err() == nil {
		i, ok := r.nextToRetime(tried)
		if !ok {
			return
		}
		tried[i] = true
		r.retimeOne(ctx, i)
	}
}

// nextToRetime is the index in the report's outcomes of the fastest
// outcome in the top RetimeTop that is neither re-timed nor tried.
func (r *run) nextToRetime(tried map[int]bool) (int, bool) {
	for _, i := range r.rep.topIndexes(r.opts.RetimeTop) {
		if !r.rep.Outcomes[i].Retimed && !tried[i] {
			return i, true
		}
	}
	return 0, false
}

// retimeOne verifies and times outcome i again, without racing, records
// the new outcome in place of the old one and puts it in the report.
func (r *run) retimeOne(ctx context.Context, i int) {
	prev := r.rep.Outcomes[i]
	src := prev.Source
	if src == "" { // resumed: the store keeps no source, the recipe makes it again
		var err error
		if src, err = r.t.Generate(prev.Params); err != nil || SourceHash(src) != prev.SourceHash {
			return // the recipe changed since: its timing stands as recorded
		}
	}
	j := &job{out: Outcome{Params: prev.Params, Seq: prev.Seq, Source: src, SourceHash: prev.SourceHash, CacheHit: true}}
	var created bool
	j.entry, created = r.cache.acquire(prev.SourceHash)
	if created {
		r.compile(ctx, j)
	}
	r.measure(ctx, j, PhaseRetime, false)
	if !j.done {
		return // cancelled: a resumed run re-times it
	}
	o := &j.out
	o.CacheHit, o.CompileTime, o.Retimed = prev.CacheHit, prev.CompileTime, true
	if !r.commit(ctx, "recording the re-timing of", o.Params, func(ctx context.Context) error { return r.t.Recorder.Retime(ctx, *o) }) {
		return
	}
	r.rep.Counts[prev.Kind]--
	r.rep.Counts[o.Kind]++
	r.rep.Outcomes[i] = *o
	r.best = r.rep.Best()
}

// countTimings counts the raced and the re-timed outcomes.
func (rep *Report) countTimings() {
	rep.Raced, rep.Retimed = 0, 0
	for i := range rep.Outcomes {
		if rep.Outcomes[i].Raced() {
			rep.Raced++
		}
		if rep.Outcomes[i].Retimed {
			rep.Retimed++
		}
	}
}
