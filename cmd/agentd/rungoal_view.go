package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/agentd/agentd/commands"
	"github.com/agentd/agentd/commands/protocol"
	"github.com/agentd/agentd/watch"
)

// runView is what `agentd run` shows on stdout: on a terminal, one status
// line redrawn in place (the agent, the goal's status, its progress against
// its budgets, the current todo item) with the run's events as lines above
// it, cut to the terminal's width (a line that wraps cannot be redrawn in
// place); elsewhere, plain lines, a status line each time the status, the turn
// count or the current item changes. Every text goes through
// commands.VisibleText: objectives, reasons and items come from the store
// (docs/security.md).
type runView struct {
	mu       sync.Mutex
	w        io.Writer
	terminal bool
	width    func() int // the terminal's width in cells; 0: unknown
	status   string     // the status line shown last
	key      string     // plain output: what the last status line printed was about
	noted    map[string]bool
}

func newRunView(stdout io.Writer) *runView {
	f, ok := stdout.(*os.File)
	return &runView{w: stdout, terminal: ok && isTerminal(f), width: func() int { return terminalWidth(f) }, noted: map[string]bool{}}
}

// defaultTerminalWidth is the width a terminal is taken to have when its
// own cannot be read.
const defaultTerminalWidth = 80

// fit is the status line s cut to one cell less than the terminal's
// width, so that the cursor never reaches the last column and wraps.
func (v *runView) fit(s string) string {
	w := v.width()
	if w <= 0 {
		w = defaultTerminalWidth
	}
	return watch.Fit(s, w-1)
}

// clearLine returns the cursor to the start of a cleared line.
const clearLine = "\r\x1b[K"

// show updates the status line from st.
func (v *runView) show(agent string, st protocol.State) {
	g := st.Goal
	if g == nil {
		return
	}
	current := ""
	for _, it := range st.Todos.Items {
		if it.Status == "in_progress" {
			current = it.Title
			break
		}
	}
	text := fmt.Sprintf("%s · goal %s · %s", agent, g.Status, commands.FormatProgress(g))
	if current != "" {
		text += " · now: " + strings.Join(strings.Fields(current), " ")
	}
	text = commands.VisibleText(text)
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.terminal {
		v.status = v.fit(text)
		fmt.Fprint(v.w, clearLine+v.status)
		return
	}
	v.status = text
	key := fmt.Sprintf("%s|%d|%s", g.Status, g.TurnsUsed, current)
	if key != v.key {
		v.key = key
		fmt.Fprintln(v.w, text)
	}
}

// line shows an event of the run, above the status line.
func (v *runView) line(s string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	s = commands.VisibleText(s)
	if !v.terminal {
		fmt.Fprintln(v.w, s)
		return
	}
	fmt.Fprint(v.w, clearLine+s+"\n"+v.status)
}

// note is line, once per text.
func (v *runView) note(s string) {
	if v.noted[s] {
		return
	}
	v.noted[s] = true
	v.line(s)
}

// last shows the run's last line, the one saying why it stopped.
func (v *runView) last(s string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	s = commands.VisibleText(s)
	if v.terminal {
		s = clearLine + s
	}
	fmt.Fprintln(v.w, s)
}
