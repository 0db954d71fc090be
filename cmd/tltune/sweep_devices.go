package main

import (
	"cmp"
	stdctx "context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"tltune/device"
)

// A sweep over several devices (--device 0,1 or all): one worker per
// device takes the next shape as soon as it is free, so the devices finish
// together however unequal the shapes; every shape is swept once, on
// whichever device took it, into one run. The devices must be of one
// model (name, driver, runtime): a run has one environment, and a tuning
// table is per model. Tune two models with two sweeps; they may share the
// store and run at once.

// sweepDevices resolves --device for a sweep: one device, a list, or all of
// a kind.
func sweepDevices(spec string) ([]*device.Info, error) {
	infos, err := device.SelectAll(enumerateDevices(), spec)
	if err != nil {
		return nil, err
	}
	for _, d := range infos[1:] {
		if a, b := environment(*infos[0]), environment(*d); a != b {
			return nil, inputError{fmt.Errorf("--device %s: %s (%s, driver %s) and %s (%s, driver %s) are not one model; sweep each model on its own",
				spec, infos[0].ID, a.Device, a.Driver, d.ID, b.Device, b.Driver)}
		}
	}
	return infos, nil
}

// sweepAll sweeps every shape with one worker per device and returns the
// shapes in suite order: those finished, and those an interrupt stopped.
// Each shape's line is printed as it finishes. An error other than the
// interrupt stops every worker and is returned.
func (s *sweep) sweepAll(ctx stdctx.Context, c *context) ([]sweepShape, error) {
	ctx, cancel := stdctx.WithCancel(ctx)
	defer cancel()
	next := make(chan int)
	go func() {
		defer close(next)
		for _, i := range s.order() {
			select {
			case next <- i:
			case <-ctx.Done():
				return
			}
		}
	}()
	swept := make([]*sweepShape, len(s.recipes))
	var firstErr error
	var wg sync.WaitGroup
	for _, w := range s.runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				shape, err := s.shape(ctx, c, w, i)
				s.mu.Lock()
				if err == nil || errors.Is(err, stdctx.Canceled) {
					swept[i] = &shape
					if !s.flags.asJSON {
						shape.writeLine(c.stdout)
					}
				}
				if err != nil && firstErr == nil {
					firstErr = err
					cancel()
				}
				s.mu.Unlock()
				if err != nil {
					return
				}
			}
		}()
	}
	wg.Wait()
	var shapes []sweepShape
	for _, sh := range swept {
		if sh != nil {
			shapes = append(shapes, *sh)
		}
	}
	return shapes, firstErr
}

// order is the order in which shapes are handed out: the suite's on one
// device; on several, the heaviest first, so that no device is left with a
// long shape while the others wait (the estimate the shards use).
func (s *sweep) order() []int {
	idx := make([]int, len(s.recipes))
	for i := range idx {
		idx[i] = i
	}
	if len(s.runs) > 1 {
		cost := func(i int) float64 { return s.suite.Cases[i].Cost() }
		slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(cost(b), cost(a)) })
	}
	return idx
}

// deviceIDs lists the devices of a sweep over several, for its report;
// nil for one.
func (s *sweep) deviceIDs() []string {
	if len(s.runs) == 1 {
		return nil
	}
	ids := make([]string, len(s.runs))
	for i, r := range s.runs {
		ids[i] = r.info.ID
	}
	return ids
}
