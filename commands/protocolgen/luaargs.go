package main

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
)

// luaArgs renders the LuaLS annotations of every command's ARGS object
// and result (the protocol's Args and Result structs and the structs they
// hold), a class per struct, then M.command_args and M.command_results:
// the class of each command's ARGS and of its result, by command name.
// JSON null is vim.NIL; a field that may be null is typed "|nil".
func (p *model) luaArgs(w func(string, ...any)) error {
	var order []reflect.Type
	seen := map[reflect.Type]bool{}
	var visit func(t reflect.Type)
	visit = func(t reflect.Type) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || t.Name() == "" || t == limitType || t == timeType || seen[t] {
			return
		}
		seen[t] = true
		order = append(order, t)
		for i := range t.NumField() {
			visit(t.Field(i).Type)
		}
	}
	for _, c := range p.commands {
		visit(c.Args)
	}
	for _, c := range p.commands {
		visit(c.Result)
	}
	w("\n--- The ARGS object and the result of each command (docs/protocol.md §3):\n--- LuaLS classes of the protocol's Args and Result structs.\n")
	for _, t := range order {
		if err := p.luaClass(w, t); err != nil {
			return err
		}
	}
	for _, table := range []struct {
		name, doc string
		typ       func(c int) reflect.Type
	}{
		{"command_args", "ARGS", func(i int) reflect.Type { return p.commands[i].Args }},
		{"command_results", "result", func(i int) reflect.Type { return p.commands[i].Result }},
	} {
		w("\n--- The class of each command's %s, by name.\nM.%s = {\n", table.doc, table.name)
		for i, c := range p.commands {
			w("  %s = %s,\n", snake(commandKey(string(c.ID))), strconv.Quote(luaClassName(table.typ(i))))
		}
		w("}\n")
	}
	return nil
}

// luaClass writes the class of struct t: its embedded structs are its
// bases, its own JSON fields its fields.
func (p *model) luaClass(w func(string, ...any), t reflect.Type) error {
	var bases, fields []string
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct:
			bases = append(bases, luaClassName(f.Type))
			continue
		case name == "-" || !f.IsExported():
			continue
		case name == "":
			name = f.Name
		}
		typ, err := p.luaType(f.Type)
		if err != nil {
			return fmt.Errorf("%v.%s: %w", t, f.Name, err)
		}
		q := ""
		if strings.Contains(","+opts+",", ",omitempty,") || strings.Contains(","+opts+",", ",omitzero,") {
			q = "?"
		}
		fields = append(fields, fmt.Sprintf("---@field %s%s %s\n", name, q, typ))
	}
	head := luaClassName(t)
	if len(bases) > 0 {
		head += ": " + strings.Join(bases, ", ")
	}
	w("---@class %s\n%s", head, strings.Join(fields, ""))
	return nil
}

// luaClassName is the class of struct t: agentd. and its TypeScript name.
func luaClassName(t reflect.Type) string {
	if name := tsNames[t]; name != "" {
		return "agentd." + name
	}
	return "agentd." + t.Name()
}

// luaType is the LuaLS type of a value of t.
func (p *model) luaType(t reflect.Type) (string, error) {
	for i, e := range enums {
		if e.goType == t || e.wire == t {
			return `"` + strings.Join(p.enumValues[i], `"|"`) + `"`, nil
		}
	}
	switch t {
	case timeType:
		return "string", nil // RFC 3339
	case rawType:
		return "table", nil
	case limitType:
		return "number|nil", nil
	}
	switch t.Kind() {
	case reflect.Pointer:
		elem, err := p.luaType(t.Elem())
		return elem + "|nil", err
	case reflect.Slice:
		elem, err := p.luaType(t.Elem())
		if strings.Contains(elem, "|") {
			elem = "(" + elem + ")"
		}
		return elem + "[]", err
	case reflect.Map:
		elem, err := p.luaType(t.Elem())
		return "table<string, " + elem + ">", err
	case reflect.Interface:
		return "any", nil
	case reflect.String:
		return "string", nil
	case reflect.Bool:
		return "boolean", nil
	case reflect.Int, reflect.Int64, reflect.Uint64:
		return "integer", nil
	case reflect.Float64:
		return "number", nil
	case reflect.Struct:
		return luaClassName(t), nil
	}
	return "", fmt.Errorf("%v has no Lua form", t)
}
