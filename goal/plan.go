package goal

import (
	"fmt"
	"strings"

	"github.com/agentd/agentd/commands/protocol"
)

// The goal and its plan (docs/runtime.md §2.12). A goal requires the items
// of its session's todo list unless the person who created it said it does
// not (Goal.TodosOptional): UpdateGoal complete is refused while an item is
// not done, and while the goal is unfinished the model's TodoList may drop
// an item from the list only once it is done. The list itself is the
// session's (package todo); the caller passes it in.

// MaxOpenItemsNamed is how many open items a refusal, a continuation and
// the snapshot's progress name; the rest are counted.
const MaxOpenItemsNamed = 20

// RequiresTodos reports whether the goal requires its todo items.
func (g *Goal) RequiresTodos() bool { return g != nil && !g.TodosOptional }

// OpenItems are the titles of the items of list that are not done, in list
// order.
func OpenItems(list []protocol.TodoItem) []string {
	var open []string
	for _, it := range list {
		if it.Status != protocol.TodoDone {
			open = append(open, it.Title)
		}
	}
	return open
}

// RequiredOpen are the items of list that keep the current goal from
// completing: the open ones when the goal requires its items and is
// unfinished; nil otherwise.
func (s *State) RequiredOpen(list []protocol.TodoItem) []string {
	if s.Goal == nil || s.Goal.Status == Complete || !s.Goal.RequiresTodos() {
		return nil
	}
	return OpenItems(list)
}

// DroppedRequired refuses, with goal.todos_open, a TodoList write of the
// model that replaces before with after and drops an item that is not done
// while the current goal requires its items and is unfinished (active,
// paused or blocked, so that blocking, dropping and resuming gets around
// nothing). An item is dropped when no item of after has its title: a
// renamed open item counts as dropped. A person's edit (agentd.todo.set)
// is never refused: what the person removes is no longer required.
func (s *State) DroppedRequired(before, after []protocol.TodoItem) error {
	open := s.RequiredOpen(before)
	if len(open) == 0 {
		return nil
	}
	kept := make(map[string]bool, len(after))
	for _, it := range after {
		kept[it.Title] = true
	}
	var dropped []string
	for _, title := range open {
		if !kept[title] {
			dropped = append(dropped, title)
		}
	}
	if len(dropped) == 0 {
		return nil
	}
	return errorf(CodeTodosOpen, fmt.Sprintf("the goal requires its todo items, and this list drops %s that %s not done: %s",
		Plural(int64(len(dropped)), "item"), isAre(len(dropped)), quoteItems(dropped)))
}

// DropRefusal is the model's answer to a TodoList write DroppedRequired
// refused with err.
func DropRefusal(err *Error) string {
	return fmt.Sprintf("The todo list was not changed: %s. An item leaves the list only once it is done: keep it, finish it and mark it done. If an item is truly no longer needed, ask the user to remove it %s.", err.Msg, askTheUserList)
}

// askTheUserList is where the user edits the list.
const askTheUserList = "in their todo panel (VS Code or Neovim)"

// openRefusal is the model's answer, goal.todos_open, to an UpdateGoal
// complete while required items are open; "" when none is.
func (s *State) openRefusal(list []protocol.TodoItem) string {
	open := s.RequiredOpen(list)
	if len(open) == 0 {
		return ""
	}
	return fmt.Sprintf("Goal not complete: it requires its todo items, and %s of the list %s not done: %s. Keep working: finish each one and mark it done with TodoList, then call UpdateGoal with complete again. If an item is truly no longer needed, ask the user to remove it %s; you cannot remove an item that is not done.",
		Plural(int64(len(open)), "item"), isAre(len(open)), quoteItems(open), askTheUserList)
}

func isAre(n int) string {
	if n == 1 {
		return "is"
	}
	return "are"
}

// quoteItems lists titles quoted on one line each, at most
// MaxOpenItemsNamed of them, and counts the rest.
func quoteItems(titles []string) string {
	shown := titles
	if len(shown) > MaxOpenItemsNamed {
		shown = shown[:MaxOpenItemsNamed]
	}
	q := make([]string, len(shown))
	for i, t := range shown {
		q[i] = fmt.Sprintf("%q", oneLine(t, 200))
	}
	out := strings.Join(q, ", ")
	if more := len(titles) - len(shown); more > 0 {
		out += fmt.Sprintf(" and %d more", more)
	}
	return out
}

// Progress is a goal's progress as its plan shows it (docs/runtime.md
// §2.12): the session's todo list and the task file's checkboxes; each
// part is absent when there is nothing to count.
type Progress struct {
	Todos      *TodoProgress `json:"todos,omitempty"`
	Checkboxes *Checkboxes   `json:"checkboxes,omitempty"`
}

// TodoProgress counts the items of the todo list: done of total, and the
// titles of the open ones in list order (at most MaxOpenItemsNamed).
type TodoProgress struct {
	Done  int      `json:"done"`
	Total int      `json:"total"`
	Open  []string `json:"open"`
}

// WithPlan fills in snap's Progress from list, the session's todo list,
// and the task file's checkboxes; it leaves Progress nil when there is
// neither. snap may be nil.
func (snap *Snapshot) WithPlan(list []protocol.TodoItem) *Snapshot {
	if snap == nil {
		return nil
	}
	var p Progress
	if len(list) > 0 {
		open := OpenItems(list)
		shown := append([]string{}, open...)
		if len(shown) > MaxOpenItemsNamed {
			shown = shown[:MaxOpenItemsNamed]
		}
		p.Todos = &TodoProgress{Done: len(list) - len(open), Total: len(list), Open: shown}
	}
	if tf := snap.TaskFile; tf != nil && tf.Checkboxes != nil {
		p.Checkboxes = clonePtr(tf.Checkboxes)
	}
	if p.Todos != nil || p.Checkboxes != nil {
		snap.Progress = &p
	}
	return snap
}
