package compiler

// The compiler's tests verify the IR after every pass (check mode), so a
// pass that breaks its invariants fails them by name.
func init() { checkPasses = true }

// SetCheckPasses turns check mode for every compile on or off and returns
// what restores the previous setting: the benchmarks measure the compiler
// as the tuner runs it, without check mode.
func SetCheckPasses(on bool) (restore func()) {
	old := checkPasses
	checkPasses = on
	return func() { checkPasses = old }
}
