package devcall

import (
	"tltune/compiler/target"
	"tltune/device"
)

// TargetDevice is what the compiler needs to know of a device to choose its
// target and limits: every host that compiles for a device it opened
// describes the device this one way.
func TargetDevice(info device.Info) *target.Device {
	return &target.Device{
		Name:             info.Name,
		Vendor:           info.Vendor,
		Extensions:       info.Extensions,
		SubgroupSizes:    info.SubgroupSizes,
		MaxWorkGroupSize: info.MaxWorkGroupSize,
		LocalMemBytes:    int(info.LocalMemBytes),
	}
}
