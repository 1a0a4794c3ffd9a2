import * as vscode from 'vscode';
import { errorMessage, type AgentdClient } from './client';
import { COMMANDS, type CommandId } from './commandIds';
import { goalWaitArgs, parseWaitTime, validateWaitNote, validateWaitPath, validateWaitTime, type WallClockMode } from './goalWait';
import { undoneMessage } from './history';
import {
  ERROR_CODES,
  SERVER_COMMANDS,
  type CommandResults,
  type HistoryEvent,
  type ServerCommand,
  type SessionInfo,
  type State,
  type TodoItem,
  type TodoStatus,
  type WaitConditions,
} from './protocol.gen';
import {
  GOAL_STATUS_VIEW,
  acceptTeamFileConfirmation,
  pendingTeamFile,
  approveCheckConfirmation,
  budgetArgs,
  checkRunSummary,
  checkWaitsForApproval,
  domainError,
  errorHint,
  formatDurationLimit,
  formatTokens,
  todoRows,
  todoStatusLabel,
  validateBudgetInput,
  validateCheck,
  validateObjective,
  validateTodoTitle,
  withItem,
  withoutItem,
  type BudgetUnit,
  queueRows,
  type GoalRow,
  type QueueRow,
  type TodoRow,
} from './model';
import type { PanelStore } from './store';
import type { Ui } from './ui';
import type { HistoryViewProvider } from './views/historyView';
import { setupAgents } from './setupAgents';

/** What the commands act on. */
export interface CommandDeps {
  client: AgentdClient;
  store: PanelStore;
  ui: Ui;
  output: vscode.LogOutputChannel;
  history: HistoryViewProvider;
}

type Handler = (...args: unknown[]) => unknown;

/** The button of a goal.check_unapproved error that runs Approve Check. */
const APPROVE_CHECK_BUTTON = 'Approve Check…';

/**
 * Registers every extension command (ids in commandIds.ts). Each command that
 * edits state sends one `workspace/executeCommand` and shows the `State` it
 * returns; todo edits are compare-and-set on `todos.revision`.
 */
export function registerCommands(deps: CommandDeps): vscode.Disposable[] {
  const c = new PanelCommands(deps);
  const table: Record<CommandId, Handler> = {
    [COMMANDS.todoAdd]: () => c.todoAdd(),
    [COMMANDS.todoClear]: () => c.todoClear(),
    [COMMANDS.todoSetPending]: (row) => c.todoSetStatus(row, 'pending'),
    [COMMANDS.todoSetInProgress]: (row) => c.todoSetStatus(row, 'in_progress'),
    [COMMANDS.todoSetDone]: (row) => c.todoSetStatus(row, 'done'),
    [COMMANDS.todoRename]: (row) => c.todoRename(row),
    [COMMANDS.todoDelete]: (row) => c.todoDelete(row),
    [COMMANDS.goalCreate]: () => c.goalCreate(),
    [COMMANDS.goalPause]: () => c.goalSimple(SERVER_COMMANDS.goalPause),
    [COMMANDS.goalResume]: () => c.goalSimple(SERVER_COMMANDS.goalResume),
    [COMMANDS.goalCancel]: () => c.goalCancel(),
    [COMMANDS.goalSetBudget]: () => c.goalSetBudget(),
    [COMMANDS.goalWait]: () => c.goalWait(),
    [COMMANDS.goalOpenTaskFile]: (row) => c.openTaskFile(row as GoalRow | undefined),
    [COMMANDS.goalSetCheck]: () => c.goalSetCheck(),
    [COMMANDS.goalRunCheck]: () => c.goalRunCheck(),
    [COMMANDS.goalApproveCheck]: () => c.goalApproveCheck(),
    [COMMANDS.teamAccept]: () => c.teamAccept(),
    [COMMANDS.queueAdd]: () => c.queueAdd(),
    [COMMANDS.queueRemove]: (row) => c.queueRemove(row),
    [COMMANDS.queueMoveUp]: (row) => c.queueMove(row, -1),
    [COMMANDS.queueMoveDown]: (row) => c.queueMove(row, 1),
    [COMMANDS.queueAutoAdvanceOn]: () => c.send(SERVER_COMMANDS.goalQueueSetAutoAdvance, { on: true }),
    [COMMANDS.queueAutoAdvanceOff]: () => c.send(SERVER_COMMANDS.goalQueueSetAutoAdvance, { on: false }),
    [COMMANDS.todoUndo]: () => c.undo('todo'),
    [COMMANDS.goalUndo]: () => c.undo('goal'),
    [COMMANDS.historyOpen]: (ev) => deps.history.open(ev as HistoryEvent),
    [COMMANDS.historyOlder]: () => deps.history.loadOlder(),
    [COMMANDS.pickSession]: () => c.pickSession(),
    [COMMANDS.refresh]: () => deps.store.refresh(),
    [COMMANDS.restartServer]: () => deps.client.restart(),
    [COMMANDS.showOutput]: () => deps.output.show(),
    [COMMANDS.openSettings]: () => vscode.commands.executeCommand('workbench.action.openSettings', '@ext:agentd.agentd-vscode'),
    [COMMANDS.setupAgents]: () => setupAgents(),
  };
  return Object.entries(table).map(([id, fn]) => vscode.commands.registerCommand(id, fn));
}

/** The result of an edit: the new state, or undefined when it was refused or dismissed. */
type EditResult = State | undefined;

/** The server commands the panel sends whose answer is a `State` (a cancel's answer extends it). */
type StateCommand = {
  [C in ServerCommand]: CommandResults[C] extends State ? C : never;
}[ServerCommand];

class PanelCommands {
  constructor(private readonly d: CommandDeps) {}

  private get state(): State | undefined {
    return this.d.store.state;
  }

  /** The shown state, or undefined after telling the user that agentd is not connected. */
  private requireState(): State | undefined {
    const st = this.d.store.state;
    if (!st) {
      void this.d.ui.warn(
        this.d.client.status === 'missing' ? 'agentd is not installed (see the agentd sidebar).' : 'agentd is not connected yet.',
      );
    }
    return st;
  }

  /**
   * Sends a state-changing server command; shows its State, or the error with
   * what gets past it (errorHint). `anyRevision`: take the State whatever its
   * revision (PanelStore.setState).
   */
  async send(command: StateCommand, args: object = {}, anyRevision = false): Promise<EditResult> {
    try {
      const st = await this.d.client.execute(command, { ...this.d.store.baseArgs(), ...args });
      this.d.store.setState(st, anyRevision);
      return st;
    } catch (err) {
      const data = domainError(err);
      this.d.output.appendLine(`${command} failed: ${errorMessage(err)}${data ? ` (${data.code})` : ''}`);
      this.showError(err, data?.code);
      if (data) {
        void this.d.store.refresh();
      }
      return undefined;
    }
  }

  /**
   * Shows a refused command's message and errorHint; a check waiting for
   * approval offers Approve Check, which shows the command first.
   */
  private showError(err: unknown, code: string | undefined): void {
    const hint = errorHint(code);
    const message = `agentd: ${errorMessage(err)}${hint ? `. ${hint}` : ''}`;
    if (code !== ERROR_CODES.goalCheckUnapproved) {
      void this.d.ui.error(message);
      return;
    }
    void (async () => {
      if ((await this.d.ui.error(message, APPROVE_CHECK_BUTTON)) === APPROVE_CHECK_BUTTON) {
        await vscode.commands.executeCommand(COMMANDS.goalApproveCheck);
      }
    })();
  }

  /**
   * `agentd.todo.set` with `expectedRevision`. A `todo.conflict` shows the
   * current list from the error's `data.state` and tells the user; the edit is
   * not retried, so a newer write is never overwritten.
   */
  private async setTodos(items: TodoItem[], expectedRevision: number): Promise<EditResult> {
    try {
      const st = await this.d.client.execute(SERVER_COMMANDS.todoSet, {
        ...this.d.store.baseArgs(),
        items,
        expectedRevision,
      });
      this.d.store.setState(st);
      return st;
    } catch (err) {
      const data = domainError(err);
      if (data?.code === ERROR_CODES.todoConflict) {
        if (data.state && typeof data.state === 'object') {
          this.d.store.setState(data.state);
        } else {
          await this.d.store.refresh();
        }
        void this.d.ui.warn(
          'The todo list was changed elsewhere (by an agent or another editor), so your edit was not applied. The view now shows the current list.',
        );
        return undefined;
      }
      this.d.output.appendLine(`${SERVER_COMMANDS.todoSet} failed: ${errorMessage(err)}`);
      void this.d.ui.error(`agentd: ${errorMessage(err)}`);
      return undefined;
    }
  }

  /**
   * `agentd.undo` of the newest change of `scope` (docs/runtime.md §6), with
   * `expectedRevision` = the revision the views show, so that only a change
   * the user has seen is undone. A `todo.conflict` (a newer change came in)
   * shows the current state from the error's `data.state` and warns; nothing
   * was undone, and the undo is not retried.
   */
  async undo(scope: 'todo' | 'goal'): Promise<EditResult> {
    const st = this.requireState();
    if (!st) {
      return undefined;
    }
    try {
      const res = await this.d.client.execute(SERVER_COMMANDS.undo, { ...this.d.store.baseArgs(), scope, expectedRevision: st.revision });
      this.d.store.setState(res);
      void this.d.ui.info(undoneMessage(res.undone));
      return res;
    } catch (err) {
      const data = domainError(err);
      this.d.output.appendLine(`${SERVER_COMMANDS.undo} failed: ${errorMessage(err)}${data ? ` (${data.code})` : ''}`);
      if (data?.code === ERROR_CODES.todoConflict) {
        if (data.state && typeof data.state === 'object') {
          this.d.store.setState(data.state);
        } else {
          await this.d.store.refresh();
        }
        void this.d.ui.warn(`Nothing was undone: the ${scope === 'todo' ? 'todo list' : 'goal'} changed since the view showed it. ${errorMessage(err)}`);
        return undefined;
      }
      void this.d.ui.error(`agentd: ${errorMessage(err)}`);
      return undefined;
    }
  }

  /** The row a command acts on: the clicked row, an index, or one picked from the list. */
  private async rowOf(arg: unknown, placeHolder: string): Promise<TodoRow | undefined> {
    if (arg && typeof arg === 'object' && 'items' in arg && 'index' in arg && 'todosRevision' in arg) {
      return arg as TodoRow;
    }
    const rows = todoRows(this.state);
    if (typeof arg === 'number') {
      return rows[arg];
    }
    if (rows.length === 0) {
      void this.d.ui.info('The todo list is empty.');
      return undefined;
    }
    const picked = await this.d.ui.pick(
      rows.map((r) => ({ label: r.label, description: r.description, row: r })),
      { placeHolder },
    );
    return picked?.row;
  }

  async todoAdd(): Promise<EditResult> {
    const st = this.requireState();
    if (!st) {
      return undefined;
    }
    const title = await this.d.ui.input({
      title: 'Add todo',
      prompt: `New item for session ${this.d.store.session} (added at the end, pending)`,
      placeHolder: 'What needs to be done',
      validateInput: validateTodoTitle,
    });
    if (title === undefined || validateTodoTitle(title)) {
      return undefined;
    }
    const items = [...st.todos.items.map((i) => ({ ...i })), { title: title.trim(), status: 'pending' as const }];
    return this.setTodos(items, st.todos.revision);
  }

  async todoClear(): Promise<EditResult> {
    const st = this.state;
    if (!st || st.todos.items.length === 0) {
      return undefined;
    }
    const n = st.todos.items.length;
    const ok = await this.d.ui.confirm(
      `Clear all ${n} todo${n === 1 ? '' : 's'}?`,
      `This empties the todo list of session "${st.session}" for every agent and editor.`,
      'Clear',
    );
    if (!ok) {
      return undefined;
    }
    return this.setTodos([], st.todos.revision);
  }

  async todoSetStatus(arg: unknown, status: TodoStatus): Promise<EditResult> {
    const row = await this.rowOf(arg, `Mark as ${todoStatusLabel(status)}`);
    if (!row) {
      return undefined;
    }
    return this.setTodos(withItem(row.items, row.index, { status }), row.todosRevision);
  }

  async todoRename(arg: unknown): Promise<EditResult> {
    const row = await this.rowOf(arg, 'Rename todo');
    if (!row) {
      return undefined;
    }
    const title = await this.d.ui.input({
      title: 'Rename todo',
      value: row.item.title,
      validateInput: validateTodoTitle,
    });
    if (title === undefined || validateTodoTitle(title) || title.trim() === row.item.title) {
      return undefined;
    }
    return this.setTodos(withItem(row.items, row.index, { title: title.trim() }), row.todosRevision);
  }

  async todoDelete(arg: unknown): Promise<EditResult> {
    const row = await this.rowOf(arg, 'Delete todo');
    if (!row) {
      return undefined;
    }
    return this.setTodos(withoutItem(row.items, row.index), row.todosRevision);
  }

  /**
   * Asks for a goal's objective (required, validateObjective) and then its
   * completion criterion (optional) in input boxes with the given titles and
   * prompts. Returns the arguments they make, `{ objective,
   * completionCriterion? }` trimmed, for `agentd.goal.create` and
   * `agentd.goal.queue.add`; undefined when the user cancels either box.
   */
  private async askGoal(
    objectiveBox: vscode.InputBoxOptions,
    criterionBox: vscode.InputBoxOptions,
  ): Promise<Record<string, unknown> | undefined> {
    const objective = await this.d.ui.input({ ...objectiveBox, validateInput: validateObjective });
    if (objective === undefined || objective.trim() === '') {
      return undefined;
    }
    const criterion = await this.d.ui.input(criterionBox);
    if (criterion === undefined) {
      return undefined;
    }
    const args: Record<string, unknown> = { objective: objective.trim() };
    if (criterion.trim()) {
      args.completionCriterion = criterion.trim();
    }
    return args;
  }

  async goalCreate(): Promise<EditResult> {
    const st = this.requireState();
    if (!st) {
      return undefined;
    }
    const args = await this.askGoal(
      {
        title: 'Create goal (1/2): objective',
        prompt: 'What should the agent achieve? Keep it short; reference a long spec by its file path.',
        placeHolder: 'e.g. Make the test suite in tests/ pass',
      },
      {
        title: 'Create goal (2/2): completion criterion (optional)',
        prompt: 'How will you know it is done? Leave empty for none.',
        placeHolder: 'e.g. `go test ./...` passes',
      },
    );
    if (!args) {
      return undefined;
    }
    let replace = false;
    const cur = st.goal;
    if (cur && !GOAL_STATUS_VIEW[cur.status].finished) {
      replace = await this.d.ui.confirm(
        'Replace the current goal?',
        `Session "${st.session}" already has a ${cur.status} goal: ${cur.objective}`,
        'Replace',
      );
      if (!replace) {
        return undefined;
      }
    }
    if (replace) {
      args.replace = true;
    }
    return this.send(SERVER_COMMANDS.goalCreate, args);
  }

  goalSimple(command: StateCommand): Promise<EditResult> {
    return this.send(command, {});
  }

  async goalCancel(): Promise<EditResult> {
    const goal = this.state?.goal;
    if (!goal) {
      return undefined;
    }
    const finished = GOAL_STATUS_VIEW[goal.status].finished;
    const ok = await this.d.ui.confirm(
      finished ? 'Clear the completed goal?' : 'Cancel the goal?',
      `${goal.objective}\n\nThe goal is removed from session "${this.d.store.session}"; agents stop pursuing it.`,
      finished ? 'Clear Goal' : 'Cancel Goal',
    );
    if (!ok) {
      return undefined;
    }
    return this.send(SERVER_COMMANDS.goalCancel, {});
  }

  /**
   * Sets the goal's check (docs/runtime.md §2.10): an input box with the
   * current command; an empty answer removes the check, after a
   * confirmation. Sends `agentd.goal.setCheck` as the user.
   */
  async goalSetCheck(): Promise<EditResult> {
    const goal = this.requireState()?.goal;
    if (!goal) {
      return undefined;
    }
    // A check waiting for approval is not offered for editing: Enter would make it yours
    // without the dialog that shows it in full (Approve Check does that).
    const waits = checkWaitsForApproval(goal.check);
    const text = await this.d.ui.input({
      title: 'Set goal check',
      prompt: `A shell command that exits 0 when the goal is done; agentd runs it (sh -c, in the workspace folder) before the agent may complete the goal. Empty removes the check.${waits ? ' The current check waits for your approval: Approve Check shows it.' : ''}`,
      placeHolder: 'e.g. go test ./...',
      value: waits ? '' : (goal.check?.command ?? ''),
      validateInput: validateCheck,
    });
    if (text === undefined) {
      return undefined;
    }
    if (text.trim() === '') {
      if (!goal.check) {
        return undefined;
      }
      const ok = await this.d.ui.confirm('Remove the goal check?', `The agent can then complete the goal without running: ${goal.check.command}`, 'Remove Check');
      if (!ok) {
        return undefined;
      }
      return this.send(SERVER_COMMANDS.goalSetCheck, { command: null });
    }
    return this.send(SERVER_COMMANDS.goalSetCheck, { command: text.trim() });
  }

  /**
   * Runs the goal's check now (`agentd.goal.runCheck`), without completing
   * the goal, and tells the result: information when it passed, a warning
   * with the exit code when not. The Goal view shows it running meanwhile.
   */
  async goalRunCheck(): Promise<EditResult> {
    const goal = this.requireState()?.goal;
    if (!goal) {
      return undefined;
    }
    const res = await this.send(SERVER_COMMANDS.goalRunCheck, {});
    if (res && 'run' in res) {
      const run = (res as CommandResults['agentd.goal.runCheck']).run;
      const what = `Goal check ${checkRunSummary(run)}`;
      if (run.exitCode === 0) {
        void this.d.ui.info(what);
      } else {
        void this.d.ui.warn(`${what}. Hover the Check row for the output.`);
      }
    }
    return res;
  }

  /**
   * Approves the goal's check on this machine (docs/runtime.md §2.10) after a
   * modal confirmation that shows the command in full and who set it, then
   * sends `agentd.goal.approveCheck` with exactly that text: a check changed
   * in between is refused by agentd, never approved unseen.
   */
  async goalApproveCheck(): Promise<EditResult> {
    const check = this.requireState()?.goal?.check;
    if (!check) {
      void this.d.ui.info('The goal has no check to approve.');
      return undefined;
    }
    if (!checkWaitsForApproval(check)) {
      void this.d.ui.info("The goal's check is already approved on this machine.");
      return undefined;
    }
    const q = approveCheckConfirmation(check);
    if (!(await this.d.ui.confirm(q.message, q.detail, q.action))) {
      return undefined;
    }
    const st = await this.send(SERVER_COMMANDS.goalApproveCheck, { command: check.command });
    if (st) {
      void this.d.ui.info('Check approved: agentd runs it before the agent may complete the goal.');
    }
    return st;
  }

  /**
   * Accepts the folder's team file (docs/team.md) after a modal confirmation
   * that lists its etcd endpoints and says that this machine's etcd
   * credentials go there, then sends `agentd.team.accept` with the hash of
   * the file shown: a file changed in between is refused. The folder may
   * then be served by the team store, so its State is taken whatever its
   * revision, and read again.
   */
  async teamAccept(): Promise<void> {
    const st = this.requireState();
    if (!st) {
      return;
    }
    const tf = pendingTeamFile(st);
    if (!tf) {
      void this.d.ui.info(
        st.teamFile ? `This folder's team file cannot be used: ${st.teamFile.error ?? 'it is not a team file'}.` : 'This folder has no team file waiting for acceptance.',
      );
      return;
    }
    const q = acceptTeamFileConfirmation(tf);
    if (!(await this.d.ui.confirm(q.message, q.detail, q.action))) {
      return;
    }
    const command = SERVER_COMMANDS.teamAccept;
    try {
      const res = await this.d.client.execute(command, { ...this.d.store.baseArgs(), sha256: tf.sha256 });
      void this.d.ui.info(`Team file accepted: agentd shares this folder through etcd at ${res.sendsTo.join(', ')}.`);
    } catch (err) {
      const data = domainError(err);
      this.d.output.appendLine(`${command} failed: ${errorMessage(err)}${data ? ` (${data.code})` : ''}`);
      this.showError(err, data?.code);
    }
    // The folder may now be served by the team store, whose revisions are its own.
    void this.d.store.refresh();
  }

  async goalSetBudget(): Promise<EditResult> {
    const goal = this.state?.goal;
    if (!goal) {
      return undefined;
    }
    const b = goal.budget;
    type Pick = vscode.QuickPickItem & { unit?: BudgetUnit; remove?: 'turns' | 'tokens' | 'wallClockMs' };
    const items: Pick[] = [
      { label: 'Turns', description: b.turnBudget !== null ? `now ${b.turnBudget}` : 'goal-driven turns', unit: 'turns' },
      { label: 'Tokens', description: b.tokenBudget !== null ? `now ${formatTokens(b.tokenBudget)}` : 'output tokens', unit: 'tokens' },
      { label: 'Minutes', description: b.wallClockBudgetMs !== null ? `now ${formatDurationLimit(b.wallClockBudgetMs)}` : 'active time', unit: 'minutes' },
      { label: 'Hours', description: 'active time', unit: 'hours' },
    ];
    if (b.turnBudget !== null) {
      items.push({ label: 'Remove turn budget', remove: 'turns' });
    }
    if (b.tokenBudget !== null) {
      items.push({ label: 'Remove token budget', remove: 'tokens' });
    }
    if (b.wallClockBudgetMs !== null) {
      items.push({ label: 'Remove time budget', remove: 'wallClockMs' });
    }
    const picked = await this.d.ui.pick(items, { title: 'Set goal budget', placeHolder: 'Budget unit' });
    if (!picked) {
      return undefined;
    }
    if (picked.remove) {
      return this.send(SERVER_COMMANDS.goalSetBudget, { [picked.remove]: null });
    }
    const unit = picked.unit as BudgetUnit;
    const text = await this.d.ui.input({
      title: `Set goal budget: ${unit}`,
      prompt: `Limit in ${unit}`,
      validateInput: (v) => validateBudgetInput(unit, v),
    });
    if (text === undefined || validateBudgetInput(unit, text)) {
      return undefined;
    }
    return this.send(SERVER_COMMANDS.goalSetBudget, budgetArgs(unit, Number(text.trim())));
  }

  /**
   * Wait… (docs/runtime.md §2.13): a quick pick of what wakes the goal (a
   * time or duration, a workspace file or folder typed or chosen, the check
   * passing when it is approved here), an optional note, and whether the wait
   * counts against the wall-clock budget; sends `agentd.goal.wait` as the user.
   */
  async goalWait(): Promise<EditResult> {
    const goal = this.requireState()?.goal;
    if (!goal) {
      return undefined;
    }
    const condition = await this.askWaitCondition(goal.check !== undefined && !checkWaitsForApproval(goal.check));
    if (!condition) {
      return undefined;
    }
    const note = await this.d.ui.input({
      title: 'Wait: note',
      prompt: 'Why the goal waits (optional; kept with the wait)',
      validateInput: validateWaitNote,
    });
    if (note === undefined || validateWaitNote(note)) {
      return undefined;
    }
    type ClockPick = vscode.QuickPickItem & { mode: WallClockMode };
    const clock = await this.d.ui.pick<ClockPick>(
      [
        { label: 'Counts', description: 'the wall-clock budget keeps running while the goal waits', mode: 'counts' },
        { label: 'Stops', description: 'the wall-clock budget stops while the goal waits', mode: 'stops' },
      ],
      { title: 'Wait: the wall-clock budget', placeHolder: 'Does the wait count against the wall-clock budget?' },
    );
    if (!clock) {
      return undefined;
    }
    return this.send(SERVER_COMMANDS.goalWait, goalWaitArgs(condition, note, clock.mode));
  }

  /** Asks what wakes a waiting goal; `withCheck` offers the check passing. */
  private async askWaitCondition(withCheck: boolean): Promise<WaitConditions | undefined> {
    type WakePick = vscode.QuickPickItem & { wake: 'time' | 'path' | 'choose' | 'check' };
    const wakes: WakePick[] = [
      { label: 'A time or duration…', description: '30m, 2h30m, 14:00', wake: 'time' },
      { label: 'A file or folder…', description: 'type its workspace-relative path', wake: 'path' },
      { label: 'Choose a file or folder…', description: 'wake when it changes', wake: 'choose' },
    ];
    if (withCheck) {
      wakes.push({ label: 'The check passing', description: 'agentd runs the approved check now and then', wake: 'check' });
    }
    const wake = (await this.d.ui.pick(wakes, { title: 'Wait', placeHolder: 'What wakes the goal?' }))?.wake;
    if (wake === 'check') {
      return { checkPasses: true };
    }
    if (wake === 'choose') {
      return this.chooseWaitPath();
    }
    if (wake === 'time') {
      const text = await this.d.ui.input({ title: 'Wait until', prompt: 'A duration (90s, 30m, 2h30m) or a time of day (14:00)', validateInput: validateWaitTime });
      return text === undefined || validateWaitTime(text) ? undefined : parseWaitTime(text);
    }
    if (wake === 'path') {
      const editor = vscode.window.activeTextEditor?.document.uri;
      const text = await this.d.ui.input({
        title: 'Wait for a change of',
        prompt: 'A file or folder of the workspace (it need not exist yet)',
        placeHolder: 'e.g. build/out.log',
        value: editor ? this.workspacePath(editor) : undefined,
        validateInput: validateWaitPath,
      });
      return text === undefined || validateWaitPath(text) ? undefined : { paths: [text] };
    }
    return undefined;
  }

  /** A file or folder chosen with the open dialog, as a path of the workspace folder. */
  private async chooseWaitPath(): Promise<WaitConditions | undefined> {
    const folder = vscode.workspace.workspaceFolders?.[0];
    const uris = await this.d.ui.openDialog({ canSelectFiles: true, canSelectFolders: true, canSelectMany: false, defaultUri: folder?.uri, title: 'Wait for a change of' });
    if (!uris?.[0]) {
      return undefined;
    }
    const rel = this.workspacePath(uris[0]);
    if (rel === undefined) {
      void this.d.ui.error(`agentd: ${uris[0].fsPath} is outside the workspace folder; the goal can wait only for its files and folders.`);
      return undefined;
    }
    return { paths: [rel] };
  }

  /** The path of `uri` relative to the workspace folder (the first one), or undefined outside it. */
  private workspacePath(uri: vscode.Uri): string | undefined {
    const folder = vscode.workspace.workspaceFolders?.[0];
    if (!folder || vscode.workspace.getWorkspaceFolder(uri)?.uri.toString() !== folder.uri.toString()) {
      return undefined;
    }
    const rel = vscode.workspace.asRelativePath(uri, false);
    return rel === uri.fsPath ? '.' : rel;
  }

  /** The queued goal a command acts on: the clicked row, an index, or one picked from the queue. */
  private async queueRowOf(arg: unknown, placeHolder: string): Promise<QueueRow | undefined> {
    if (arg && typeof arg === 'object' && 'item' in arg && 'contextValue' in arg && 'id' in arg) {
      return arg as QueueRow;
    }
    const rows = queueRows(this.state);
    if (typeof arg === 'number') {
      return rows[arg];
    }
    if (rows.length === 0) {
      void this.d.ui.info('Nothing is queued.');
      return undefined;
    }
    const picked = await this.d.ui.pick(
      rows.map((r) => ({ label: `${r.index + 1}. ${r.label}`, description: r.description, row: r })),
      { placeHolder },
    );
    return picked?.row;
  }

  /** Asks for a goal (objective, criterion, check) and appends it to the queue. */
  async queueAdd(): Promise<EditResult> {
    if (!this.requireState()) {
      return undefined;
    }
    const args = await this.askGoal(
      {
        title: 'Queue a goal (1/3): objective',
        prompt: 'Started when the current goal completes (while auto-advance is on).',
        placeHolder: 'e.g. Document the parser',
      },
      {
        title: 'Queue a goal (2/3): completion criterion (optional)',
        prompt: 'How will you know it is done? Leave empty for none.',
      },
    );
    if (!args) {
      return undefined;
    }
    const check = await this.d.ui.input({
      title: 'Queue a goal (3/3): check command (optional)',
      prompt: 'A shell command that proves the goal is done. Leave empty for none.',
      placeHolder: 'e.g. go test ./...',
      validateInput: validateCheck,
    });
    if (check === undefined) {
      return undefined;
    }
    if (check.trim()) {
      args.check = check.trim();
    }
    return this.send(SERVER_COMMANDS.goalQueueAdd, args);
  }

  async queueRemove(arg: unknown): Promise<EditResult> {
    const row = await this.queueRowOf(arg, 'Remove from the queue');
    return row ? this.send(SERVER_COMMANDS.goalQueueRemove, { id: row.id }) : undefined;
  }

  /** Moves a queued goal one place up (-1) or down (+1); nothing at either end. */
  async queueMove(arg: unknown, by: -1 | 1): Promise<EditResult> {
    const row = await this.queueRowOf(arg, by < 0 ? 'Move up' : 'Move down');
    const n = this.state?.queue.items.length ?? 0;
    if (!row || row.index + by < 0 || row.index + by >= n) {
      return undefined;
    }
    return this.send(SERVER_COMMANDS.goalQueueMove, { id: row.id, index: row.index + by });
  }

  async openTaskFile(row: GoalRow | undefined): Promise<void> {
    const p = row?.path ?? this.state?.goal?.taskFile?.path;
    const folder = vscode.workspace.workspaceFolders?.[0];
    if (!p || !folder) {
      return;
    }
    const uri = vscode.Uri.joinPath(folder.uri, p);
    try {
      await vscode.workspace.fs.stat(uri);
    } catch {
      const choice = await this.d.ui.info(`The task file ${p} does not exist yet.`, 'Create File');
      if (choice !== 'Create File') {
        return;
      }
      await vscode.workspace.fs.writeFile(uri, new Uint8Array());
    }
    await vscode.commands.executeCommand('vscode.open', uri);
  }

  async pickSession(): Promise<void> {
    await this.d.store.refresh();
    const current = this.d.store.session;
    const sessions: Pick<SessionInfo, 'session' | 'todoCount' | 'goalStatus'>[] = [...this.d.store.sessions];
    if (!sessions.some((s) => s.session === current)) {
      sessions.unshift({ session: current, todoCount: this.state?.todos.items.length ?? 0, goalStatus: this.state?.goal?.status });
    }
    const picked = await this.d.ui.pick(
      sessions.map((s) => ({
        label: s.session,
        description: s.session === current ? 'shown now' : undefined,
        detail: `${s.todoCount} todo${s.todoCount === 1 ? '' : 's'} · ${s.goalStatus ? `goal ${s.goalStatus}` : 'no goal'}`,
        session: s.session,
      })),
      { title: 'agentd session', placeHolder: 'Session to show in the agentd views' },
    );
    if (picked) {
      await this.d.store.setSession(picked.session);
    }
  }
}
