package commands

import (
	"fmt"
	"github.com/agentd/agentd/commands/protocol"

	"github.com/agentd/agentd/caller"
)

// personRule marks a command as the person's: called from an agent's
// shell, which acts as the model, it is refused. when is how
// docs/commands.md says which calls ("" for every call); what says what a
// call does that only the person may do, or "" when this call does nothing
// of the kind.
type personRule struct {
	when string
	what func(args withCommon) string
}

// personOnly marks c as the person's: every call from an agent's shell is
// refused, saying that the model may not do what ("set a goal's check").
func (c Command) personOnly(what string) Command {
	c.person = &personRule{what: func(withCommon) string { return what }}
	return c
}

// personOnlyWhen marks the calls of c for which what, given the decoded
// ARGS, says what they do as the person's; when says which calls in
// docs/commands.md.
func personOnlyWhen[PA withCommon](c Command, when string, what func(a PA) string) Command {
	c.person = &personRule{when: when, what: func(a withCommon) string { return what(a.(PA)) }}
	return c
}

// Who is "anyone", or who may run c for docs/commands.md.
func (c *Command) Who() string {
	switch {
	case c.person == nil:
		return "anyone"
	case c.person.when == "":
		return "the person"
	}
	return "the person, " + c.person.when
}

// SetCaller says who the client acts for: a person (the zero
// caller.Agent), or an agent's shell, whose calls of the person's
// commands are refused (CodeAgentShell). An LSP connection has it from its
// peer's process, a shell command that opens the state from its own.
func (c *Client) SetCaller(a caller.Agent) {
	c.mu.Lock()
	c.caller = a
	c.mu.Unlock()
}

// refuseAgentShell is the one check of the person's commands: the call,
// from an agent's shell, of a command whose rule says it does what only
// the person may do is refused.
func (p *Prepared) refuseAgentShell() error {
	if p.cmd.person == nil || !p.c.caller.IsAgent() {
		return nil
	}
	what := p.cmd.person.what(p.args)
	if what == "" {
		return nil
	}
	return AgentShellError(string(p.cmd.ID), what, p.c.caller)
}

// AgentShellError is the refusal of name ("agentd.goal.setCheck", or a
// shell command's name for what it does without a command: "agentd team
// accept"), which does what only the person may, called from a, an
// agent's shell: code CodeAgentShell, and a message that names the agent
// and says what to do.
func AgentShellError(name, what string, a caller.Agent) *Error {
	return &Error{Code: protocol.CodeAgentShell, Msg: fmt.Sprintf("%s was refused: it came from %v, and a command run there acts as the model, which may not %s; "+
		"only the person at this machine may: ask them to run it in their own terminal or editor, not through %s's shell", name, a, what, a.Name)}
}
