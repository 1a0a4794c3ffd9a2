package goal

import "time"

// Instant is one reading of the clock the goal runtime is given
// (docs/runtime.md §2.4.1). Wall is the wall clock: it stamps what the
// state stores and shows (createdAt, updatedAt). Mono is a monotonic
// reading: the time elapsed since the monotonic clock named Clock started
// (in agentd, one clock per process). The wall clock of an active goal
// runs on Mono, and only between readings of the same Clock, so a step of
// the system clock neither freezes nor spends a wall-clock budget.
type Instant struct {
	Wall  time.Time
	Mono  time.Duration
	Clock string
}

// running is the stretch of g's wall clock not yet settled into
// WallClockMs, when the goal is active: the monotonic time since its stamp
// when the stamp was read from now's clock. A stretch stamped by another
// clock (another process) counts nothing here: that process settled it at
// its last call, and a serving process takes it over when it opens the
// folder (see Adopt). A stretch stored by an agentd before monotonic
// stamps counts, as there, the wall time since ActiveSince (never less
// than 0) until it is stamped again.
func (g *Goal) running(now Instant) time.Duration {
	switch {
	case !g.clockRuns():
		return 0
	case g.ActiveClock != "" && g.ActiveClock == now.Clock:
		return max(0, now.Mono-g.ActiveMono)
	case g.ActiveClock == "" && !g.ActiveSince.IsZero():
		return max(0, now.Wall.Sub(g.ActiveSince))
	}
	return 0
}

// clockRuns says whether g's wall clock runs: while it is active, and
// while it waits with a wait that counts (docs/runtime.md §2.13).
func (g *Goal) clockRuns() bool {
	return g.Status == Active || (g.Status == Waiting && g.Wait != nil && g.Wait.WallClock != WallClockStops)
}

// stamp starts the running stretch at now.
func (g *Goal) stamp(now Instant) {
	g.ActiveSince, g.ActiveClock, g.ActiveMono = now.Wall, now.Clock, now.Mono
}

// unstamp ends the running stretch (the goal is no longer active).
func (g *Goal) unstamp() {
	g.ActiveSince, g.ActiveClock, g.ActiveMono = time.Time{}, "", 0
}

// settle folds the whole milliseconds of the running stretch into
// WallClockMs. On now's clock the remainder keeps running, so that settling
// often loses nothing; a stretch of another clock, or an unstamped one, is
// taken over: it runs on from now.
func (g *Goal) settle(now Instant) {
	if !g.clockRuns() {
		return
	}
	ms := g.running(now).Milliseconds()
	g.WallClockMs += ms
	if g.ActiveClock == "" || g.ActiveClock != now.Clock {
		g.stamp(now)
		return
	}
	g.ActiveMono += time.Duration(ms) * time.Millisecond
	// ActiveSince stays the wall time of the stamp, for the record and for
	// an older agentd reading this state, which counts from it.
	g.ActiveSince = now.Wall.Add(g.ActiveMono - now.Mono)
}

// settleClock settles the current goal's wall clock at now. The lifecycle
// calls do it once past their refusals and retries (which change nothing),
// and budget, task-file and status changes settle too, so that the stored
// WallClockMs is the monotonic time counted up to the last call: what
// another process can trust.
func (s *State) settleClock(now Instant) {
	if s.Goal != nil {
		s.Goal.settle(now)
	}
}

// Adopt takes the running wall clock of an active goal over onto now's
// clock, for a serving process that opens a folder (docs/runtime.md
// §2.4.1): a stretch stamped by another clock counts nothing more (that
// process settled it at its last call) and runs on from now; a stretch
// stored by an agentd before monotonic stamps counts from its wall-clock
// start to lastSeen, the session's last write (never less than 0), as that
// agentd did. It reports whether the state changed (store it).
func (s *State) Adopt(now Instant, lastSeen time.Time) bool {
	g := s.Goal
	if g == nil || !g.clockRuns() || (g.ActiveClock != "" && g.ActiveClock == now.Clock) {
		return false
	}
	if g.ActiveClock == "" && !g.ActiveSince.IsZero() && lastSeen.After(g.ActiveSince) {
		g.WallClockMs += lastSeen.Sub(g.ActiveSince).Milliseconds()
	}
	g.stamp(now)
	return true
}
