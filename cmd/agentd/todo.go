package main

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/agentd/agentd/commands/protocol"
)

const todoUsage = `usage:
  agentd todo list [--json]
  agentd todo add TITLE...     append a pending item
  agentd todo start N          mark item N in progress
  agentd todo done N           mark item N done
  agentd todo undone N         mark item N pending again
  agentd todo rm N             remove item N
  agentd todo clear            remove every item
N is the item's number as list shows it (1 is first). A change is written as the user with
the revision of the list it was made on (agentd.todo.set with expectedRevision): if an agent
changed the list in between, nothing is written and the command says so; look again and run
it again. An edit by N says the item it changed first. Each prints the list after it
(--json: {items, revision, subagentLists?}).
The workspace folder used is named on stderr.
`

// todoCmd is `agentd todo ACTION ...`: the person's edits of the
// session's todo list from a shell, as the editors make them
// (docs/commands.md, "The todo list from a shell").
type todoCmd struct {
	shell
	// did names the item an edit by number changed, as the list it was
	// made on had it (the list after may number it differently).
	did string
}

func (*todoCmd) Name() string          { return "todo" }
func (*todoCmd) Usage([]string) string { return todoUsage }
func (*todoCmd) ShortHelp() string {
	return `  agentd todo list|add|start|done|undone|rm|clear ...
                                        read or edit the session's todo list as the user
`
}

func (c *todoCmd) Run(ctx context.Context, e *env, pos []string) int {
	if len(pos) == 0 {
		fmt.Fprint(e.stderr, todoUsage)
		return 2
	}
	if pos[0] == "help" {
		fmt.Fprint(e.stdout, todoUsage)
		return 0
	}
	edit, ok := c.edit(e, pos[0], pos[1:])
	if !ok {
		return 2
	}
	name := "todo " + pos[0]
	todos, err := c.apply(ctx, e, edit)
	if err != nil {
		fmt.Fprintf(e.stderr, "agentd %s: %v\n", name, err)
		return 1
	}
	if c.jsonOut {
		printJSON(e.stdout, todos)
		return 0
	}
	if c.did != "" {
		fmt.Fprintln(e.stdout, c.did)
	}
	fmt.Fprint(e.stdout, formatTodos(todos, true))
	return 0
}

// apply reads the list and, for an edit, writes what edit makes of it
// with the revision it read; it returns the list after.
func (c *todoCmd) apply(ctx context.Context, e *env, edit todoEdit) (protocol.TodosState, error) {
	folder, err := workspaceFolder(e, c.target)
	if err != nil {
		return protocol.TodosState{}, err
	}
	noteFolder(e.stderr, folder)
	res, err := oneShot(ctx, e, c.target, folder, protocol.CmdState, &protocol.NoArgs{})
	if err != nil || edit == nil {
		return stateTodos(res), err
	}
	todos := stateTodos(res)
	items, err := edit(slices.Clone(todos.Items))
	if err != nil {
		return protocol.TodosState{}, err
	}
	args := &protocol.TodoSetArgs{Items: &items, ExpectedRevision: &todos.Revision}
	res, err = oneShot(ctx, e, c.target, folder, protocol.CmdTodoSet, args)
	return stateTodos(res), err
}

// stateTodos is the list of a State answer (none for a failed call).
func stateTodos(res any) protocol.TodosState {
	st, _ := res.(protocol.State)
	return st.Todos
}

// todoEdit makes the list the person asked for from the list as read.
type todoEdit func(items []protocol.TodoItem) ([]protocol.TodoItem, error)

// edit is the change `agentd todo VERB REST...` makes (nil for list);
// false, its error and the usage said on stderr, for a command line that
// is wrong.
func (c *todoCmd) edit(e *env, verb string, rest []string) (todoEdit, bool) {
	usage := func(msg string) (todoEdit, bool) {
		fmt.Fprintf(e.stderr, "agentd todo %s: %s\n%s", verb, msg, todoUsage)
		return nil, false
	}
	status := map[string]protocol.TodoStatus{"start": protocol.TodoInProgress, "done": protocol.TodoDone, "undone": protocol.TodoPending}
	did := map[string]string{"start": "Started", "done": "Done", "undone": "Pending again", "rm": "Removed"}
	switch verb {
	case "list", "clear":
		if len(rest) != 0 {
			return usage("it takes no arguments")
		}
		if verb == "list" {
			return nil, true
		}
		return func([]protocol.TodoItem) ([]protocol.TodoItem, error) { return []protocol.TodoItem{}, nil }, true
	case "add":
		title := strings.TrimSpace(strings.Join(rest, " "))
		if title == "" {
			return usage("say what the item is: agentd todo add \"TITLE\"")
		}
		return func(items []protocol.TodoItem) ([]protocol.TodoItem, error) {
			return append(items, protocol.TodoItem{Title: title, Status: protocol.TodoPending}), nil
		}, true
	case "start", "done", "undone", "rm":
		if len(rest) != 1 {
			return usage("name the item by its number: agentd todo " + verb + " N (agentd todo list numbers them)")
		}
		n, err := strconv.Atoi(rest[0])
		if err != nil || n < 1 {
			return usage(fmt.Sprintf("N must be a whole number from 1 (the first item, as agentd todo list numbers them), got %q", rest[0]))
		}
		return func(items []protocol.TodoItem) ([]protocol.TodoItem, error) {
			if n > len(items) {
				return nil, fmt.Errorf("there is no item %d: the list has %d (agentd todo list shows them); nothing was written", n, len(items))
			}
			c.did = fmt.Sprintf("%s: %d. %s", did[verb], n, items[n-1].Title)
			if verb == "rm" {
				return slices.Delete(items, n-1, n), nil
			}
			items[n-1].Status = status[verb]
			return items, nil
		}, true
	}
	return usage(fmt.Sprintf("unknown action %q", verb))
}
