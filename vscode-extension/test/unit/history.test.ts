// Unit tests of the History view model (src/history.ts), run with `node --test`.
// The events are shaped as agentd.history answers them (docs/protocol.md §3.2).
import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';
import { emptyBudget } from '../../src/model';
import { eventSummary, formatEventTime, historyRows, historySides, undoneMessage } from '../../src/history';
import type { GoalSnapshot, HistoryEvent } from '../../src/protocol.gen';

function goal(patch: Partial<GoalSnapshot>): GoalSnapshot {
  return {
    objective: 'Port the parser',
    status: 'active',
    turnsUsed: 2,
    tokensUsed: 1500,
    wallClockMs: 65_000,
    budget: emptyBudget(),
    createdAt: '2026-03-01T09:00:00Z',
    updatedAt: '2026-03-01T09:00:00Z',
    lastActor: 'user',
    stalled: false,
    requireTodos: true,
    ...patch,
  };
}

const at = '2026-03-01T09:00:05Z';

const todoWrite: HistoryEvent = {
  seq: 2,
  at,
  actor: 'model',
  kind: 'todo.write',
  revision: 2,
  before: { items: [{ title: 'plan', status: 'pending' }] },
  payload: { items: [{ title: 'plan', status: 'done' }, { title: 'build', status: 'in_progress' }], agent: 'main' },
};

const pause: HistoryEvent = {
  seq: 4,
  at,
  actor: 'user',
  kind: 'goal.pause',
  reason: 'lunch',
  revision: 4,
  before: { goal: goal({}) },
  payload: [{ kind: 'pause', status: 'paused', reason: 'lunch', actor: 'user', goal: goal({ status: 'paused', terminalReason: 'lunch' }) }],
};

const cancel: HistoryEvent = {
  seq: 5,
  at,
  actor: 'user',
  kind: 'goal.cancel',
  reason: 'cancelled by the user',
  revision: 5,
  before: { goal: goal({ status: 'paused', terminalReason: 'lunch' }) },
  payload: [{ kind: 'cancel', status: '', reason: 'cancelled by the user', actor: 'user', goal: goal({ status: 'paused' }) }],
};

describe('history rows', () => {
  it('say what changed, when and by whom, newest first as given', () => {
    const rows = historyRows([pause, todoWrite]);
    assert.deepEqual(
      rows.map((r) => [r.seq, r.label, r.description]),
      [
        [4, 'Goal paused: lunch', `${formatEventTime(at)} · you`],
        [2, 'Todo list written (2 items)', `${formatEventTime(at)} · the agent`],
      ],
    );
    assert.equal(rows[0].tooltip, '#4 goal.pause by user\nlunch');
    assert.equal(rows[1].icon.id, 'checklist');
  });

  it('name a created goal by its objective, and an unknown kind as it is', () => {
    const create: HistoryEvent = { seq: 1, at, actor: 'user', kind: 'goal.create', payload: [{ kind: 'create', status: 'active', goal: goal({}) }] };
    assert.equal(eventSummary(create), 'Goal created: Port the parser');
    assert.equal(eventSummary({ seq: 9, at, actor: 'runtime', kind: 'goal.advance' }), 'goal.advance');
  });

  it('formats the time as local YYYY-MM-DD HH:MM:SS, and keeps what it cannot read', () => {
    assert.match(formatEventTime(at), /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:05$/);
    assert.equal(formatEventTime('yesterday'), 'yesterday');
  });
});

describe('history sides', () => {
  it('a todo event: the list before and after', () => {
    assert.deepEqual(historySides(todoWrite), { before: '[pending] plan\n', after: '[done] plan\n[in_progress] build\n' });
  });

  it('a goal event: the goal before and after its last change', () => {
    const s = historySides(pause);
    assert.equal(s.before, 'Objective: Port the parser\nStatus: Active\nUsed: 2 turns · 1.5k tokens · 1m05s\n');
    assert.equal(s.after, 'Objective: Port the parser\nStatus: Paused\nReason: lunch\nUsed: 2 turns · 1.5k tokens · 1m05s\n');
  });

  it('a change that cleared the goal has no goal after it', () => {
    assert.equal(historySides(cancel).after, 'No goal.\n');
    assert.match(historySides(cancel).before, /^Objective: Port the parser\nStatus: Paused\nReason: lunch\n/);
  });

  it('an event of an older agentd says its before was not recorded', () => {
    const old: HistoryEvent = { seq: 1, at, actor: 'user', kind: 'todo.set', payload: { items: [] } };
    assert.deepEqual(historySides(old), { before: '(not recorded: this change was stored by an older agentd)\n', after: 'Todo list is empty.\n' });
  });

  it('the undo message names the change', () => {
    assert.equal(undoneMessage(pause), 'Undid "Goal paused: lunch" (#4, by you).');
  });
});
