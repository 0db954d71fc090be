package tuner

// Extending the budget. A search of a large space may still be finding
// faster configurations when its budget runs out: in 14 default GP runs
// of gemv.n 1024² (26,727 candidates) on an H100, every run found its best
// in evaluations 29 to 47 of 48, and 3 of the 14 ended below 90 % of the
// copy ceiling; with 96 evaluations all 14 ended at 92.2-93.3 %
// (docs/measurements.md). A fixed larger budget would cost every run,
// small spaces included, what only the searches still improving need.
// So a run may go past its budget, by at most Options.Extend evaluations,
// for as long as one of its last extendPatience evaluations beat the best
// before it by more than extendGain.

const (
	// extendGain is the improvement that counts: more than the 1 % half
	// width the measurement protocol times a configuration to, so that
	// a configuration as fast as the best, measured a little faster, does
	// not keep the search going.
	extendGain = 0.01
	// extendPatience is how many evaluations without such a gain end an
	// extension: a third of the default budget, more than the 11 a run
	// keeps in flight, so that the proposals made before the last gain
	// was seen do not end it.
	extendPatience = 16
)

// extending reports whether a run at its budget may make one more
// proposal.
func (r *run) extending() bool {
	return r.opts.Extend > 0 && r.gainedAt > 0 &&
		r.rep.Evaluations+r.inflight < r.opts.Budget+r.opts.Extend &&
		r.rep.Evaluations-r.gainedAt < extendPatience
}
