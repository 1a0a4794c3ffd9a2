/**
 * Pure view model of the History view and of undo messages: the rows of a
 * session's history (newest first: time, actor, what changed) and the
 * before and after texts of one event (docs/runtime.md §6: every todo and
 * goal event stores `before`, the state of its scope before the change;
 * its `payload` holds the state after it).
 *
 * No `vscode` import: unit tested in plain Node.
 */

import { formatProgress, goalStatusLabel, oneLine, type IconSpec } from './model';
import type { GoalSnapshot, GoalStatus, HistoryEvent, TodoItem } from './protocol.gen';

/** One row of the History view. */
export interface HistoryRow {
  /** The event's `seq`: stable, unique in the session. */
  seq: number;
  /** What changed, e.g. `Goal paused: lunch`. */
  label: string;
  /** When and by whom: `2026-03-01 09:00:05 · user`. */
  description: string;
  tooltip: string;
  icon: IconSpec;
  event: HistoryEvent;
}

/** The before and after texts of an event, for a diff. */
export interface HistorySides {
  before: string;
  after: string;
}

/** One goal change of a goal event's payload (service.StoredGoalChange). */
interface PayloadChange {
  kind?: string;
  status?: GoalStatus | '';
  reason?: string;
  goal?: GoalSnapshot | null;
  reverts?: { seq: number; kind: string };
}

/** Who made a change, as the rows say it. */
const ACTORS: Record<string, string> = { user: 'you', model: 'the agent', runtime: 'agentd', system: 'agentd' };

/** What each event kind did, as a row says it (unknown kinds show as they are). */
const KIND_TEXT: Record<string, string> = {
  'todo.write': 'Todo list written',
  'todo.set': 'Todo list edited',
  'todo.undo': 'Todo list change undone',
  'todo.subagentWrite': "A subagent's todo list written",
  'goal.create': 'Goal created',
  'goal.replace': 'Goal replaced',
  'goal.cancel': 'Goal cancelled',
  'goal.pause': 'Goal paused',
  'goal.resume': 'Goal resumed',
  'goal.block': 'Goal blocked',
  'goal.complete': 'Goal completed',
  'goal.budget': 'Goal budget changed',
  'goal.taskFile': 'Task file changed',
  'goal.progress': 'Goal progress',
  'goal.undo': 'Goal change undone',
};

/** `YYYY-MM-DD HH:MM:SS` in local time. */
export function formatEventTime(at: string): string {
  const d = new Date(at);
  if (Number.isNaN(d.getTime())) {
    return at;
  }
  const p = (n: number): string => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

/** The actor as a row says it: `you`, `the agent`, `agentd`. */
export function actorLabel(actor: string): string {
  return ACTORS[actor] ?? actor;
}

function items(v: unknown): TodoItem[] | undefined {
  const list = (v as { items?: unknown } | null)?.items;
  return Array.isArray(list) ? (list as TodoItem[]) : undefined;
}

function changes(ev: HistoryEvent): PayloadChange[] {
  return Array.isArray(ev.payload) ? (ev.payload as PayloadChange[]) : [];
}

/** What the event changed, in one line: `Goal paused: lunch`, `Todo list written (3 items)`. */
export function eventSummary(ev: HistoryEvent): string {
  const text = KIND_TEXT[ev.kind] ?? ev.kind;
  if (ev.kind.startsWith('todo.')) {
    const after = items(ev.payload);
    return after ? `${text} (${after.length} item${after.length === 1 ? '' : 's'})` : text;
  }
  const last = changes(ev).at(-1);
  const detail = ev.kind === 'goal.create' ? last?.goal?.objective : ev.reason;
  return detail ? `${text}: ${oneLine(detail, 80)}` : text;
}

/** The History view's rows, in the order agentd.history answers them (newest first). */
export function historyRows(events: readonly HistoryEvent[]): HistoryRow[] {
  return events.map((ev) => {
    const undo = ev.kind.endsWith('.undo');
    return {
      seq: ev.seq,
      label: eventSummary(ev),
      description: `${formatEventTime(ev.at)} · ${actorLabel(ev.actor)}`,
      tooltip: [`#${ev.seq} ${ev.kind} by ${ev.actor}`, ev.reason].filter(Boolean).join('\n'),
      icon: { id: undo ? 'discard' : ev.kind.startsWith('todo.') ? 'checklist' : 'target' },
      event: ev,
    };
  });
}

/** A todo list as text, one item a line: `[in_progress] Port the parser`. */
export function todoListText(list: readonly TodoItem[]): string {
  return list.length === 0 ? 'Todo list is empty.\n' : list.map((i) => `[${i.status}] ${i.title}\n`).join('');
}

/** A goal as text: objective, status and reason, criterion, usage and budgets. */
export function goalText(goal: GoalSnapshot | null | undefined): string {
  if (!goal) {
    return 'No goal.\n';
  }
  const lines = [`Objective: ${goal.objective}`, `Status: ${goalStatusLabel(goal.status)}`];
  if (goal.terminalReason) {
    lines.push(`Reason: ${goal.terminalReason}`);
  }
  if (goal.completionCriterion) {
    lines.push(`Done when: ${goal.completionCriterion}`);
  }
  lines.push(`Used: ${formatProgress(goal)}`);
  return `${lines.join('\n')}\n`;
}

const NOT_RECORDED = '(not recorded: this change was stored by an older agentd)\n';

/**
 * The list or goal before and after an event. The goal after a goal event
 * is that of its last change, none when that change cleared the goal (its
 * `status` is empty: a cancel, or an undo of a create).
 */
export function historySides(ev: HistoryEvent): HistorySides {
  if (ev.kind.startsWith('todo.')) {
    const before = items(ev.before);
    const after = items(ev.payload);
    return { before: before ? todoListText(before) : NOT_RECORDED, after: after ? todoListText(after) : NOT_RECORDED };
  }
  const b = ev.before as { goal?: GoalSnapshot | null } | undefined;
  const last = changes(ev).at(-1);
  return {
    before: b && 'goal' in b ? goalText(b.goal) : NOT_RECORDED,
    after: last ? goalText(last.status ? last.goal : null) : NOT_RECORDED,
  };
}

/** What an undo says it did: `Undid "Goal paused: lunch" (#4, by you).` */
export function undoneMessage(ev: HistoryEvent): string {
  return `Undid "${eventSummary(ev)}" (#${ev.seq}, by ${actorLabel(ev.actor)}).`;
}
