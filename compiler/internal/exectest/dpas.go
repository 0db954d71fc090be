package exectest

import (
	"os"
	"strconv"
	"testing"

	"tltune/compiler/tuning"
)

// DPASConfigs are the GEMM configurations the DPAS tests of both back ends
// run (compiler/dpas_exec_test.go, compiler/emit/spirv/dpas_exec_test.go),
// per subgroup size: cooperative matrices the DPAS shapes divide (rows by
// 8, columns by the subgroup size, K by 16), with and without the
// pipeline's knobs: panels staged in local memory in one to three stages,
// padding, C through local memory, several subgroups per work-group,
// unrolling, batch entries per group.
var DPASConfigs = map[int][]tuning.Params{
	16: {
		{SubgroupSize: 16, WorkGroupSize: [2]int{16, 2}, Tile: [2]int{16, 32}, Coopmatrix: [3]int{8, 16, 16},
			Unroll: 1, BatchPerGroup: 1, StageLocal: true, Stages: 2, LocalEpilogue: true},
		{SubgroupSize: 16, WorkGroupSize: [2]int{32, 1}, Tile: [2]int{32, 32}, Coopmatrix: [3]int{16, 32, 32},
			Unroll: 2, BatchPerGroup: 2},
		{SubgroupSize: 16, WorkGroupSize: [2]int{16, 1}, Tile: [2]int{16, 16}, Coopmatrix: [3]int{16, 16, 16},
			Unroll: 1, BatchPerGroup: 1, StageLocal: true, Stages: 3, LocalPad: 8},
		{SubgroupSize: 16, WorkGroupSize: [2]int{16, 2}, Tile: [2]int{32, 16}, Coopmatrix: [3]int{8, 16, 32},
			Unroll: 1, BatchPerGroup: 1, StageLocal: true, LocalPad: 4, LocalEpilogue: true},
	},
	8: {
		{SubgroupSize: 8, WorkGroupSize: [2]int{8, 2}, Tile: [2]int{16, 16}, Coopmatrix: [3]int{8, 16, 16},
			Unroll: 1, BatchPerGroup: 1, StageLocal: true, Stages: 2, LocalEpilogue: true},
		{SubgroupSize: 8, WorkGroupSize: [2]int{16, 1}, Tile: [2]int{16, 16}, Coopmatrix: [3]int{8, 8, 32},
			Unroll: 2, BatchPerGroup: 2},
		{SubgroupSize: 8, WorkGroupSize: [2]int{8, 1}, Tile: [2]int{16, 8}, Coopmatrix: [3]int{16, 8, 16},
			Unroll: 1, BatchPerGroup: 1, StageLocal: true, Stages: 3, LocalPad: 4},
		{SubgroupSize: 8, WorkGroupSize: [2]int{8, 2}, Tile: [2]int{32, 16}, Coopmatrix: [3]int{16, 16, 16},
			Unroll: 1, BatchPerGroup: 1, StageLocal: true, LocalPad: 8, LocalEpilogue: true},
	},
}

// DPASCaseEnv picks one case of a DPAS device test by its index: PoCL 5
// may take minutes to build one, so docs/bench/dpas_pocl.sh and
// docs/bench/spirv_pocl.sh run each in a process of its own, with a time
// limit.
const DPASCaseEnv = "TLTUNE_TEST_DPAS_CASE"

// PickedCases returns cases, or only the one DPASCaseEnv names. An index
// that is none of them skips t, saying how many cases there are (the
// scripts read the count from that line).
func PickedCases[T any](t *testing.T, cases []T) []T {
	t.Helper()
	only := os.Getenv(DPASCaseEnv)
	if only == "" {
		return cases
	}
	i, err := strconv.Atoi(only)
	if err != nil || i < 0 || i >= len(cases) {
		t.Skipf("%s=%s: no such case; there are %d (0 to %d)", DPASCaseEnv, only, len(cases), len(cases)-1)
	}
	return cases[i : i+1]
}
