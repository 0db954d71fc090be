package device

// Timed launches run back to back: waiting for each launch before queuing
// the next leaves the device idle while the host notices the end, reads
// the timer and launches again, which on an H100 took about as long as a
// 77 µs kernel, and launches separated by such gaps ran 3-4 % slower than
// launches in a row. Every timing of tltune (the tuner's samples and the
// ceilings of peak) takes them the same way, so that ratios between them
// hold.

// LaunchesAhead is the launches BackToBack keeps queued beyond the one it
// waits for: one is enough for the device to find the next launch queued
// when it finishes one.
const LaunchesAhead = 1

// BackToBack times launches that run back to back. next returns the device
// time of the oldest launch not yet timed, calling launch first until
// LaunchesAhead more are queued behind it; stop waits for and releases
// the launches still queued, and must be called when timing ends.
func BackToBack(launch func() (Event, error)) (next func() (int64, error), stop func()) {
	var queued []Event
	next = func() (int64, error) {
		for len(queued) <= LaunchesAhead {
			ev, err := launch()
			if err != nil {
				return 0, err
			}
			queued = append(queued, ev)
		}
		ev := queued[0]
		queued = queued[1:]
		defer ev.Release()
		return ev.Nanoseconds()
	}
	stop = func() {
		for _, ev := range queued {
			ev.Wait()
			ev.Release()
		}
		queued = nil
	}
	return next, stop
}
