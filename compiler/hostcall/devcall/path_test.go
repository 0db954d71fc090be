package devcall

import (
	"testing"

	"tltune/compiler"
	"tltune/compiler/target"
	"tltune/device"
)

func TestChoosePath(t *testing.T) {
	pocl := device.Info{Runtime: device.OpenCL, Name: "pthread-skylake"}
	withIL := device.Info{Runtime: device.OpenCL, Name: "Intel(R) Arc", ILVersions: []string{"SPIR-V_1.2"}}
	ze := device.Info{Runtime: device.LevelZero, Name: "Intel(R) Data Center GPU Max 1550"}
	for _, tc := range []struct {
		info   device.Info
		target string
		want   Path
	}{
		{pocl, "generic", PathOpenCLC},
		{pocl, "intel", PathOpenCLC},
		{withIL, "intel", PathSPIRV},
		{withIL, "generic", PathSPIRV},
		{ze, "intel", PathSPIRV},
		{withIL, "nvidia", PathOpenCLC}, // inline PTX has no SPIR-V form
		{ze, "emulated", PathOpenCLC},
	} {
		tgt, err := target.ByName(tc.target)
		if err != nil {
			t.Fatal(err)
		}
		if got := ChoosePath(tc.info, &compiler.Result{Target: tgt}); got != tc.want {
			t.Errorf("%s (%s, IL %v) with target %s: %s, want %s", tc.info.Name, tc.info.Runtime, tc.info.ILVersions, tc.target, got, tc.want)
		}
	}
}
