package cli

import (
	"fmt"
	"io"
	"sync"
	"time"
)

// maxLogQueue bounds, in bytes, the log records waiting to be written.
const maxLogQueue = 1 << 20

// logFlushWait bounds how long Close waits for the queued records.
const logFlushWait = time.Second

// logSink is the writer under agentd's logger. Write only queues the
// record (slog writes each record with one Write) and one goroutine writes
// the queue out, so that a log nobody reads (a full pipe) never stalls
// agentd and one that fails (a closed pipe, EPIPE) never ends it: records
// beyond maxLogQueue bytes are dropped, and so are those whose write fails.
// The next record written says how many were dropped
// (docs/reliability.md, "Signals and descriptors").
type logSink struct {
	w    io.Writer
	name string        // the program, as the notice of dropped records names it: agentd or agentd-hook
	done chan struct{} // closed when the writer goroutine has ended

	mu      sync.Mutex
	cond    *sync.Cond
	queue   [][]byte
	queued  int // bytes in queue
	dropped int // records dropped since the last notice: the queue was full or the write failed
	late    int // records dropped since the last notice because they came after Close
	closing bool
}

// newLogSink is the sink of program name (agentd, agentd-hook) on w.
func newLogSink(name string, w io.Writer) *logSink {
	s := &logSink{w: w, name: name, done: make(chan struct{})}
	s.cond = sync.NewCond(&s.mu)
	go s.run()
	return s
}

// Write queues a copy of p; it never blocks on the output and never fails.
func (s *logSink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.closing:
		s.late++
		return len(p), nil
	case s.queued+len(p) > maxLogQueue:
		s.dropped++
		return len(p), nil
	}
	s.queue = append(s.queue, append([]byte(nil), p...))
	s.queued += len(p)
	s.cond.Signal()
	return len(p), nil
}

func (s *logSink) run() {
	defer close(s.done)
	for {
		s.mu.Lock()
		for len(s.queue) == 0 && !s.closing {
			s.cond.Wait()
		}
		batch, dropped, late := s.queue, s.dropped, s.late
		s.queue, s.queued, s.dropped, s.late = nil, 0, 0, 0
		closing := s.closing
		s.mu.Unlock()
		if dropped > 0 {
			s.write(fmt.Appendf(nil, "%s: %d log records were dropped: the log was not written fast enough\n", s.name, dropped))
		}
		if late > 0 {
			s.write(fmt.Appendf(nil, "%s: %d log records were dropped: they came as %s was ending, after its log was closed\n", s.name, late, s.name))
		}
		for _, b := range batch {
			s.write(b)
		}
		if closing && len(batch) == 0 {
			return
		}
	}
}

// write writes one record; a failed one is counted as dropped.
func (s *logSink) write(b []byte) {
	if _, err := s.w.Write(b); err != nil {
		s.mu.Lock()
		s.dropped++
		s.mu.Unlock()
	}
}

// Close writes what is queued, waiting at most logFlushWait for an output
// that does not take it; later records are dropped.
func (s *logSink) Close() {
	s.mu.Lock()
	s.closing = true
	s.cond.Signal()
	s.mu.Unlock()
	select {
	case <-s.done:
	case <-time.After(logFlushWait):
	}
}
