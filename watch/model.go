package watch

import (
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/agentd/agentd/commands/protocol"
)

// Snapshot is what the panel shows of the session: its state and its
// newest history events, read together, and when they were read.
type Snapshot struct {
	State   protocol.State
	History []protocol.HistoryEvent
	// At is when the state was read, on the monotonic clock: the live wall
	// clock of an active goal counts from it.
	At time.Time
}

// link is the connection's state as the panel shows it.
type link int

const (
	connecting link = iota // dialling, or reading the first state
	live                   // connected: changes arrive as they happen
	lost                   // the daemon went away or cannot be reached; dialling again
)

// Messages the connection (link.go) and the clock send the model.
type (
	// snapshotMsg is a fresh read of the session.
	snapshotMsg struct{ snap Snapshot }
	// linkMsg is a change of the connection: err says why it is lost, and
	// retry when it is dialled again.
	linkMsg struct {
		state link
		err   error
		retry time.Time
	}
	// doneMsg is the outcome of a person's command sent with a key.
	doneMsg struct {
		what string // "Paused", "Resumed"
		err  error
	}
	// tickMsg is the clock's second.
	tickMsg time.Time
)

// Sender sends a person's command (agentd.goal.pause, agentd.goal.resume)
// on the panel's connection; the model runs it in a tea.Cmd.
type Sender func(id protocol.CommandID, args any) error

// Model is the panel: a Bubble Tea model whose View is a pure function of
// its fields, so that tests render it at a fixed size.
type Model struct {
	folder string // the workspace folder, as the header shows it
	send   Sender

	width, height int // the terminal's; height 0: no limit (--once)
	plain         bool

	snap    *Snapshot // nil before the first read
	link    link
	linkErr error
	retry   time.Time
	note    string // the outcome of the last key's command
	help    bool
	now     time.Time
	loc     *time.Location // where times are shown
}

// NewModel is the panel of folder, sending the person's commands through
// send. plain renders without colours or styles (for a snapshot that is
// not on a terminal).
func NewModel(folder string, send Sender, plain bool) Model {
	return Model{folder: folder, send: send, plain: plain, width: 80, now: time.Now(), loc: time.Local}
}

// Init starts the clock.
func (m Model) Init() tea.Cmd { return tick() }

// tick sends the next second: the live wall clock and the countdown to a
// new dial are drawn from it.
func tick() tea.Cmd {
	return tea.Tick(time.Second, func(t time.Time) tea.Msg { return tickMsg(t) })
}

// Update applies one message.
func (m Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
	case tea.KeyPressMsg:
		return m.key(msg)
	case snapshotMsg:
		m.snap = &msg.snap
		m.now = time.Now()
	case linkMsg:
		m.link, m.linkErr, m.retry = msg.state, msg.err, msg.retry
		m.now = time.Now()
	case doneMsg:
		m.note = msg.what
		if msg.err != nil {
			m.note = msg.err.Error()
		}
	case tickMsg:
		m.now = time.Time(msg)
		return m, tick()
	}
	return m, nil
}

// key handles a key press: q (or Ctrl-C) quits, p pauses, r resumes, ?
// shows or hides the help; any key hides the help.
func (m Model) key(k tea.KeyPressMsg) (tea.Model, tea.Cmd) {
	switch k.String() {
	case "q", "ctrl+c":
		return m, tea.Quit
	case "?":
		m.help = !m.help
		return m, nil
	case "p":
		m.help = false
		m.note = "Pausing..."
		return m, m.command("Paused", protocol.CmdGoalPause, &protocol.GoalPauseArgs{})
	case "r":
		m.help = false
		m.note = "Resuming..."
		return m, m.command("Resumed", protocol.CmdGoalResume, &protocol.NoArgs{})
	}
	m.help = false
	return m, nil
}

// command sends a person's command off the model's goroutine and reports
// its outcome as a doneMsg: what on success, else the daemon's refusal
// (caller.agent_shell from an agent's shell, goal.* when the goal cannot
// be paused or resumed).
func (m Model) command(what string, id protocol.CommandID, args any) tea.Cmd {
	send := m.send
	return func() tea.Msg {
		if err := send(id, args); err != nil {
			return doneMsg{err: err}
		}
		return doneMsg{what: what}
	}
}
