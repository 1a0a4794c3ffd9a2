package main

import (
	"fmt"
	"strconv"
	"strings"
)

// lua renders protocol.lua: the constants of protocol.gen.ts, with the same
// keys in snake case.
func (p *model) lua() ([]byte, error) {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("%s\n", comment("-- ", header))
	w("--\n-- agentd.protocol: the agentd protocol as the plugin sees it: command ids,\n")
	w("-- notification methods, statuses, error codes and limits, and the annotated shape\n")
	w("-- of each command's arguments. Pure data.\n")
	w("local M = {}\n\n")

	w("--- Server command ids (docs/protocol.md §3), by name: protocol.Commands.\nM.commands = {\n")
	for _, c := range p.commands {
		w("  %s = %s,\n", snake(commandKey(string(c.ID))), strconv.Quote(string(c.ID)))
	}
	w("}\n\n--- Notification methods (docs/protocol.md §4), by name.\nM.notifications = {\n")
	for _, n := range notifications {
		w("  %s = %s,\n", snake(notificationKey(n.method)), strconv.Quote(n.method))
	}
	w("}\n")
	for i, e := range enums {
		w("\n--- Every %v, in declaration order.\nM.%s = { %s }\n", e.goType, snake(e.list), luaList(p.enumValues[i]))
	}
	w("\n--- The goal statuses each action accepts (docs/runtime.md §2.3, §2.8), by action:\n")
	w("--- offer an action only for a goal in one of them. model_update: the statuses the\n")
	w("--- model may set with UpdateGoal.\nM.goal_action_statuses = {\n")
	for _, a := range goalActions {
		w("  %s = { %s }, -- %s\n", snake(a.name), luaList(statusNames(a.statuses)), a.from)
	}
	w("}\n")
	w("\n--- Stable error codes (docs/runtime.md §3): `data.code` of a refusal, by name.\nM.errors = {\n")
	for _, c := range p.errorCodes {
		w("  %s = %s,\n", snake(errorKey(c)), strconv.Quote(c))
	}
	w("}\n\n--- Limits the server enforces, for checks before sending and for messages.\nM.limits = {\n")
	for _, l := range limits {
		w("  %s = %d, -- %s\n", snake(l.name), l.value, l.doc)
	}
	w("}\n")
	if err := p.luaArgs(w); err != nil {
		return nil, err
	}
	w("\nreturn M\n")
	return []byte(b.String()), nil
}

// luaList is values as Lua string literals, comma-separated.
func luaList(values []string) string {
	q := make([]string, len(values))
	for i, v := range values {
		q[i] = strconv.Quote(v)
	}
	return strings.Join(q, ", ")
}
