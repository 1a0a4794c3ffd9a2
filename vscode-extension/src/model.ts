/**
 * Pure view model of the agentd panel: the functions that turn a `State`
 * into tree rows, icons, labels, budget text and status-bar text.
 *
 * The wire types, ids, statuses and limits come from protocol.gen.ts, which
 * commands/protocolgen generates from the Go declarations.
 *
 * This module must not import `vscode` (or anything that does): it is unit
 * tested in plain Node. Icons are named by their codicon id; the views turn
 * them into `ThemeIcon`s.
 */

import {
  ERROR_CODES,
  LIMITS,
  NOTIFICATIONS,
  type Check,
  type GoalBudget,
  type GoalSnapshot,
  type GoalStatus,
  type NotificationMethod,
  type NotificationParams,
  type QueuedGoal,
  type State,
  type SubagentList,
  type TodoItem,
  type TodoStatus,
} from './protocol.gen';

// ---------------------------------------------------------------------------
// Wire types: generated from the Go declarations (protocol.gen.ts)
// ---------------------------------------------------------------------------

/**
 * A notification of one session's change: every method but
 * `agentd/storeChanged`, which is folder-wide (docs/protocol.md §4.3).
 */
export type SessionNotificationMethod = Exclude<NotificationMethod, typeof NOTIFICATIONS.storeChanged>;

/** Fields every notification of a session's change carries. */
export type NotificationBase = Pick<NotificationParams[SessionNotificationMethod], 'workspace' | 'session' | 'revision'>;

// ---------------------------------------------------------------------------
// Formatting
// ---------------------------------------------------------------------------

/**
 * Token count as agentd writes it (goal.FormatTokens): raw below 1000,
 * `x.xk` below a million, else `x.xM`, the decimal truncated (`950`,
 * `1.9k` for 1999, `999.9k` for 999999, `3.4M`). Negative counts are 0.
 * Shared test vectors: goal/testdata/format.json.
 */
export function formatTokens(n: number): string {
  const v = Math.max(0, Math.trunc(n));
  if (v < 1000) {
    return String(v);
  }
  if (v < 1_000_000) {
    return `${tenths(Math.trunc(v / 100))}k`;
  }
  return `${tenths(Math.trunc(v / 100_000))}M`;
}

function tenths(t: number): string {
  return `${Math.trunc(t / 10)}.${t % 10}`;
}

/**
 * Elapsed time as agentd writes it in goal stats (goal.FormatElapsed;
 * vectors in goal/testdata/format.json): `Ns` below a minute,
 * `MmSSs` below an hour, else `HhMMm` (e.g. `45s`, `4m05s`, `2h03m`).
 * `ms` is milliseconds; negative values count as 0.
 */
export function formatElapsed(ms: number): string {
  const s = Math.floor(Math.max(0, ms) / 1000);
  if (s < 60) {
    return `${s}s`;
  }
  if (s < 3600) {
    return `${Math.floor(s / 60)}m${pad2(s % 60)}s`;
  }
  return `${Math.floor(s / 3600)}h${pad2(Math.floor((s % 3600) / 60))}m`;
}

/**
 * Short elapsed time for the status bar: `45s`, `4m`, `2h03m`.
 * `ms` is milliseconds.
 */
export function formatElapsedShort(ms: number): string {
  const s = Math.floor(Math.max(0, ms) / 1000);
  if (s < 60) {
    return `${s}s`;
  }
  if (s < 3600) {
    return `${Math.floor(s / 60)}m`;
  }
  return `${Math.floor(s / 3600)}h${pad2(Math.floor((s % 3600) / 60))}m`;
}

/**
 * A wall-clock budget limit in the largest whole unit that fits:
 * `2h`, `90m`, `30s`, else `MmSSs`. `ms` is milliseconds.
 */
export function formatDurationLimit(ms: number): string {
  if (ms > 0 && ms % 3_600_000 === 0) {
    return `${ms / 3_600_000}h`;
  }
  if (ms > 0 && ms % 60_000 === 0) {
    return `${ms / 60_000}m`;
  }
  return formatElapsed(ms);
}

function pad2(n: number): string {
  return n < 10 ? `0${n}` : String(n);
}

/** `1 turn`, `3 turns`. */
export function plural(n: number, word: string): string {
  return pluralShown(String(n), n, word);
}

/** `plural` with `n` written as `shown` (`12.3k tokens` for 12345). */
export function pluralShown(shown: string, n: number, word: string): string {
  return `${shown} ${word}${n === 1 ? '' : 's'}`;
}

/**
 * A goal's progress in one line, with limits where set, as agentd writes it
 * (commands.FormatProgress; vectors in goal/testdata/format.json):
 * `3/20 turns · 1.2k tokens · 4m05s`. The noun agrees with the limit where
 * one is set (`0/1 turn`), else with the count.
 */
export function formatProgress(goal: Pick<GoalSnapshot, 'turnsUsed' | 'tokensUsed' | 'wallClockMs' | 'budget'>): string {
  const b = goal.budget ?? emptyBudget();
  const turns =
    b.turnBudget !== null ? pluralShown(`${goal.turnsUsed}/${b.turnBudget}`, b.turnBudget, 'turn') : plural(goal.turnsUsed, 'turn');
  const tokens =
    b.tokenBudget !== null
      ? pluralShown(`${formatTokens(goal.tokensUsed)}/${formatTokens(b.tokenBudget)}`, b.tokenBudget, 'token')
      : pluralShown(formatTokens(goal.tokensUsed), goal.tokensUsed, 'token');
  const elapsed =
    b.wallClockBudgetMs !== null ? `${formatElapsed(goal.wallClockMs)}/${formatElapsed(b.wallClockBudgetMs)}` : formatElapsed(goal.wallClockMs);
  return `${turns} · ${tokens} · ${elapsed}`;
}

// ---------------------------------------------------------------------------
// Statuses
// ---------------------------------------------------------------------------

/** A codicon id with an optional theme color id. */
export interface IconSpec {
  id: string;
  color?: string;
}

/** How the panel shows a todo status. */
export interface TodoStatusView {
  /** Human words: `pending`, `in progress`, `done`. */
  label: string;
  /** Icon of a todo row. */
  icon: IconSpec;
}

/** Every todo status's look; the Record makes the compiler ask for each status of TODO_STATUSES. */
export const TODO_STATUS_VIEW: Record<TodoStatus, TodoStatusView> = {
  pending: { label: 'pending', icon: { id: 'circle-outline' } },
  in_progress: { label: 'in progress', icon: { id: 'sync~spin', color: 'charts.blue' } },
  done: { label: 'done', icon: { id: 'pass', color: 'testing.iconPassed' } },
};

/** How the panel shows and treats a goal status. */
export interface GoalStatusView {
  /** Capitalised: `Active`. */
  label: string;
  /** Icon of the Goal view's status row. */
  icon: IconSpec;
  /** Codicon of the status-bar item. */
  statusBarIcon: string;
  /** Active time runs: the shown elapsed time moves on. */
  clockRuns: boolean;
  /** The goal is done: a new goal replaces nothing unfinished, cancel clears it. */
  finished: boolean;
  /** The status-bar item has a warning background. */
  warning: boolean;
}

/** Every goal status's look; the Record makes the compiler ask for each status of GOAL_STATUSES. */
export const GOAL_STATUS_VIEW: Record<GoalStatus, GoalStatusView> = {
  active: {
    label: 'Active',
    icon: { id: 'play-circle', color: 'charts.blue' },
    statusBarIcon: 'target',
    clockRuns: true,
    finished: false,
    warning: false,
  },
  paused: {
    label: 'Paused',
    icon: { id: 'debug-pause', color: 'charts.yellow' },
    statusBarIcon: 'debug-pause',
    clockRuns: false,
    finished: false,
    warning: false,
  },
  blocked: {
    label: 'Blocked',
    icon: { id: 'error', color: 'errorForeground' },
    statusBarIcon: 'warning',
    clockRuns: false,
    finished: false,
    warning: true,
  },
  complete: {
    label: 'Complete',
    icon: { id: 'pass-filled', color: 'testing.iconPassed' },
    statusBarIcon: 'pass',
    clockRuns: false,
    finished: true,
    warning: false,
  },
  waiting: {
    label: 'Waiting',
    icon: { id: 'watch', color: 'charts.purple' },
    statusBarIcon: 'watch',
    clockRuns: false,
    finished: false,
    warning: false,
  },
};

/** Human word for a todo status: `pending`, `in progress`, `done`. */
export function todoStatusLabel(status: TodoStatus): string {
  return TODO_STATUS_VIEW[status].label;
}

/** Human word for a goal status, capitalised: `Active`, `Paused`, `Blocked`, `Complete`. */
export function goalStatusLabel(status: GoalStatus): string {
  return GOAL_STATUS_VIEW[status].label;
}

// ---------------------------------------------------------------------------
// Icons
// ---------------------------------------------------------------------------

/** Icon of a todo row: pending `circle-outline`, in progress `sync~spin`, done `pass`. */
export function todoIcon(status: TodoStatus): IconSpec {
  return TODO_STATUS_VIEW[status].icon;
}

/** Icon of a goal status: active `play-circle`, paused `debug-pause`, blocked `error`, complete `pass-filled`. */
export function goalStatusIcon(status: GoalStatus): IconSpec {
  return GOAL_STATUS_VIEW[status].icon;
}

// ---------------------------------------------------------------------------
// Todo rows
// ---------------------------------------------------------------------------

/** One row of the Todos view. */
export interface TodoRow {
  /** Stable id within one revision: `<todos.revision>:<index>`. */
  id: string;
  /** Index of the item in the list. */
  index: number;
  label: string;
  /** The status as the row's description. */
  description: string;
  tooltip: string;
  icon: IconSpec;
  /** `todo.pending`, `todo.in_progress` or `todo.done` (menus are keyed on it). */
  contextValue: string;
  item: TodoItem;
  /** The list the row was rendered from, and its revision: edits made from the row are compare-and-set against it. */
  items: readonly TodoItem[];
  todosRevision: number;
}

/** Rows of the Todos view, one per item, in list order. */
export function todoRows(state: State | undefined): TodoRow[] {
  if (!state) {
    return [];
  }
  const items = state.todos.items;
  const rev = state.todos.revision;
  return items.map((item, index) => ({
    id: `${rev}:${index}`,
    index,
    label: item.title,
    description: todoStatusLabel(item.status),
    tooltip: `${item.title}\n\nStatus: ${todoStatusLabel(item.status)} (item ${index + 1} of ${items.length})`,
    icon: todoIcon(item.status),
    contextValue: `todo.${item.status}`,
    item,
    items,
    todosRevision: rev,
  }));
}

/**
 * A subagent's list in the Todos view (docs/runtime.md §1.3): a row under the
 * item it is linked to (`parentIndex`), or after the list when it has no link
 * or its item is gone (`parentIndex` -1), with its items as children. Nothing
 * edits it: its context values match none of the todo menus.
 */
export interface SubagentRow {
  id: string;
  parentIndex: number;
  label: string;
  description: string;
  contextValue: 'subagentList';
  children: { id: string; label: string; description: string; icon: IconSpec; contextValue: 'subagentItem' }[];
}

/** Rows of the subagents' lists, in the order State gives them. */
export function subagentRows(state: State | undefined): SubagentRow[] {
  const lists: readonly SubagentList[] = state?.todos.subagentLists ?? [];
  const items = state?.todos.items ?? [];
  return lists.map((l) => ({
    id: `subagent:${l.agent}`,
    parentIndex: l.parentItem === undefined ? -1 : items.findIndex((i) => i.title === l.parentItem),
    label: `subagent ${oneLine(l.agent)}`,
    description: todoSummary(l.items),
    contextValue: 'subagentList',
    children: l.items.map((item, index) => ({
      id: `subagent:${l.agent}:${index}`,
      label: item.title,
      description: todoStatusLabel(item.status),
      icon: todoIcon(item.status),
      contextValue: 'subagentItem',
    })),
  }));
}

/** Short summary for the Todos view's description, e.g. `2/5 done`; empty when there are no items. */
export function todoSummary(items: readonly TodoItem[]): string {
  if (items.length === 0) {
    return '';
  }
  const done = items.filter((i) => i.status === 'done').length;
  return `${done}/${items.length} done`;
}

/** A copy of `items` with item `index` replaced by `patch` applied to it. */
export function withItem(items: readonly TodoItem[], index: number, patch: Partial<TodoItem>): TodoItem[] {
  return items.map((it, i) => (i === index ? { ...it, ...patch } : { ...it }));
}

// ---------------------------------------------------------------------------
// Up next (the goal queue)
// ---------------------------------------------------------------------------

/** One row of the Up next view: a queued goal (docs/runtime.md §2.9). */
export interface QueueRow {
  /** The queued goal's uuid: remove and move name it. */
  id: string;
  /** Position in the queue, 0 first. */
  index: number;
  label: string;
  /** The completion criterion and the check, when set. */
  description: string;
  tooltip: string;
  icon: IconSpec;
  /**
   * `queue.item`, with `.first` and/or `.last` appended for the ends of the
   * queue (menus offer Move Up and Move Down by it), e.g. `queue.item.first.last`.
   */
  contextValue: string;
  item: QueuedGoal;
}

/** Rows of the Up next view, first queued goal first. */
export function queueRows(state: State | undefined): QueueRow[] {
  const items = state?.queue?.items ?? [];
  return items.map((item, index) => {
    const parts = [item.completionCriterion ? `done when: ${oneLine(item.completionCriterion, 60)}` : '', item.check ? `check: ${oneLine(item.check, 60)}` : ''];
    const tip = [`${index + 1}. ${item.objective}`];
    if (item.completionCriterion) {
      tip.push(`Done when: ${item.completionCriterion}`);
    }
    if (item.check) {
      tip.push(`Check: ${item.check}`);
    }
    let contextValue = 'queue.item';
    if (index === 0) {
      contextValue += '.first';
    }
    if (index === items.length - 1) {
      contextValue += '.last';
    }
    return {
      id: item.id,
      index,
      label: oneLine(item.objective),
      description: parts.filter(Boolean).join(' · '),
      tooltip: tip.join('\n'),
      icon: { id: index === 0 ? 'debug-step-over' : 'circle-small' },
      contextValue,
      item,
    };
  });
}

/** The Up next view's description: the count and whether auto-advance is on. */
export function queueSummary(state: State | undefined): string {
  const q = state?.queue;
  if (!q) {
    return '';
  }
  const n = q.items.length;
  return `${n === 0 ? 'nothing queued' : `${n} queued`} · auto-advance ${q.autoAdvance ? 'on' : 'off'}`;
}

/** A copy of `items` without item `index`. */
export function withoutItem(items: readonly TodoItem[], index: number): TodoItem[] {
  return items.filter((_, i) => i !== index).map((it) => ({ ...it }));
}

// ---------------------------------------------------------------------------
// Goal rows
// ---------------------------------------------------------------------------

/** Kinds of goal rows; the row's contextValue is `goal.<kind>`. */
export type GoalRowKind =
  | 'objective'
  | 'criterion'
  | 'status'
  | 'stalled'
  | 'plan'
  | 'turns'
  | 'tokens'
  | 'elapsed'
  | 'taskFile'
  | 'check'
  | 'checkCommand'
  | 'teamFile'
  | 'teamEndpoint';

/** One row of the Goal view. */
export interface GoalRow {
  kind: GoalRowKind;
  /** Tells apart rows of one kind (`checkCommand:0`); the tree item id is `goal-<key>`, else `goal-<kind>`. */
  key?: string;
  label: string;
  description: string;
  /** Plain text; the view may render it as markdown-free text. */
  tooltip: string;
  icon: IconSpec;
  contextValue: string;
  /** Task file path relative to the workspace (taskFile rows only). */
  path?: string;
}

/**
 * Live active time of a goal in milliseconds: `wallClockMs` plus, while the
 * goal is active, the time since the snapshot was received.
 * `receivedAt` and `now` are epoch milliseconds.
 */
export function liveElapsedMs(goal: GoalSnapshot, receivedAt: number, now: number): number {
  const base = goal.wallClockMs || 0;
  return GOAL_STATUS_VIEW[goal.status].clockRuns ? base + Math.max(0, now - receivedAt) : base;
}

/**
 * `used/limit · N left` text of one budget, or just the used amount when no
 * limit is set. `fmt` formats an amount of the budget's unit (`fmtLimit`
 * the limit, default `fmt`); `unit` is appended (e.g. ` turns`). A reached
 * budget says `budget reached` instead of the remaining amount.
 */
export function budgetText(
  used: number,
  limit: number | null,
  remaining: number | null,
  reached: boolean,
  fmt: (n: number) => string,
  unit = '',
  fmtLimit: (n: number) => string = fmt,
): string {
  if (limit === null || limit === undefined) {
    return `${fmt(used)}${unit}`;
  }
  const rem = remaining ?? Math.max(0, limit - used);
  const tail = reached || rem <= 0 ? 'budget reached' : `${fmt(rem)} left`;
  return `${fmt(used)}/${fmtLimit(limit)}${unit} · ${tail}`;
}

/**
 * How far a budget is spent (docs/runtime.md §2.4.4): `error` from
 * `LIMITS.finalBudgetWarning` % of its limit, `warning` from
 * `LIMITS.firstBudgetWarning` %, else `none` (also without a limit). The
 * panel colours the budget's row, and the status bar, by it.
 */
export type BudgetLevel = 'none' | 'warning' | 'error';

/** The level of `used` of a budget with `limit` (null: no limit), as the server counts it: used × 100 ≥ limit × percent. */
export function budgetLevel(used: number, limit: number | null): BudgetLevel {
  if (limit === null || limit === undefined) {
    return 'none';
  }
  if (used * 100 >= limit * LIMITS.finalBudgetWarning) {
    return 'error';
  }
  return used * 100 >= limit * LIMITS.firstBudgetWarning ? 'warning' : 'none';
}

/** The levels of the three budgets of a goal at a live elapsed time (ms), and the highest of them. */
export function goalBudgetLevels(
  goal: GoalSnapshot,
  elapsedMs: number,
): { turns: BudgetLevel; tokens: BudgetLevel; elapsed: BudgetLevel; highest: BudgetLevel } {
  const b = goal.budget ?? emptyBudget();
  const levels = {
    turns: budgetLevel(goal.turnsUsed, b.turnBudget),
    tokens: budgetLevel(goal.tokensUsed, b.tokenBudget),
    elapsed: budgetLevel(elapsedMs, b.wallClockBudgetMs),
  };
  const all = [levels.turns, levels.tokens, levels.elapsed];
  const highest: BudgetLevel = all.includes('error') ? 'error' : all.includes('warning') ? 'warning' : 'none';
  return { ...levels, highest };
}

/** Theme colour of a budget row's icon per level. */
export const BUDGET_LEVEL_COLOR: Record<BudgetLevel, string | undefined> = {
  none: undefined,
  warning: 'list.warningForeground',
  error: 'list.errorForeground',
};

/** Icon of a budget row: `warning` once reached, else `id`; coloured by the level. */
function budgetIcon(id: string, reached: boolean, level: BudgetLevel): IconSpec {
  const color = BUDGET_LEVEL_COLOR[level];
  const icon: IconSpec = { id: reached ? 'warning' : id };
  return color ? { ...icon, color } : icon;
}

/** `3/7 checked` of a task file's checkboxes, or '' when it has none (docs/task-files.md, "Checkboxes"). */
export function checkboxText(tf: GoalSnapshot['taskFile']): string {
  const c = tf?.checkboxes;
  return tf?.exists && c && c.total > 0 ? `${c.checked}/${c.total} checked` : '';
}

/**
 * The Plan row of a goal: its progress from the todo list the panel holds
 * (live: a todo change updates it without a goal change) and the task
 * file's checkboxes, and whether completion waits for the items
 * (docs/runtime.md §2.12); undefined without a list.
 */
export function planRow(goal: GoalSnapshot, items: readonly TodoItem[] | undefined): GoalRow | undefined {
  if (!items || items.length === 0) {
    return undefined;
  }
  const open = items.filter((i) => i.status !== 'done').map((i) => i.title);
  const done = items.length - open.length;
  const parts = [`${done}/${items.length} done`];
  const boxes = checkboxText(goal.taskFile);
  if (boxes) {
    parts.push(boxes);
  }
  const required = goal.requireTodos !== false;
  const waits = required && open.length > 0 && goal.status !== 'complete';
  if (waits) {
    parts.push('completion waits');
  } else if (!required) {
    parts.push('not required');
  }
  const openLines = open.length ? `\nOpen:\n${open.map((t) => `  - ${oneLine(t)}`).join('\n')}` : '';
  const rule = required
    ? 'The goal completes only once every item is done; the agent cannot remove an item that is not done (you can, in the Todo view).'
    : 'The goal does not wait for the todo items.';
  return {
    kind: 'plan',
    label: 'Plan',
    description: parts.join(' · '),
    tooltip: `Todo items: ${done}/${items.length} done${boxes ? `\nTask file: ${boxes}` : ''}${openLines}\n${rule}`,
    icon: waits ? { id: 'tasklist', color: 'list.warningForeground' } : { id: 'tasklist' },
    contextValue: 'goal.plan',
  };
}

/** Budget text of the three budgets of a goal at a given live elapsed time (ms). */
export function goalBudgetTexts(goal: GoalSnapshot, elapsedMs: number): { turns: string; tokens: string; elapsed: string } {
  const b = goal.budget ?? emptyBudget();
  const wallRemaining = b.wallClockBudgetMs === null ? null : Math.max(0, b.wallClockBudgetMs - elapsedMs);
  return {
    turns: budgetText(goal.turnsUsed, b.turnBudget, b.remainingTurns, b.turnBudgetReached, String),
    tokens: budgetText(goal.tokensUsed, b.tokenBudget, b.remainingTokens, b.tokenBudgetReached, formatTokens),
    elapsed: budgetText(
      elapsedMs,
      b.wallClockBudgetMs,
      wallRemaining,
      b.wallClockBudgetReached || (wallRemaining !== null && wallRemaining <= 0),
      formatElapsed,
      '',
      formatDurationLimit,
    ),
  };
}

/** A budget with no limits. */
export function emptyBudget(): GoalBudget {
  return {
    tokenBudget: null,
    turnBudget: null,
    wallClockBudgetMs: null,
    remainingTokens: null,
    remainingTurns: null,
    remainingWallClockMs: null,
    tokenBudgetReached: false,
    turnBudgetReached: false,
    wallClockBudgetReached: false,
    overBudget: false,
  };
}

/** First line of `text`, cut to `max` characters with an ellipsis. */
export function oneLine(text: string, max = 120): string {
  const lines = text.trim().split(/\r?\n/);
  const line = lines[0].trim();
  if (line.length > max) {
    return `${line.slice(0, max - 1)}…`;
  }
  return lines.length > 1 ? `${line} …` : line;
}

/**
 * Rows of the Goal view, top to bottom: objective, completion criterion (if
 * any), status (with terminalReason), turns, tokens, elapsed (each with its
 * budget when one is set), the task file (if any) and the check (if any:
 * checkRows). Empty when there is no goal. Times are epoch milliseconds.
 */
export function goalRows(
  goal: GoalSnapshot | null | undefined,
  receivedAt: number,
  now: number,
  todos?: readonly TodoItem[],
): GoalRow[] {
  if (!goal) {
    return [];
  }
  const rows: GoalRow[] = [];
  const b = goal.budget ?? emptyBudget();
  rows.push({
    kind: 'objective',
    label: oneLine(goal.objective),
    description: '',
    tooltip: `Objective:\n${goal.objective}`,
    icon: { id: 'target' },
    contextValue: 'goal.objective',
  });
  if (goal.completionCriterion) {
    rows.push({
      kind: 'criterion',
      label: 'Done when',
      description: oneLine(goal.completionCriterion),
      tooltip: `Completion criterion:\n${goal.completionCriterion}`,
      icon: { id: 'checklist' },
      contextValue: 'goal.criterion',
    });
  }
  const reason = goal.terminalReason ?? '';
  // A waiting goal's reason says what it waits for (docs/runtime.md §2.13); add since when.
  const since = goal.wait ? ` · since ${new Date(goal.wait.since).toLocaleString()}` : '';
  rows.push({
    kind: 'status',
    label: goalStatusLabel(goal.status),
    description: reason ? oneLine(reason) + since : since.slice(3),
    tooltip: `Status: ${goal.status}${reason ? `\nReason: ${reason}` : ''}${goal.wait ? `\nWaiting since ${goal.wait.since}, asked by ${goal.wait.by}; the wall clock ${goal.wait.wallClock}` : ''}${goal.lastActor ? `\nLast change by: ${goal.lastActor}` : ''}`,
    icon: goalStatusIcon(goal.status),
    contextValue: `goal.status.${goal.status}`,
  });
  if (goal.stalled) {
    rows.push({
      kind: 'stalled',
      label: 'Stalled',
      description: 'no change to the todo list or task file',
      tooltip:
        'Stalled: the last goal turns changed neither the todo list nor the task file.\nThe next goal reminder asks the agent to re-plan, or to mark the goal blocked if it cannot progress.',
      icon: { id: 'debug-step-over', color: 'list.warningForeground' },
      contextValue: 'goal.stalled',
    });
  }
  const plan = planRow(goal, todos);
  if (plan) {
    rows.push(plan);
  }
  const elapsed = liveElapsedMs(goal, receivedAt, now);
  const t = goalBudgetTexts(goal, elapsed);
  const lv = goalBudgetLevels(goal, elapsed);
  rows.push({
    kind: 'turns',
    label: 'Turns',
    description: t.turns,
    tooltip: budgetTooltip('Turns', String(goal.turnsUsed), b.turnBudget, b.remainingTurns, String),
    icon: budgetIcon('history', b.turnBudgetReached, lv.turns),
    contextValue: 'goal.turns',
  });
  rows.push({
    kind: 'tokens',
    label: 'Tokens',
    description: t.tokens,
    tooltip: budgetTooltip('Output tokens', String(goal.tokensUsed), b.tokenBudget, b.remainingTokens, String),
    icon: budgetIcon('symbol-numeric', b.tokenBudgetReached, lv.tokens),
    contextValue: 'goal.tokens',
  });
  const wallRemaining = b.wallClockBudgetMs === null ? null : Math.max(0, b.wallClockBudgetMs - elapsed);
  rows.push({
    kind: 'elapsed',
    label: 'Elapsed',
    description: t.elapsed,
    tooltip: budgetTooltip('Active time', formatElapsed(elapsed), b.wallClockBudgetMs, wallRemaining, formatElapsed),
    icon: budgetIcon('watch', b.wallClockBudgetReached, lv.elapsed),
    contextValue: 'goal.elapsed',
  });
  const tf = goal.taskFile;
  if (tf && tf.path) {
    const notes: string[] = [];
    if (!tf.exists) {
      notes.push('missing');
    } else if (tf.changedSinceLastTurn) {
      notes.push('changed');
    }
    const boxes = checkboxText(tf);
    const description = notes.length ? `${tf.path} (${notes.join(', ')})` : tf.path;
    rows.push({
      kind: 'taskFile',
      label: 'Task file',
      description: boxes ? `${description} · ${boxes}` : description,
      tooltip: `Task file: ${tf.path}${boxes ? `\nCheckboxes: ${boxes}` : ''}${tf.exists ? '' : '\nThe file does not exist yet; agentd picks it up when it appears.'}${tf.changedSinceLastTurn ? '\nChanged since the last turn.' : ''}\nClick to open.`,
      icon: { id: tf.exists ? 'file' : 'warning' },
      contextValue: 'goal.taskFile',
      path: tf.path,
    });
  }
  if (goal.check) {
    rows.push(...checkRows(goal.check));
  }
  return rows;
}

/**
 * The state of a goal's check as the panel shows it (docs/runtime.md §2.10):
 * `unapproved` while it waits for this machine's person's approval.
 */
export type CheckState = 'unapproved' | 'running' | 'passed' | 'failed' | 'notRun';

/** The state of `check`: unapproved, else running, else the last run's outcome, else notRun. */
export function checkState(check: Check): CheckState {
  if (checkWaitsForApproval(check)) {
    return 'unapproved';
  }
  if (check.running) {
    return 'running';
  }
  if (!check.lastRun) {
    return 'notRun';
  }
  return check.lastRun.exitCode === 0 ? 'passed' : 'failed';
}

/**
 * The last run in a few words: `passed in 12s`, `failed: exit 1 after 2s`,
 * `did not finish (ran 10m00s)` for a run that was killed or did not start
 * (exitCode -1).
 */
export function checkRunSummary(run: NonNullable<Check['lastRun']>): string {
  const took = formatElapsed(run.durationMs);
  if (run.exitCode === 0) {
    return `passed in ${took}`;
  }
  if (run.exitCode < 0) {
    return `did not finish (ran ${took})`;
  }
  return `failed: exit ${run.exitCode} after ${took}`;
}

/** Time of day of an ISO time, `HH:MM:SS` in local time. */
function clockTime(iso: string): string {
  const d = new Date(iso);
  const two = (n: number): string => String(n).padStart(2, '0');
  return `${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}`;
}

/**
 * The check row: the command, a spinning icon and `running…` while it runs,
 * else the last result (`passed in 12s · 14:03:07`) with the output tail in
 * the tooltip, then `set by alice on laptop` when agentd recorded who set it.
 * A check waiting for approval is `Check waiting for your approval` with who
 * set it (approvalRow). Its contextValue is `goal.check.<CheckState>`.
 */
export function checkRow(check: Check): GoalRow {
  const state = checkState(check);
  if (state === 'unapproved') {
    return approvalRow(check);
  }
  const run = check.lastRun;
  const icon: Record<Exclude<CheckState, 'unapproved'>, IconSpec> = {
    running: { id: 'sync~spin' },
    passed: { id: 'pass', color: 'testing.iconPassed' },
    failed: { id: 'error', color: 'testing.iconFailed' },
    notRun: { id: 'beaker' },
  };
  let description = 'not run yet';
  if (state === 'running') {
    description = 'running…';
  } else if (run) {
    description = `${checkRunSummary(run)} · ${clockTime(run.at)}`;
  }
  if (check.setBy) {
    description += ` · set by ${setByText(check.setBy)}`;
  }
  const lines = [`Check: ${check.command}`];
  if (check.setBy) {
    lines.push(`Set by ${setByText(check.setBy)}${check.approved ? '; approved on this machine' : ''}.`);
  }
  if (state === 'running') {
    lines.push('Running now.');
  }
  if (run) {
    lines.push(`Last run: ${checkRunSummary(run)}, exit code ${run.exitCode}, ended ${new Date(run.at).toLocaleString()}`);
    if (run.outputTail) {
      lines.push('', 'Output (its end):', run.outputTail.replace(/\n$/, ''));
    }
  }
  return {
    kind: 'check',
    label: `Check: ${oneLine(check.command, 60)}`,
    description,
    tooltip: lines.join('\n'),
    icon: icon[state],
    contextValue: `goal.check.${state}`,
  };
}

// ---------------------------------------------------------------------------
// Consent: a check waiting for approval, a team file waiting for acceptance
// ---------------------------------------------------------------------------

/** Who set a check: the OS user and the machine (docs/runtime.md §2.10). */
export type CheckSetBy = NonNullable<Check['setBy']>;

/**
 * A folder's team file that this machine's person has not accepted
 * (`State.teamFile` with `status: "pending"`, docs/team.md): what the rows
 * and the confirmation show.
 */
export interface PendingTeamFile {
  path: string;
  id: string;
  endpoints: string[];
  sha256: string;
  accept: string;
}

/**
 * The state's team file when it waits for acceptance; undefined when there is
 * none, it is accepted, or it cannot be used (`status: "invalid"`: nothing to
 * accept, teamFileRows says why).
 */
export function pendingTeamFile(state: State | undefined): PendingTeamFile | undefined {
  const tf = state?.teamFile;
  if (!tf || tf.status !== 'pending') {
    return undefined;
  }
  return { path: tf.path, id: tf.id ?? '', endpoints: tf.endpoints ?? [], sha256: tf.sha256, accept: tf.accept ?? 'agentd team accept' };
}

/**
 * Characters that change how text looks without showing themselves: control
 * characters other than tab and newline, bidirectional marks, embeddings,
 * overrides and isolates, zero-width characters, and the Unicode line and
 * paragraph separators.
 */
// eslint-disable-next-line no-control-regex
const HIDDEN_CHARS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2028\u2029\u2066-\u2069\ufeff]/g;

/**
 * `text` with every character that could hide or reorder what it says
 * written as `<U+XXXX>`: a person approves the command they read, not one
 * that a right-to-left override or a carriage return disguises. The
 * Neovim plugin writes them alike (render.visible).
 */
export function visibleText(text: string): string {
  return text.replace(HIDDEN_CHARS, (c) => `<U+${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}>`);
}

/** `visibleText` on one line: newlines and tabs become spaces (names, endpoints, hosts). */
function visibleLine(text: string): string {
  return visibleText(text).replace(/[\n\t]/g, ' ');
}

/**
 * Who set a check, `alice on laptop`; `someone unknown (an older record)`
 * when agentd has no record of it. Each part is shown on one line with its
 * hidden characters made visible: a teammate chooses these strings.
 */
export function setByText(setBy: CheckSetBy | undefined): string {
  if (!setBy) {
    return 'someone unknown (an older record)';
  }
  return `${visibleLine(setBy.user) || '?'} on ${visibleLine(setBy.host) || '?'}`;
}

/**
 * Whether a check waits for this machine's person's approval: agentd does
 * not run it, and refuses UpdateGoal complete (`goal.check_unapproved`),
 * until they approve this exact command (docs/runtime.md §2.10). Only an
 * explicit `approved: false` counts: an agentd from before approvals sends
 * no such field.
 */
export function checkWaitsForApproval(check: Check | undefined): boolean {
  return check?.approved === false;
}

/** Tooltip of the rows of a check waiting for approval. */
function approvalTooltip(check: Check): string {
  return [
    'Check waiting for your approval:',
    visibleText(check.command),
    '',
    `Set by ${setByText(check.setBy)}. It came from elsewhere (another machine through the team store, or a state file this machine's agentd did not write), so agentd does not run it, and the agent cannot complete the goal, until you approve this exact command: Approve Check.`,
  ].join('\n');
}

/**
 * The row of a check waiting for approval: `Check waiting for your
 * approval`, who set it, a shield icon in the warning colour; its
 * contextValue `goal.check.unapproved` offers Approve Check inline.
 */
function approvalRow(check: Check): GoalRow {
  return {
    kind: 'check',
    label: 'Check waiting for your approval',
    description: `set by ${setByText(check.setBy)}`,
    tooltip: approvalTooltip(check),
    icon: { id: 'shield', color: 'list.warningForeground' },
    contextValue: 'goal.check.unapproved',
  };
}

/**
 * The Goal view's rows of a check: the check row, and for a check waiting
 * for approval one row per line of its command, in full (never cut: the
 * person must see what they approve), hidden characters made visible.
 */
export function checkRows(check: Check): GoalRow[] {
  const rows = [checkRow(check)];
  if (!checkWaitsForApproval(check)) {
    return rows;
  }
  const tooltip = approvalTooltip(check);
  visibleText(check.command)
    .split('\n')
    .forEach((line, i) => {
      rows.push({
        kind: 'checkCommand',
        key: `checkCommand:${i}`,
        label: line,
        description: '',
        tooltip,
        icon: { id: i === 0 ? 'terminal' : 'blank' },
        contextValue: 'goal.checkCommand',
      });
    });
  return rows;
}

/** A modal question: its message, the detail under it, and the one button that says yes. */
export interface Confirmation {
  message: string;
  detail: string;
  action: string;
}

/**
 * The confirmation before `agentd.goal.approveCheck`: the command in full
 * (hidden characters made visible), who set it, and what approving does.
 */
export function approveCheckConfirmation(check: Check): Confirmation {
  return {
    message: 'Approve the goal check?',
    detail: [
      'agentd will run this command on this machine, as you (sh -c in the workspace folder), before the agent may complete the goal:',
      '',
      visibleText(check.command),
      '',
      `Set by ${setByText(check.setBy)}.`,
      'Approve only a command you have read and trust. The approval is kept on this machine for this exact text; a changed command asks again.',
    ].join('\n'),
    action: 'Approve Check',
  };
}

/**
 * The Goal view's rows of a team file waiting for acceptance (docs/team.md),
 * first in the view: `Team file not accepted` with its path (contextValue
 * `goal.teamFile`, which offers Accept Team File inline), then one row per
 * etcd endpoint it names. None when there is no pending team file.
 */
export function teamFileRows(state: State | undefined): GoalRow[] {
  const invalid = state?.teamFile?.status === 'invalid' ? state.teamFile : undefined;
  if (invalid) {
    return [
      {
        kind: 'teamFile',
        label: 'Team file not used',
        description: `${visibleLine(invalid.path)} · local state only`,
        tooltip: `${visibleLine(invalid.path)} cannot be used: ${visibleLine(invalid.error ?? 'it is not a team file')}. This folder uses local state.`,
        icon: { id: 'warning', color: 'list.warningForeground' },
        contextValue: 'goal.teamFileInvalid',
      },
    ];
  }
  const tf = pendingTeamFile(state);
  if (!tf) {
    return [];
  }
  const endpoints = tf.endpoints.map(visibleLine);
  const tooltip = [
    `${visibleLine(tf.path)} names a team store (etcd) this machine's person has not accepted:`,
    ...endpoints.map((e) => `  ${e}`),
    '',
    'agentd does not connect to it: this folder uses local state until you accept the file (Accept Team File).',
    'Accepting sends the etcd credentials configured on this machine to these endpoints.',
    `In a terminal: ${visibleLine(tf.accept)}`,
  ].join('\n');
  return [
    {
      kind: 'teamFile',
      label: 'Team file not accepted',
      description: `${visibleLine(tf.path)} · local state only`,
      tooltip,
      icon: { id: 'shield', color: 'list.warningForeground' },
      contextValue: 'goal.teamFile',
    },
    ...endpoints.map((e, i) => ({
      kind: 'teamEndpoint' as const,
      key: `teamEndpoint:${i}`,
      label: e,
      description: 'etcd endpoint',
      tooltip,
      icon: { id: 'server' },
      contextValue: 'goal.teamEndpoint',
    })),
  ];
}

/**
 * The confirmation before `agentd.team.accept`: the file, every endpoint,
 * and that this machine's etcd credentials will be sent there.
 */
export function acceptTeamFileConfirmation(tf: PendingTeamFile): Confirmation {
  return {
    message: `Accept this folder's team file (${visibleLine(tf.path)})?`,
    detail: [
      "agentd will share this folder's goal, queue and todo list through the etcd it names:",
      '',
      ...tf.endpoints.map((e) => `  ${visibleLine(e)}`),
      '',
      'The etcd credentials configured on this machine will be sent to these endpoints.',
      "Checks set by teammates there still wait for your approval before they run here.",
      '',
      `Team ${visibleLine(tf.id)}, file sha256 ${visibleLine(tf.sha256)}. A changed file asks again.`,
    ].join('\n'),
    action: 'Accept Team File',
  };
}

/**
 * The notification of a pending team file, shown once per folder and file
 * hash: `key` names that pair; undefined when there is none.
 */
export function teamFileNotice(state: State | undefined): { key: string; message: string } | undefined {
  const tf = pendingTeamFile(state);
  if (!state || !tf) {
    return undefined;
  }
  return {
    key: `${normalizeFolder(state.workspace)}\n${tf.sha256}`,
    message: `agentd: this folder's ${visibleLine(tf.path)} names a team store at ${tf.endpoints.map(visibleLine).join(', ')}. agentd does not connect to it until you accept it; until then the folder uses local state.`,
  };
}

/**
 * What the panel adds to the message of a refusal with `code`: how the person
 * gets past it; undefined for codes that need no help.
 */
export function errorHint(code: string | undefined): string | undefined {
  switch (code) {
    case ERROR_CODES.goalCheckUnapproved:
      return "The goal's check waits for your approval: Approve Check shows the command.";
    case ERROR_CODES.callerAgentShell:
      return "agentd took this request for an agent's shell: if VS Code was started from inside an agent's shell tool, start it from your own terminal or desktop.";
    default:
      return undefined;
  }
}

function budgetTooltip(
  what: string,
  used: string,
  limit: number | null,
  remaining: number | null,
  fmt: (n: number) => string,
): string {
  if (limit === null || limit === undefined) {
    return `${what}: ${used}\nNo budget set.`;
  }
  return `${what}: ${used}\nBudget: ${fmt(limit)}\nRemaining: ${fmt(remaining ?? 0)}`;
}

// ---------------------------------------------------------------------------
// Status bar
// ---------------------------------------------------------------------------

/** Codicon shown in the status bar per goal status. */
export function statusBarIcon(status: GoalStatus): string {
  return GOAL_STATUS_VIEW[status].statusBarIcon;
}

/** What the status bar adds while the goal's check waits for approval; clicking it then approves (after the confirmation). */
export const APPROVE_CHECK_LABEL = '$(shield) approve check';

/**
 * Status-bar text of a goal, e.g. `$(target) Goal active · 3/20 turns · 1.2k tok · 4m`,
 * with `· $(shield) approve check` after the status while its check waits for
 * approval; `undefined` when there is no goal (the item is hidden).
 * `elapsedMs` is the live active time in milliseconds.
 */
export function statusBarText(goal: GoalSnapshot | null | undefined, elapsedMs: number): string | undefined {
  if (!goal) {
    return undefined;
  }
  const b = goal.budget ?? emptyBudget();
  const turns = b.turnBudget !== null ? `${goal.turnsUsed}/${b.turnBudget} turns` : plural(goal.turnsUsed, 'turn');
  const tokens =
    b.tokenBudget !== null
      ? `${formatTokens(goal.tokensUsed)}/${formatTokens(b.tokenBudget)} tok`
      : `${formatTokens(goal.tokensUsed)} tok`;
  const time =
    b.wallClockBudgetMs !== null
      ? `${formatElapsedShort(elapsedMs)}/${formatDurationLimit(b.wallClockBudgetMs)}`
      : formatElapsedShort(elapsedMs);
  const approval = checkWaitsForApproval(goal.check) ? ` · ${APPROVE_CHECK_LABEL}` : '';
  return `$(${statusBarIcon(goal.status)}) Goal ${goal.status}${goal.stalled ? ' (stalled)' : ''}${approval} · ${turns} · ${tokens} · ${time}`;
}

/**
 * Theme colour of the status-bar item's background: the error colour once
 * a budget is at `LIMITS.finalBudgetWarning` %, the warning colour from
 * `LIMITS.firstBudgetWarning` %, for a stalled goal, a status shown as a
 * warning (blocked), or a check waiting for approval; none otherwise.
 */
export function statusBarBackground(goal: GoalSnapshot, elapsedMs: number): string | undefined {
  const level = GOAL_STATUS_VIEW[goal.status].clockRuns ? goalBudgetLevels(goal, elapsedMs).highest : 'none';
  if (level === 'error') {
    return 'statusBarItem.errorBackground';
  }
  const warn = level === 'warning' || goal.stalled || GOAL_STATUS_VIEW[goal.status].warning || checkWaitsForApproval(goal.check);
  return warn ? 'statusBarItem.warningBackground' : undefined;
}

/**
 * What the views and the status bar add while the folder's team store (etcd,
 * docs/team.md) does not answer: the state shown is the last one agentd saw
 * (`State.stale`, `agentd/storeChanged`; docs/protocol.md §4.3).
 */
export const STALE_LABEL = 'stale';

/** Tooltip line of a stale state. */
export const STALE_TOOLTIP = "The folder's team store (etcd) does not answer: this is the last state agentd saw; edits fail until it is back.";

/**
 * The description of a view: the non-empty `parts` joined with ' · ', then
 * `STALE_LABEL` when `stale`; undefined when nothing is left.
 */
export function viewDescription(parts: (string | undefined)[], stale: boolean): string | undefined {
  const shown = parts.filter((p): p is string => !!p);
  if (stale) {
    shown.push(STALE_LABEL);
  }
  return shown.join(' · ') || undefined;
}

/** Plain-text tooltip of the status-bar item: status, objective, progress as agentd writes it (`formatProgress`), reason. */
export function statusBarTooltip(goal: GoalSnapshot, session: string): string {
  const lines = [`agentd goal (${goal.status}) — session ${session}`, oneLine(goal.objective, 200), formatProgress(goal)];
  if (goal.terminalReason) {
    lines.push(`Reason: ${goal.terminalReason}`);
  }
  if (goal.stalled) {
    lines.push('Stalled: the last goal turns changed neither the todo list nor the task file.');
  }
  if (checkWaitsForApproval(goal.check)) {
    lines.push(`The goal's check, set by ${setByText(goal.check?.setBy)}, waits for your approval: agentd does not run it, and the agent cannot complete the goal, until you approve it.`);
    lines.push('Click to see the command and approve it.');
  } else {
    lines.push('Click to show the Goal view.');
  }
  return lines.join('\n');
}

// ---------------------------------------------------------------------------
// Context keys
// ---------------------------------------------------------------------------

/** Values of the context keys that `when` clauses of package.json use. */
export interface PanelContext {
  'agentdPanel.ready': boolean;
  'agentdPanel.hasGoal': boolean;
  /** Goal status, or '' when there is no goal. */
  'agentdPanel.goalStatus': GoalStatus | '';
  /** The goal has an approved check (docs/runtime.md §2.10) that is not running now. */
  'agentdPanel.hasCheck': boolean;
  /** The goal's check waits for this machine's person's approval. */
  'agentdPanel.checkUnapproved': boolean;
  /** The folder has a team file this machine's person has not accepted (docs/team.md). */
  'agentdPanel.teamFilePending': boolean;
  'agentdPanel.hasTodos': boolean;
  'agentdPanel.multipleSessions': boolean;
  /** The goal queue's auto-advance (docs/runtime.md §2.9); true until agentd answered. */
  'agentdPanel.autoAdvance': boolean;
}

/** Context key values for a state (undefined = not connected yet) and the number of known sessions. */
export function panelContext(state: State | undefined, sessionCount: number): PanelContext {
  return {
    'agentdPanel.ready': state !== undefined,
    'agentdPanel.hasGoal': !!state?.goal,
    'agentdPanel.goalStatus': state?.goal?.status ?? '',
    'agentdPanel.hasCheck': !!state?.goal?.check && !state.goal.check.running && !checkWaitsForApproval(state.goal.check),
    'agentdPanel.checkUnapproved': checkWaitsForApproval(state?.goal?.check),
    'agentdPanel.teamFilePending': pendingTeamFile(state) !== undefined,
    'agentdPanel.hasTodos': (state?.todos.items.length ?? 0) > 0,
    'agentdPanel.multipleSessions': sessionCount > 1,
    'agentdPanel.autoAdvance': state?.queue?.autoAdvance ?? true,
  };
}

// ---------------------------------------------------------------------------
// Live updates
// ---------------------------------------------------------------------------

/** What to do with a notification. */
export type Reconcile =
  /** Not for the shown workspace/session, or older than the state: ignore. */
  | { action: 'ignore' }
  /** Apply: the new state. */
  | { action: 'apply'; state: State }
  /** A revision gap (or no state yet): re-read `agentd.state`. */
  | { action: 'refresh' };

/**
 * Normalises a folder URI or path for comparison: percent-decoding, no
 * trailing slash, lower-case Windows drive letter.
 */
export function normalizeFolder(uriOrPath: string): string {
  let s = uriOrPath;
  try {
    s = decodeURIComponent(s);
  } catch {
    // keep as is
  }
  s = s.replace(/^file:\/\//, '');
  s = s.replace(/^\/?([A-Za-z]):/, (_m, d: string) => `/${d.toLowerCase()}:`);
  return s.length > 1 ? s.replace(/\/+$/, '') : s;
}

function sameWorkspace(a: string, b: string): boolean {
  return !a || !b || normalizeFolder(a) === normalizeFolder(b);
}

/**
 * Whether a full `State` (a command's answer, or the `data.state` of a
 * conflict) replaces the shown one: it is for the shown session and not
 * older than the shown state. Shared vectors: commands/testdata/reconcile.json.
 */
export function takesState(shown: State | undefined, session: string, incoming: State): boolean {
  return incoming.session === session && (!shown || incoming.revision >= shown.revision);
}

/**
 * Decides how a notification changes the shown state, by revision:
 * older or equal revisions are stale (equal ones are applied again, which is
 * harmless, so a sibling notification of the same change is not lost), the
 * next revision is applied, and a gap asks for a re-read of `agentd.state`.
 * Shared vectors: commands/testdata/reconcile.json.
 */
export function reconcile(
  state: State | undefined,
  session: string,
  method: string,
  params: NotificationBase,
): Reconcile {
  if (!params || params.session !== session) {
    return { action: 'ignore' };
  }
  if (!state) {
    return { action: 'refresh' };
  }
  if (!sameWorkspace(state.workspace, params.workspace)) {
    return { action: 'ignore' };
  }
  const rev = Number(params.revision);
  if (!Number.isFinite(rev) || rev > state.revision + 1) {
    return { action: 'refresh' };
  }
  if (rev < state.revision) {
    return { action: 'ignore' };
  }
  const next: State = { ...state, revision: rev, todos: state.todos };
  switch (method) {
    case NOTIFICATIONS.todoChanged: {
      const p = params as NotificationParams[typeof NOTIFICATIONS.todoChanged];
      if (!Array.isArray(p.items)) {
        return { action: 'refresh' };
      }
      next.todos = { items: p.items.map((i) => ({ title: i.title, status: i.status })), revision: rev };
      if (Array.isArray(p.subagentLists)) {
        next.todos.subagentLists = p.subagentLists;
      }
      return { action: 'apply', state: next };
    }
    case NOTIFICATIONS.goalChanged: {
      const p = params as NotificationParams[typeof NOTIFICATIONS.goalChanged];
      if (p.goal === undefined) {
        return { action: 'refresh' };
      }
      next.goal = p.goal;
      return { action: 'apply', state: next };
    }
    case NOTIFICATIONS.queueChanged: {
      const p = params as NotificationParams[typeof NOTIFICATIONS.queueChanged];
      if (!Array.isArray(p.items)) {
        return { action: 'refresh' };
      }
      next.queue = { items: p.items.map((i) => ({ ...i })), autoAdvance: p.autoAdvance !== false };
      return { action: 'apply', state: next };
    }
    case NOTIFICATIONS.taskFileChanged: {
      const p = params as NotificationParams[typeof NOTIFICATIONS.taskFileChanged];
      if (next.goal && next.goal.taskFile && next.goal.taskFile.path === p.path) {
        next.goal = {
          ...next.goal,
          taskFile: {
            ...next.goal.taskFile,
            exists: p.exists,
            sha256: p.sha256,
            changedSinceLastTurn: true,
          },
        };
      }
      return { action: 'apply', state: next };
    }
    default:
      return { action: 'ignore' };
  }
}

// ---------------------------------------------------------------------------
// Errors and budgets
// ---------------------------------------------------------------------------

/** Domain error data of a -32803 reply: `{code, state?, ...}`. */
export interface DomainErrorData {
  code: string;
  state?: State;
  [k: string]: unknown;
}

/** The domain error data of a JSON-RPC error, if it has one. */
export function domainError(err: unknown): DomainErrorData | undefined {
  const data = (err as { data?: unknown } | null)?.data;
  if (data && typeof data === 'object' && typeof (data as { code?: unknown }).code === 'string') {
    return data as DomainErrorData;
  }
  return undefined;
}

/** Units offered by the Set budget command. */
export type BudgetUnit = 'turns' | 'tokens' | 'minutes' | 'hours';

/**
 * ARGS of `agentd.goal.setBudget` for `value` in `unit`: turns and tokens are
 * rounded to a whole number (at least 1); minutes and hours become
 * `wallClockMs`, rounded to a millisecond.
 */
export function budgetArgs(unit: BudgetUnit, value: number): { turns?: number; tokens?: number; wallClockMs?: number } {
  switch (unit) {
    case 'turns':
      return { turns: Math.max(1, Math.round(value)) };
    case 'tokens':
      return { tokens: Math.max(1, Math.round(value)) };
    case 'minutes':
      return { wallClockMs: Math.round(value * 60_000) };
    case 'hours':
      return { wallClockMs: Math.round(value * 3_600_000) };
  }
}

/** Validation message for a budget value typed by the user, or undefined when it is fine. */
export function validateBudgetInput(unit: BudgetUnit, text: string): string | undefined {
  const v = Number(text.trim());
  if (text.trim() === '' || !Number.isFinite(v) || v <= 0) {
    return 'Enter a number greater than 0.';
  }
  if ((unit === 'turns' || unit === 'tokens') && !Number.isInteger(v)) {
    return `Enter a whole number of ${unit}.`;
  }
  const ms = budgetArgs(unit, v).wallClockMs;
  if (ms !== undefined && (ms < LIMITS.minWallClockBudgetMs || ms > LIMITS.maxWallClockBudgetMs)) {
    return `A time budget must be between ${plural(LIMITS.minWallClockBudgetMs / 1000, 'second')} and ${plural(LIMITS.maxWallClockBudgetMs / 3_600_000, 'hour')}.`;
  }
  return undefined;
}

/**
 * Validation message for a goal's objective, or undefined when it is fine (non-blank, at most
 * LIMITS.maxObjectiveChars characters after trim, counted as agentd counts them: code points,
 * docs/runtime.md §2.2).
 */
export function validateObjective(text: string): string | undefined {
  const t = text.trim();
  if (t === '') {
    return 'The objective cannot be empty.';
  }
  if ([...t].length > LIMITS.maxObjectiveChars) {
    return `At most ${LIMITS.maxObjectiveChars} characters: put long text in a file and reference its path.`;
  }
  return undefined;
}

/**
 * Validation message for a check command, or undefined when it is fine: at most
 * LIMITS.maxCheckChars code points after trim (docs/runtime.md §2.10). Blank is fine here: the
 * callers read it as "no check".
 */
export function validateCheck(text: string): string | undefined {
  return [...text.trim()].length > LIMITS.maxCheckChars
    ? `At most ${LIMITS.maxCheckChars} characters: put a long script in a file and run that.`
    : undefined;
}

/** Validation message for a todo title, or undefined when it is fine (non-blank, at most LIMITS.maxTodoTitleChars characters after trim). */
export function validateTodoTitle(text: string): string | undefined {
  const t = text.trim();
  if (!t) {
    return 'A todo needs a title.';
  }
  if (t.length > LIMITS.maxTodoTitleChars) {
    return `At most ${LIMITS.maxTodoTitleChars} characters (this is ${t.length}).`;
  }
  return undefined;
}
