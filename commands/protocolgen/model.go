package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"unicode"

	"github.com/agentd/agentd/commands"
	"github.com/agentd/agentd/commands/protocol"
	"github.com/agentd/agentd/goal"
	"github.com/agentd/agentd/todo"
	"github.com/agentd/agentd/workspace"
	"github.com/agentd/agentd/workspace/storage"
)

// notifications are the server's notifications (docs/protocol.md §4) and
// the types of their params.
var notifications = []struct {
	method string
	params reflect.Type
}{
	{protocol.MethodTodoChanged, reflect.TypeFor[protocol.TodoChanged]()},
	{protocol.MethodGoalChanged, reflect.TypeFor[protocol.GoalChanged]()},
	{protocol.MethodTaskFileChanged, reflect.TypeFor[protocol.TaskFileChanged]()},
	{protocol.MethodQueueChanged, reflect.TypeFor[protocol.QueueChanged]()},
	{protocol.MethodStoreChanged, reflect.TypeFor[protocol.StoreChanged]()},
}

// enums are the string types whose constants the clients get as a list
// and a union type; their values are read from the Go source. wire is the
// protocol's type of the same values, which the results carry, when the
// constants are declared on a domain type (goal's).
var enums = []struct {
	goType reflect.Type
	wire   reflect.Type
	ts     string // the TypeScript union type
	list   string // the TypeScript array of the values; Lua uses it in snake case
}{
	{reflect.TypeFor[goal.Status](), reflect.TypeFor[protocol.GoalStatus](), "GoalStatus", "GOAL_STATUSES"},
	{reflect.TypeFor[todo.Status](), nil, "TodoStatus", "TODO_STATUSES"},
	{reflect.TypeFor[goal.ChangeKind](), reflect.TypeFor[protocol.GoalChangeKind](), "GoalChangeKind", "GOAL_CHANGE_KINDS"},
	{reflect.TypeFor[goal.Actor](), reflect.TypeFor[protocol.Actor](), "Actor", "ACTORS"},
	{reflect.TypeFor[protocol.Origin](), nil, "TurnOrigin", "TURN_ORIGINS"},
	{reflect.TypeFor[protocol.FinishReason](), nil, "FinishReason", "FINISH_REASONS"},
	{reflect.TypeFor[protocol.Outcome](), nil, "TurnOutcome", "TURN_OUTCOMES"},
	{reflect.TypeFor[protocol.UndoScope](), nil, "UndoScope", "UNDO_SCOPES"},
}

// goalActions are the goal statuses each status-changing action accepts
// (goal.PauseFrom and the others): the clients offer an action only for a
// goal in one of them.
var goalActions = []struct {
	name     string // TypeScript key; Lua uses it in snake case
	from     string // the Go function that declares the set
	statuses []goal.Status
}{
	{"pause", "goal.PauseFrom", goal.PauseFrom()},
	{"resume", "goal.ResumeFrom", goal.ResumeFrom()},
	{"setBudget", "goal.BudgetFrom", goal.BudgetFrom()},
	{"wait", "goal.WaitFrom", goal.WaitFrom()},
	{"modelUpdate", "goal.ModelStatuses", goal.ModelStatuses()},
}

// statusNames are statuses as strings.
func statusNames(statuses []goal.Status) []string {
	names := make([]string, len(statuses))
	for i, st := range statuses {
		names[i] = string(st)
	}
	return names
}

// errorPackages hold the exported Code* string constants that are the
// stable error codes (docs/runtime.md §3), listed in this order: a type of
// each names its package. Each domain declares its own codes; the one type
// that carries them is protocol.Error.
var errorPackages = []reflect.Type{
	reflect.TypeFor[protocol.Error](),
	reflect.TypeFor[todo.ValidationError](),
	reflect.TypeFor[goal.Snapshot](),
	reflect.TypeFor[storage.Commit](), // workspace's codes are the stores'
	reflect.TypeFor[workspace.Event](),
}

// limits are the bounds a client checks before sending or shows a person.
var limits = []struct {
	name  string // TypeScript key; Lua uses it in snake case
	value int64
	doc   string
}{
	{"maxTodoItems", todo.MaxItems, "Items in one todo list (todo.MaxItems)."},
	{"maxTodoTitleChars", todo.MaxTitleChars, "Characters of a todo title after trimming (todo.MaxTitleChars)."},
	{"maxTodoListBytes", todo.MaxListBytes, "Bytes of a todo list encoded as JSON (todo.MaxListBytes)."},
	{"maxObjectiveChars", goal.MaxObjectiveChars, "Characters of a goal objective after trimming (goal.MaxObjectiveChars)."},
	{"maxCriterionChars", goal.MaxCriterionChars, "Characters of a completion criterion; a longer one is cut (goal.MaxCriterionChars)."},
	{"maxReasonChars", goal.MaxReasonChars, "Characters of a pause reason after trimming (goal.MaxReasonChars)."},
	{"minWallClockBudgetMs", goal.MinWallClockBudgetMs, "Smallest time budget, in milliseconds (goal.MinWallClockBudgetMs)."},
	{"maxWallClockBudgetMs", goal.MaxWallClockBudgetMs, "Largest time budget, in milliseconds (goal.MaxWallClockBudgetMs)."},
	{"maxCountBudget", goal.MaxCountBudget, "Largest turn or token budget (goal.MaxCountBudget)."},
	{"maxCheckTailBytes", goal.MaxCheckTailBytes, "Bytes of a check run's output tail (goal.MaxCheckTailBytes)."},
	{"maxQueuedGoals", goal.MaxQueuedGoals, "Goals in one session's queue (goal.MaxQueuedGoals)."},
	{"maxCheckChars", goal.MaxCheckChars, "Characters of a goal's or a queued goal's check command after trimming (goal.MaxCheckChars)."},
	{"maxNameBytes", protocol.MaxNameBytes, "Bytes of a session or agent name (protocol.MaxNameBytes)."},
	{"firstBudgetWarning", goal.FirstBudgetWarning, "Percent of a budget at which the goal warns first; panels show it as a warning (goal.FirstBudgetWarning)."},
	{"finalBudgetWarning", goal.FinalBudgetWarning, "Percent of a budget at which the goal warns again and the model is told to wrap up; panels show it as an error (goal.FinalBudgetWarning)."},
}

// tsNames are the TypeScript names of Go types whose own name says too
// little outside their package; every other struct keeps its Go name.
var tsNames = map[reflect.Type]string{
	reflect.TypeFor[goal.Tool]():                "ToolInfo",
	reflect.TypeFor[protocol.TodoChanged]():     "TodoChangedParams",
	reflect.TypeFor[protocol.GoalChanged]():     "GoalChangedParams",
	reflect.TypeFor[protocol.TaskFileChanged](): "TaskFileChangedParams",
	reflect.TypeFor[protocol.QueueChanged]():    "QueueChangedParams",
	reflect.TypeFor[protocol.StoreChanged]():    "StoreChangedParams",
	reflect.TypeFor[protocol.Common]():          "CommonArgs",
}

// model is everything the generated files hold.
type model struct {
	commands   []commands.Command
	enumValues [][]string // per enums entry, in declaration order
	errorCodes []string   // distinct values, in errorPackages order
	src        *source
}

func load(root string) (*model, error) {
	p := &model{commands: commands.Commands, src: &source{root: root, pkgs: map[string]*pkgSource{}}}
	for _, e := range enums {
		pkg, err := p.src.pkg(e.goType.PkgPath())
		if err != nil {
			return nil, err
		}
		vals := pkg.typed[e.goType.Name()]
		if len(vals) == 0 {
			return nil, fmt.Errorf("%v has no string constants in %s", e.goType, pkg.dir)
		}
		p.enumValues = append(p.enumValues, vals)
	}
	seen := map[string]bool{}
	for _, t := range errorPackages {
		pkg, err := p.src.pkg(t.PkgPath())
		if err != nil {
			return nil, err
		}
		for _, c := range pkg.codes {
			if !seen[c] {
				seen[c] = true
				p.errorCodes = append(p.errorCodes, c)
			}
		}
	}
	if len(p.errorCodes) == 0 {
		return nil, fmt.Errorf("no error codes found")
	}
	return p, nil
}

// source is the Go source of the module's packages, read for what
// reflection cannot see: constants and doc comments.
type source struct {
	root string
	pkgs map[string]*pkgSource // by import path
}

type pkgSource struct {
	dir   string
	typed map[string][]string // string constants by the name of their declared type
	codes []string            // values of exported untyped Code* string constants
	docs  map[string]string   // "Type" and "Type.Field" -> doc comment
}

// modulePath is the import path of the module, from a package of it.
var modulePath = strings.TrimSuffix(reflect.TypeFor[commands.Command]().PkgPath(), "/commands")

func (s *source) pkg(importPath string) (*pkgSource, error) {
	if p, ok := s.pkgs[importPath]; ok {
		return p, nil
	}
	rel, ok := strings.CutPrefix(importPath, modulePath+"/")
	if !ok {
		return nil, fmt.Errorf("%s is not a package of %s", importPath, modulePath)
	}
	p := &pkgSource{dir: filepath.Join(s.root, filepath.FromSlash(rel)), typed: map[string][]string{}, docs: map[string]string{}}
	entries, err := os.ReadDir(p.dir)
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(p.dir, name), nil, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		p.read(f)
	}
	s.pkgs[importPath] = p
	return p, nil
}

func (p *pkgSource) read(f *ast.File) {
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok {
			continue
		}
		for _, spec := range gd.Specs {
			switch spec := spec.(type) {
			case *ast.ValueSpec:
				if gd.Tok == token.CONST {
					p.readConst(spec)
				}
			case *ast.TypeSpec:
				doc := spec.Doc
				if doc == nil && len(gd.Specs) == 1 {
					doc = gd.Doc
				}
				p.docs[spec.Name.Name] = doc.Text()
				if st, ok := spec.Type.(*ast.StructType); ok {
					for _, field := range st.Fields.List {
						text := field.Doc.Text()
						if text == "" {
							text = field.Comment.Text()
						}
						for _, n := range field.Names {
							p.docs[spec.Name.Name+"."+n.Name] = text
						}
					}
				}
			}
		}
	}
}

func (p *pkgSource) readConst(spec *ast.ValueSpec) {
	if len(spec.Values) != len(spec.Names) {
		return
	}
	for i, n := range spec.Names {
		lit, ok := spec.Values[i].(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING || !n.IsExported() {
			continue
		}
		v, err := strconv.Unquote(lit.Value)
		if err != nil {
			continue
		}
		switch typ, _ := spec.Type.(*ast.Ident); {
		case typ != nil:
			p.typed[typ.Name] = append(p.typed[typ.Name], v)
		case spec.Type == nil && strings.HasPrefix(n.Name, "Code"):
			p.codes = append(p.codes, v)
		}
	}
}

// doc is the doc comment of a type ("Type") or field ("Type.Field") of
// the package at importPath, or "".
func (s *source) doc(importPath, name string) (string, error) {
	p, err := s.pkg(importPath)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(p.docs[name]), nil
}

// commandKey names a command in the constant tables: "agentd.goal.setBudget"
// is goalSetBudget.
func commandKey(id string) string {
	return camel(strings.Split(strings.TrimPrefix(id, "agentd."), "."))
}

// notificationKey: "agentd/todoChanged" is todoChanged.
func notificationKey(method string) string { return strings.TrimPrefix(method, "agentd/") }

// errorKey: "goal.already_exists" is goalAlreadyExists.
func errorKey(code string) string {
	return camel(strings.FieldsFunc(code, func(r rune) bool { return r == '.' || r == '_' }))
}

func camel(parts []string) string {
	var b strings.Builder
	for i, part := range parts {
		if i > 0 && part != "" {
			r := []rune(part)
			r[0] = unicode.ToUpper(r[0])
			part = string(r)
		}
		b.WriteString(part)
	}
	return b.String()
}

// snake: "goalSetBudget" is goal_set_budget, "GOAL_STATUSES" goal_statuses.
func snake(s string) string {
	var b strings.Builder
	for i, r := range s {
		if unicode.IsUpper(r) && i > 0 && !unicode.IsUpper(rune(s[i-1])) && s[i-1] != '_' {
			b.WriteByte('_')
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}
