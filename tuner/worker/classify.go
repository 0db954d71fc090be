package worker

import (
	"context"
	"errors"

	"tltune/device"
	"tltune/tuner"
)

// Classify maps the device's failure kinds to the tuner's outcomes;
// anything else is fallback. An error already classified keeps its kind.
func Classify(err error, fallback tuner.Kind) *tuner.Error {
	var classified *tuner.Error
	if errors.As(err, &classified) {
		return classified
	}
	kinds := []struct {
		err  error
		kind tuner.Kind
	}{
		{device.ErrBuild, tuner.CompileError},
		{device.ErrWorkGroupSize, tuner.LaunchError},
		{device.ErrOutOfResources, tuner.ResourceError},
		{device.ErrDeviceLost, tuner.DeviceLost},
		{context.DeadlineExceeded, tuner.Timeout},
	}
	for _, k := range kinds {
		if errors.Is(err, k.err) {
			return &tuner.Error{Kind: k.kind, Err: err}
		}
	}
	return &tuner.Error{Kind: fallback, Err: err}
}

// kindOf is the outcome kind of a classified error.
func kindOf(err error) tuner.Kind {
	var e *tuner.Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return tuner.LaunchError
}
