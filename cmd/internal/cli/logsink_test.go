package cli

import (
	"bytes"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// gate is a log output that blocks every write until opened.
type gate struct {
	open chan struct{}
	mu   sync.Mutex
	out  bytes.Buffer
}

func (g *gate) Write(p []byte) (int, error) {
	<-g.open
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.out.Write(p)
}

func (g *gate) String() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.out.String()
}

// TestLogSinkNeverBlocks: writes return at once while the output blocks;
// beyond maxLogQueue bytes records are dropped, and the output is told how
// many once it takes writes again, in a line that names the program; Close does not wait for a blocked
// output longer than logFlushWait.
func TestLogSinkNeverBlocks(t *testing.T) {
	g := &gate{open: make(chan struct{})}
	s := newLogSink("agentd-hook", g)
	record := []byte(strings.Repeat("x", 1023) + "\n")
	start := time.Now()
	const n = 2 * maxLogQueue / 1024
	for range n {
		s.Write(record)
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("%d writes to a blocked output took %v", n, d)
	}
	close(g.open)
	s.Close()
	out := g.String()
	// The queue filled up (maxLogQueue bytes, besides what the writer took
	// before it blocked); every other record is counted as dropped.
	kept := strings.Count(out, string(record))
	var dropped int
	if i := strings.Index(out, "agentd-hook: "); i < 0 {
		t.Errorf("no word of the dropped records in the output, or it does not name agentd-hook, the program")
	} else if _, err := fmt.Sscanf(out[i:], "agentd-hook: %d log records were dropped", &dropped); err != nil {
		t.Errorf("reading the notice: %v", err)
	}
	if kept < maxLogQueue/1024 || kept+dropped != n {
		t.Errorf("%d records written and %d dropped of %d, want the queue full and none lost uncounted", kept, dropped, n)
	}

	blocked := newLogSink("agentd", &gate{open: make(chan struct{})})
	blocked.Write(record)
	start = time.Now()
	blocked.Close()
	if d := time.Since(start); d > logFlushWait+time.Second {
		t.Errorf("Close on a blocked output took %v", d)
	}
}

// failing is an output whose writes fail, like a pipe without a reader.
type failing struct{ writes int }

func (f *failing) Write(p []byte) (int, error) {
	f.writes++
	return 0, errors.New("broken pipe")
}

// TestLogSinkFailingOutput: writes to an output that fails neither fail nor
// block, and Close ends.
func TestLogSinkFailingOutput(t *testing.T) {
	f := &failing{}
	s := newLogSink("agentd", f)
	for range 10 {
		if n, err := s.Write([]byte("record\n")); n != 7 || err != nil {
			t.Fatalf("Write = %d, %v", n, err)
		}
	}
	s.Close()
	if f.writes == 0 {
		t.Error("nothing was tried on the output")
	}
}

// TestLogSinkRecordsAfterClose: a record logged while the program ends (a
// hook's work that ran out of its time and logs after main closed the log)
// is dropped, and the notice says so and names the program, agentd-hook,
// not agentd.
func TestLogSinkRecordsAfterClose(t *testing.T) {
	g := &gate{open: make(chan struct{})}
	s := newLogSink("agentd-hook", g)
	s.Write([]byte("first\n")) // the writer takes it and blocks on the gate
	closed := make(chan struct{})
	go func() { s.Close(); close(closed) }()
	for closing := false; !closing; {
		s.mu.Lock()
		closing = s.closing
		s.mu.Unlock()
		runtime.Gosched()
	}
	s.Write([]byte("late\n"))
	close(g.open)
	<-closed
	out := g.String()
	want := "agentd-hook: 1 log records were dropped: they came as agentd-hook was ending, after its log was closed\n"
	if !strings.Contains(out, "first\n") || !strings.Contains(out, want) || strings.Contains(out, "late\n") {
		t.Errorf("output %q, want the first record and %q", out, want)
	}
}
