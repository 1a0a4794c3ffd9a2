package etcdtest

import (
	"slices"
	"sync"
	"testing"
	"time"
)

// NearStep is how often the near machine's agent of BusyWriter writes:
// a bookkeeping write at every step (docs/team.md, "A far machine").
const NearStep = 5 * time.Millisecond

// FarP99 is the bound on a far machine's writes, 99th percentile
// (docs/team.md, "A far machine"), which BusyWriter logs its measure
// against.
const FarP99 = 2 * time.Second

// BusyWriter runs far(0) .. far(n-1), one after the other, while another
// goroutine runs near(0), near(1), ... every NearStep on the same
// session, as a near machine's agent does at each of its steps; near stops
// once the last far write returns. A far error stops near and fails t at
// once; a near error fails t and ends the near writes. The far writes'
// 99th percentile is logged beside FarP99, not asserted: a timing claim
// is measured, and a starved machine slows every write alike (a far write
// that gets no answer at all within its bound fails as an error). It
// returns how many near steps succeeded.
func BusyWriter(t testing.TB, n int, far, near func(i int) error) (steps int) {
	t.Helper()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			case <-time.After(NearStep):
			}
			if err := near(steps); err != nil {
				t.Errorf("near step %d: %v", steps, err)
				return
			}
			steps++
		}
	}()
	took := make([]time.Duration, 0, n)
	for i := range n {
		start := time.Now()
		if err := far(i); err != nil {
			close(stop)
			wg.Wait()
			t.Fatalf("far write %d after %v: %v", i, time.Since(start), err)
		}
		took = append(took, time.Since(start))
	}
	close(stop)
	wg.Wait()
	slices.Sort(took)
	t.Logf("far writes: p50 %v, p99 %v (the bound: %v), max %v; near steps meanwhile: %d", took[len(took)/2], took[len(took)*99/100], FarP99, took[len(took)-1], steps)
	return steps
}
