// Unit tests of the pure view model (src/model.ts), run with `node --test`.
import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';
import {
  BUDGET_LEVEL_COLOR,
  budgetArgs,
  budgetLevel,
  budgetText,
  checkboxText,
  planRow,
  checkRow,
  checkRunSummary,
  domainError,
  emptyBudget,
  formatDurationLimit,
  formatElapsed,
  formatElapsedShort,
  formatTokens,
  goalBudgetLevels,
  goalRows,
  goalStatusIcon,
  liveElapsedMs,
  normalizeFolder,
  oneLine,
  panelContext,
  queueRows,
  queueSummary,
  reconcile,
  statusBarBackground,
  statusBarText,
  statusBarTooltip,
  todoIcon,
  todoRows,
  subagentRows,
  todoSummary,
  validateBudgetInput,
  validateCheck,
  validateObjective,
  validateTodoTitle,
  viewDescription,
  STALE_LABEL,
  withItem,
  withoutItem,
} from '../../src/model';
import { LIMITS, NOTIFICATIONS, type GoalSnapshot, type State } from '../../src/protocol.gen';

const WS = 'file:///tmp/ws';

function state(over: Partial<State> = {}): State {
  return {
    workspace: WS,
    session: 'default',
    revision: 5,
    todos: {
      revision: 4,
      items: [
        { title: 'Write the parser', status: 'done' },
        { title: 'Wire the client', status: 'in_progress' },
        { title: 'Ship it', status: 'pending' },
      ],
    },
    goal: null,
    queue: { items: [], autoAdvance: true },
    ...over,
  };
}

function goal(over: Partial<GoalSnapshot> = {}): GoalSnapshot {
  return {
    goalId: 'g1',
    objective: 'Make the test suite pass',
    completionCriterion: 'go test ./... exits 0',
    status: 'active',
    turnsUsed: 3,
    tokensUsed: 1234,
    wallClockMs: 245_000,
    budget: emptyBudget(),
    stalled: false,
    requireTodos: true,
    createdAt: '2025-01-01T00:00:00Z',
    updatedAt: '2025-01-01T00:00:00Z',
    lastActor: 'user',
    ...over,
  };
}

describe('formatting', () => {
  // Token counts as Go writes them; the shared vectors (vectors.test.ts) hold the rest.
  const tokens: [number, string][] = [
    [-5, '0'],
    [1000, '1.0k'],
    [1234, '1.2k'],
    [50_000, '50.0k'],
    [999_950, '999.9k'],
    [1_000_000, '1.0M'],
    [3_450_000, '3.4M'],
  ];
  for (const [n, want] of tokens) {
    it(`formatTokens(${n}) = ${want}`, () => assert.equal(formatTokens(n), want));
  }

  const elapsed: [number, string, string][] = [
    [0, '0s', '0s'],
    [-5, '0s', '0s'],
    [59_999, '59s', '59s'],
    [60_000, '1m00s', '1m'],
    [245_000, '4m05s', '4m'],
    [3_599_000, '59m59s', '59m'],
    [3_600_000, '1h00m', '1h00m'],
    [7_380_000, '2h03m', '2h03m'],
  ];
  for (const [ms, long, short] of elapsed) {
    it(`formatElapsed(${ms}) = ${long}, short ${short}`, () => {
      assert.equal(formatElapsed(ms), long);
      assert.equal(formatElapsedShort(ms), short);
    });
  }

  it('formatDurationLimit picks the largest whole unit', () => {
    assert.equal(formatDurationLimit(3_600_000), '1h');
    assert.equal(formatDurationLimit(5_400_000), '90m');
    assert.equal(formatDurationLimit(30_000), '30s');
    assert.equal(formatDurationLimit(90_500), '1m30s');
  });

  it('oneLine keeps the first line and cuts long text', () => {
    assert.equal(oneLine('short'), 'short');
    assert.equal(oneLine('first\nsecond'), 'first …');
    assert.equal(oneLine('x'.repeat(200), 10), `${'x'.repeat(9)}…`);
  });
});

describe('todo rows', () => {
  it('one row per item with icon, status description and context value', () => {
    const rows = todoRows(state());
    assert.deepEqual(
      rows.map((r) => [r.label, r.description, r.icon.id, r.contextValue, r.id]),
      [
        ['Write the parser', 'done', 'pass', 'todo.done', '4:0'],
        ['Wire the client', 'in progress', 'sync~spin', 'todo.in_progress', '4:1'],
        ['Ship it', 'pending', 'circle-outline', 'todo.pending', '4:2'],
      ],
    );
    assert.equal(rows[1].todosRevision, 4, 'edits compare against todos.revision, not the session revision');
    assert.match(rows[2].tooltip, /item 3 of 3/);
  });

  it("a subagent's list goes under the item it is linked to, others after the list (docs/runtime.md §1.3)", () => {
    const st = state();
    st.todos.subagentLists = [
      { agent: 'agent-7', parentItem: 'Wire the client', items: [{ title: 'Read the grammar', status: 'done' }] },
      { agent: 'agent-8', parentItem: 'Gone', items: [] },
      { agent: 'agent-9', items: [{ title: 'Look around', status: 'pending' }] },
    ];
    const rows = subagentRows(st);
    assert.deepEqual(
      rows.map((r) => [r.label, r.parentIndex, r.description, r.contextValue, r.children.map((c) => [c.label, c.description, c.contextValue])]),
      [
        ['subagent agent-7', 1, '1/1 done', 'subagentList', [['Read the grammar', 'done', 'subagentItem']]],
        ['subagent agent-8', -1, '', 'subagentList', []],
        ['subagent agent-9', -1, '0/1 done', 'subagentList', [['Look around', 'pending', 'subagentItem']]],
      ],
    );
    assert.deepEqual(subagentRows(state()), []);
    const items = [{ title: 'New', status: 'pending' as const }];
    const lists = [{ agent: 'agent-7', items }];
    const r = reconcile(state(), 'default', NOTIFICATIONS.todoChanged, { workspace: WS, session: 'default', revision: 6, items, subagentLists: lists } as never);
    assert.equal(r.action, 'apply');
    if (r.action === 'apply') {
      assert.deepEqual(r.state.todos, { items, revision: 6, subagentLists: lists });
    }
  });

  it('no state or empty list gives no rows', () => {
    assert.deepEqual(todoRows(undefined), []);
    assert.deepEqual(todoRows(state({ todos: { items: [], revision: 0 } })), []);
  });

  it('icons', () => {
    assert.deepEqual(todoIcon('pending'), { id: 'circle-outline' });
    assert.equal(todoIcon('in_progress').id, 'sync~spin');
    assert.equal(todoIcon('done').id, 'pass');
  });

  it('summary counts done items', () => {
    assert.equal(todoSummary(state().todos.items), '1/3 done');
    assert.equal(todoSummary([]), '');
  });

  it('withItem and withoutItem copy, never mutate', () => {
    const items = state().todos.items;
    const before = JSON.stringify(items);
    assert.deepEqual(withItem(items, 2, { status: 'done' })[2], { title: 'Ship it', status: 'done' });
    assert.deepEqual(
      withoutItem(items, 0).map((i) => i.title),
      ['Wire the client', 'Ship it'],
    );
    assert.equal(JSON.stringify(items), before);
  });

  it('title validation', () => {
    assert.equal(validateTodoTitle('ok'), undefined);
    assert.match(validateTodoTitle('   ') ?? '', /title/);
    assert.match(validateTodoTitle('x'.repeat(501)) ?? '', /500/);
    assert.equal(validateTodoTitle(` ${'x'.repeat(500)} `), undefined);
  });

  it('objective validation', () => {
    assert.equal(validateObjective('Make the build green'), undefined);
    assert.equal(validateObjective('   '), 'The objective cannot be empty.');
    assert.equal(validateObjective('🎯'.repeat(LIMITS.maxObjectiveChars)), undefined, 'code points, as agentd counts');
    assert.match(validateObjective('a'.repeat(LIMITS.maxObjectiveChars + 1)) ?? '', /^At most/);
    assert.match(validateObjective('x'.repeat(4001)) ?? '', /At most 4000 characters/);
    assert.equal(validateObjective(` ${'x'.repeat(4000)} `), undefined);
  });

  it('check validation', () => {
    assert.equal(validateCheck(''), undefined, 'blank is no check');
    assert.equal(validateCheck('✓'.repeat(LIMITS.maxCheckChars) + '  '), undefined);
    assert.equal(validateCheck('😀'.repeat(LIMITS.maxCheckChars)), undefined, 'code points, not UTF-16 units');
    assert.match(validateCheck('x'.repeat(LIMITS.maxCheckChars + 1)) ?? '', /^At most 2000 characters/);
  });
});

describe('goal rows', () => {
  it('no goal: no rows', () => {
    assert.deepEqual(goalRows(null, 0, 0), []);
  });

  it('rows of an active goal without budgets', () => {
    const rows = goalRows(goal(), 1000, 1000);
    assert.deepEqual(
      rows.map((r) => [r.kind, r.label, r.description, r.icon.id]),
      [
        ['objective', 'Make the test suite pass', '', 'target'],
        ['criterion', 'Done when', 'go test ./... exits 0', 'checklist'],
        ['status', 'Active', '', 'play-circle'],
        ['turns', 'Turns', '3', 'history'],
        ['tokens', 'Tokens', '1.2k', 'symbol-numeric'],
        ['elapsed', 'Elapsed', '4m05s', 'watch'],
      ],
    );
    assert.match(rows[0].tooltip, /Make the test suite pass/);
  });

  it('full objective in the tooltip, first line as label', () => {
    const objective = `Port the parser\n${'details '.repeat(100)}`;
    const [row] = goalRows(goal({ objective }), 0, 0);
    assert.equal(row.label, 'Port the parser …');
    assert.ok(row.tooltip.includes(objective));
  });

  it('budgets show used/limit and remaining; reached ones say so', () => {
    const g = goal({
      status: 'blocked',
      terminalReason: 'turn budget reached (20 turns)',
      turnsUsed: 20,
      tokensUsed: 12_000,
      wallClockMs: 600_000,
      budget: {
        ...emptyBudget(),
        turnBudget: 20,
        remainingTurns: 0,
        turnBudgetReached: true,
        tokenBudget: 50_000,
        remainingTokens: 38_000,
        wallClockBudgetMs: 3_600_000,
        remainingWallClockMs: 3_000_000,
        overBudget: true,
      },
    });
    const rows = goalRows(g, 0, 99_000);
    const by = Object.fromEntries(rows.map((r) => [r.kind, r]));
    assert.equal(by.status.label, 'Blocked');
    assert.equal(by.status.icon.id, 'error');
    assert.equal(by.status.description, 'turn budget reached (20 turns)');
    assert.equal(by.turns.description, '20/20 · budget reached');
    assert.equal(by.turns.icon.id, 'warning');
    assert.equal(by.tokens.description, '12.0k/50.0k · 38.0k left');
    assert.equal(by.elapsed.description, '10m00s/1h · 50m00s left', 'a blocked goal does not tick');
    assert.match(by.tokens.tooltip, /Remaining: 38000/);
  });

  it('elapsed ticks only while active', () => {
    assert.equal(liveElapsedMs(goal({ wallClockMs: 1000 }), 10_000, 13_500), 4500);
    assert.equal(liveElapsedMs(goal({ wallClockMs: 1000, status: 'paused' }), 10_000, 13_500), 1000);
    assert.equal(liveElapsedMs(goal({ wallClockMs: 1000 }), 10_000, 9_000), 1000, 'clock skew never goes back');
    const g = goal({ wallClockMs: 0, budget: { ...emptyBudget(), wallClockBudgetMs: 60_000, remainingWallClockMs: 60_000 } });
    const e = goalRows(g, 0, 45_000).find((r) => r.kind === 'elapsed');
    assert.equal(e?.description, '45s/1m · 15s left');
  });

  it('task file row: path, missing and changed notes', () => {
    const withFile = (exists: boolean, changed: boolean) =>
      goalRows(goal({ taskFile: { path: 'docs/TASK.md', exists, size: 0, changedSinceLastTurn: changed } }), 0, 0).find(
        (r) => r.kind === 'taskFile',
      );
    assert.equal(withFile(true, false)?.description, 'docs/TASK.md');
    assert.equal(withFile(true, false)?.path, 'docs/TASK.md');
    assert.equal(withFile(true, true)?.description, 'docs/TASK.md (changed)');
    assert.equal(withFile(false, false)?.description, 'docs/TASK.md (missing)');
    assert.equal(withFile(false, false)?.icon.id, 'warning');
  });

  it('budget rows are coloured from 50 % (warning) and 80 % (error), as the server warns', () => {
    assert.equal(budgetLevel(4, 10), 'none');
    assert.equal(budgetLevel(5, 10), 'warning');
    assert.equal(budgetLevel(7, 10), 'warning');
    assert.equal(budgetLevel(8, 10), 'error');
    assert.equal(budgetLevel(1_000_000, null), 'none');
    const g = goal({
      turnsUsed: 5,
      tokensUsed: 850,
      wallClockMs: 0,
      budget: { ...emptyBudget(), turnBudget: 10, remainingTurns: 5, tokenBudget: 1000, remainingTokens: 150, wallClockBudgetMs: 100_000, remainingWallClockMs: 100_000 },
    });
    const by = Object.fromEntries(goalRows(g, 0, 10_000).map((r) => [r.kind, r]));
    assert.deepEqual(by.turns.icon, { id: 'history', color: BUDGET_LEVEL_COLOR.warning });
    assert.deepEqual(by.tokens.icon, { id: 'symbol-numeric', color: BUDGET_LEVEL_COLOR.error });
    assert.deepEqual(by.elapsed.icon, { id: 'watch' }, '10 s of 100 s: no colour');
    assert.equal(goalBudgetLevels(g, 10_000).highest, 'error');
    assert.equal(statusBarBackground(g, 10_000), 'statusBarItem.errorBackground');
    const half = goal({ turnsUsed: 5, budget: { ...emptyBudget(), turnBudget: 10, remainingTurns: 5 } });
    assert.equal(statusBarBackground(half, 0), 'statusBarItem.warningBackground');
    assert.equal(statusBarBackground(goal(), 0), undefined);
    assert.equal(statusBarBackground(goal({ status: 'blocked' }), 0), 'statusBarItem.warningBackground');
  });

  it('a stalled goal has a Stalled row after the status, and the status bar says so', () => {
    const rows = goalRows(goal({ stalled: true }), 0, 0);
    assert.deepEqual(
      rows.slice(2, 4).map((r) => r.kind),
      ['status', 'stalled'],
    );
    assert.equal(rows[3].label, 'Stalled');
    assert.match(rows[3].tooltip, /re-plan/);
    assert.equal(goalRows(goal(), 0, 0).find((r) => r.kind === 'stalled'), undefined);
    assert.equal(statusBarText(goal({ stalled: true }), 5000), '$(target) Goal active (stalled) · 3 turns · 1.2k tok · 5s');
    assert.equal(statusBarBackground(goal({ stalled: true }), 0), 'statusBarItem.warningBackground');
    assert.match(statusBarTooltip(goal({ stalled: true }), 'default'), /Stalled:/);
  });

  it('the Plan row counts the todo list live and says what completion waits for (docs/runtime.md §2.12)', () => {
    const items = [
      { title: 'read the spec', status: 'done' as const },
      { title: 'write the parser', status: 'in_progress' as const },
      { title: 'test it', status: 'pending' as const },
    ];
    const tf = { path: 'TASK.md', exists: true, size: 9, changedSinceLastTurn: false, checkboxes: { checked: 3, total: 7 } };
    const rows = goalRows(goal({ taskFile: tf }), 0, 0, items);
    const plan = rows.find((r) => r.kind === 'plan');
    assert.equal(plan?.description, '1/3 done · 3/7 checked · completion waits');
    assert.equal(plan?.contextValue, 'goal.plan');
    assert.match(plan?.tooltip ?? '', /Open:\n {2}- write the parser\n {2}- test it/);
    assert.match(plan?.tooltip ?? '', /completes only once every item is done/);
    assert.equal(plan?.icon.color, 'list.warningForeground');
    assert.deepEqual(
      rows.slice(2, 4).map((r) => r.kind),
      ['status', 'plan'],
    );
    const allDone = items.map((i) => ({ ...i, status: 'done' as const }));
    assert.equal(planRow(goal(), allDone)?.description, '3/3 done');
    assert.equal(planRow(goal({ requireTodos: false }), items)?.description, '1/3 done · not required');
    assert.match(planRow(goal({ requireTodos: false }), items)?.tooltip ?? '', /does not wait/);
    assert.equal(planRow(goal({ status: 'complete' }), items)?.description, '1/3 done');
    assert.equal(planRow(goal(), []), undefined);
    assert.equal(goalRows(goal(), 0, 0).find((r) => r.kind === 'plan'), undefined);
  });

  it('task file row shows the checkbox counts', () => {
    const row = (exists: boolean, checkboxes?: { checked: number; total: number }) =>
      goalRows(goal({ taskFile: { path: 'TASK.md', exists, size: 9, changedSinceLastTurn: false, checkboxes } }), 0, 0).find(
        (r) => r.kind === 'taskFile',
      );
    assert.equal(row(true, { checked: 3, total: 7 })?.description, 'TASK.md · 3/7 checked');
    assert.match(row(true, { checked: 3, total: 7 })?.tooltip ?? '', /Checkboxes: 3\/7 checked/);
    assert.equal(row(true)?.description, 'TASK.md');
    assert.equal(row(false, { checked: 3, total: 7 })?.description, 'TASK.md (missing)');
    assert.equal(checkboxText(undefined), '');
  });

  it('status icons', () => {
    assert.equal(goalStatusIcon('active').id, 'play-circle');
    assert.equal(goalStatusIcon('paused').id, 'debug-pause');
    assert.equal(goalStatusIcon('blocked').id, 'error');
    assert.equal(goalStatusIcon('complete').id, 'pass-filled');
  });

  it('budgetText', () => {
    assert.equal(budgetText(3, null, null, false, String), '3');
    assert.equal(budgetText(3, 20, 17, false, String, ' turns'), '3/20 turns · 17 left');
    assert.equal(budgetText(3, 20, null, false, String), '3/20 · 17 left');
  });
});

describe('status bar', () => {
  it('hidden without a goal', () => {
    assert.equal(statusBarText(null, 0), undefined);
  });
  it('matches the documented shape with a turn budget', () => {
    const g = goal({ budget: { ...emptyBudget(), turnBudget: 20, remainingTurns: 17 } });
    assert.equal(statusBarText(g, 245_000), '$(target) Goal active · 3/20 turns · 1.2k tok · 4m');
  });
  it('without budgets, and with token and time budgets', () => {
    assert.equal(statusBarText(goal({ turnsUsed: 1, status: 'paused' }), 5000), '$(debug-pause) Goal paused · 1 turn · 1.2k tok · 5s');
    const g = goal({
      status: 'blocked',
      budget: { ...emptyBudget(), tokenBudget: 2000, remainingTokens: 766, wallClockBudgetMs: 3_600_000, remainingWallClockMs: 1 },
    });
    assert.equal(statusBarText(g, 245_000), '$(warning) Goal blocked · 3 turns · 1.2k/2.0k tok · 4m/1h');
  });
});

describe('stale team store', () => {
  it('adds "stale" last to a view description, which is otherwise unchanged', () => {
    assert.equal(STALE_LABEL, 'stale');
    assert.equal(viewDescription(['session x', '2 of 5 done'], false), 'session x · 2 of 5 done');
    assert.equal(viewDescription(['session x', '2 of 5 done'], true), 'session x · 2 of 5 done · stale');
    assert.equal(viewDescription([undefined, ''], true), 'stale');
    assert.equal(viewDescription([undefined, ''], false), undefined);
  });
});

describe('status bar tooltip', () => {
  it('has the progress line the server and Neovim write', () => {
    const g = goal({ status: 'blocked', terminalReason: 'turn budget reached', budget: { ...emptyBudget(), turnBudget: 3, remainingTurns: 0 } });
    assert.equal(
      statusBarTooltip(g, 'default'),
      'agentd goal (blocked) — session default\nMake the test suite pass\n3/3 turns · 1.2k tokens · 4m05s\nReason: turn budget reached\nClick to show the Goal view.',
    );
  });
});

describe('goal check row', () => {
  const at = '2026-03-01T09:00:05Z';
  it('is absent without a check, and last in the Goal view with one', () => {
    assert.ok(!goalRows(goal(), 0, 0).some((r) => r.kind === 'check'));
    const rows = goalRows(goal({ check: { approved: true, command: 'go test ./...' } }), 0, 0);
    assert.equal(rows[rows.length - 1].kind, 'check');
  });
  it('not run yet', () => {
    const r = checkRow({ approved: true, command: 'go test ./...' });
    assert.deepEqual([r.label, r.description, r.icon.id, r.contextValue], ['Check: go test ./...', 'not run yet', 'beaker', 'goal.check.notRun']);
    assert.equal(r.tooltip, 'Check: go test ./...');
  });
  it('running: a spinning icon, and the last result stays in the tooltip', () => {
    const r = checkRow({ approved: true, command: 'make', running: true, lastRun: { exitCode: 1, durationMs: 2000, at, outputTail: 'FAIL\n' } });
    assert.deepEqual([r.description, r.icon.id, r.contextValue], ['running…', 'sync~spin', 'goal.check.running']);
    assert.match(r.tooltip, /^Check: make\nRunning now\.\nLast run: failed: exit 1 after 2s, exit code 1, ended /);
  });
  it('passed and failed: summary, time, output tail in the tooltip', () => {
    const passed = checkRow({ approved: true, command: 'make', lastRun: { exitCode: 0, durationMs: 12_000, at, outputTail: 'ok\n' } });
    assert.match(passed.description, /^passed in 12s · \d\d:\d\d:05$/);
    assert.deepEqual([passed.icon, passed.contextValue], [{ id: 'pass', color: 'testing.iconPassed' }, 'goal.check.passed']);
    const failed = checkRow({ approved: true, command: 'make', lastRun: { exitCode: 2, durationMs: 61_000, at, outputTail: 'line 1\n--- FAIL: TestX\n' } });
    assert.match(failed.description, /^failed: exit 2 after 1m01s · /);
    assert.equal(failed.contextValue, 'goal.check.failed');
    assert.ok(failed.tooltip.endsWith('\n\nOutput (its end):\nline 1\n--- FAIL: TestX'), failed.tooltip);
  });
  it('a run that did not finish', () => {
    assert.equal(checkRunSummary({ exitCode: -1, durationMs: 600_000, at, outputTail: '' }), 'did not finish (ran 10m00s)');
  });
  it('hasCheck only while a check is set and not running', () => {
    assert.equal(panelContext(state({ goal: goal({ check: { approved: true, command: 'make' } }) }), 1)['agentdPanel.hasCheck'], true);
    assert.equal(panelContext(state({ goal: goal({ check: { approved: true, command: 'make', running: true } }) }), 1)['agentdPanel.hasCheck'], false);
    assert.equal(panelContext(state({ goal: goal() }), 1)['agentdPanel.hasCheck'], false);
  });
});

describe('context keys', () => {
  it('before the server answered', () => {
    assert.deepEqual(panelContext(undefined, 0), {
      'agentdPanel.ready': false,
      'agentdPanel.hasGoal': false,
      'agentdPanel.goalStatus': '',
      'agentdPanel.hasCheck': false,
      'agentdPanel.checkUnapproved': false,
      'agentdPanel.teamFilePending': false,
      'agentdPanel.hasTodos': false,
      'agentdPanel.multipleSessions': false,
      'agentdPanel.autoAdvance': true,
    });
  });
  it('with a paused goal, todos and two sessions', () => {
    const ctx = panelContext(state({ goal: goal({ status: 'paused' }) }), 2);
    assert.equal(ctx['agentdPanel.goalStatus'], 'paused');
    assert.equal(ctx['agentdPanel.hasGoal'], true);
    assert.equal(ctx['agentdPanel.hasTodos'], true);
    assert.equal(ctx['agentdPanel.multipleSessions'], true);
  });
});

describe('reconcile notifications', () => {
  const base = { workspace: WS, session: 'default' };
  const items = [{ title: 'New', status: 'pending' as const }];

  it('the next revision is applied; todos.revision follows', () => {
    const r = reconcile(state(), 'default', NOTIFICATIONS.todoChanged, { ...base, revision: 6, items } as never);
    assert.equal(r.action, 'apply');
    if (r.action === 'apply') {
      assert.equal(r.state.revision, 6);
      assert.deepEqual(r.state.todos, { items, revision: 6 });
    }
  });

  it('a gap asks for a re-read', () => {
    const r = reconcile(state(), 'default', NOTIFICATIONS.todoChanged, { ...base, revision: 8, items } as never);
    assert.equal(r.action, 'refresh');
  });

  it('older revisions, other sessions and other folders are ignored', () => {
    assert.equal(reconcile(state(), 'default', NOTIFICATIONS.todoChanged, { ...base, revision: 4, items } as never).action, 'ignore');
    assert.equal(
      reconcile(state(), 'default', NOTIFICATIONS.todoChanged, { ...base, session: 'other', revision: 6, items } as never).action,
      'ignore',
    );
    assert.equal(
      reconcile(state(), 'default', NOTIFICATIONS.todoChanged, { ...base, workspace: 'file:///elsewhere', revision: 6, items } as never)
        .action,
      'ignore',
    );
  });

  it('an equal revision (a sibling notification of the same change) is applied again', () => {
    const g = goal({ status: 'paused' });
    const r = reconcile(state(), 'default', NOTIFICATIONS.goalChanged, { ...base, revision: 5, goal: g } as never);
    assert.equal(r.action, 'apply');
    if (r.action === 'apply') {
      assert.equal(r.state.goal?.status, 'paused');
      assert.equal(r.state.todos.revision, 4, 'a goal change keeps todos.revision');
    }
  });

  it('goal removed', () => {
    const r = reconcile(state({ goal: goal() }), 'default', NOTIFICATIONS.goalChanged, { ...base, revision: 6, goal: null } as never);
    assert.equal(r.action, 'apply');
    if (r.action === 'apply') {
      assert.equal(r.state.goal, null);
    }
  });

  it('task file change updates the shown task file', () => {
    const s = state({ goal: goal({ taskFile: { path: 'TASK.md', exists: false, size: 0, changedSinceLastTurn: false } }) });
    const r = reconcile(s, 'default', NOTIFICATIONS.taskFileChanged, { ...base, revision: 6, path: 'TASK.md', exists: true, sha256: 'ab' } as never);
    assert.equal(r.action, 'apply');
    if (r.action === 'apply') {
      assert.deepEqual(r.state.goal?.taskFile, { path: 'TASK.md', exists: true, sha256: 'ab', size: 0, changedSinceLastTurn: true });
    }
  });

  it('no state yet: re-read', () => {
    assert.equal(reconcile(undefined, 'default', NOTIFICATIONS.goalChanged, { ...base, revision: 1 }).action, 'refresh');
  });

  it('folder URIs compare after normalisation', () => {
    assert.equal(normalizeFolder('file:///tmp/a%20b/'), '/tmp/a b');
    assert.equal(normalizeFolder('file:///C%3A/x'), '/c:/x');
    assert.equal(normalizeFolder('/tmp/a b'), '/tmp/a b');
  });
});

describe('errors and budgets', () => {
  it('domainError reads data.code', () => {
    assert.deepEqual(domainError({ code: -32803, message: 'x', data: { code: 'todo.conflict', state: state() } })?.code, 'todo.conflict');
    assert.equal(domainError(new Error('plain')), undefined);
    assert.equal(domainError(null), undefined);
  });

  it('budgetArgs converts units', () => {
    assert.deepEqual(budgetArgs('turns', 20), { turns: 20 });
    assert.deepEqual(budgetArgs('tokens', 0.2), { tokens: 1 });
    assert.deepEqual(budgetArgs('minutes', 1.5), { wallClockMs: 90_000 });
    assert.deepEqual(budgetArgs('hours', 2), { wallClockMs: 7_200_000 });
  });

  it('validateBudgetInput', () => {
    assert.equal(validateBudgetInput('turns', '20'), undefined);
    assert.match(validateBudgetInput('turns', '2.5') ?? '', /whole/);
    assert.match(validateBudgetInput('tokens', '-1') ?? '', /greater than 0/);
    assert.match(validateBudgetInput('minutes', 'abc') ?? '', /number/);
    assert.match(validateBudgetInput('hours', '25') ?? '', /24 hours/);
    assert.equal(validateBudgetInput('minutes', '0.5'), undefined);
  });
});

describe('Up next (the goal queue)', () => {
  const items = [
    { id: 'q1', objective: 'Document the parser', completionCriterion: 'docs build', check: 'make docs', addedAt: '2026-01-01T00:00:00Z' },
    { id: 'q2', objective: 'Tag the release', addedAt: '2026-01-01T00:00:01Z' },
    { id: 'q3', objective: 'Announce it', addedAt: '2026-01-01T00:00:02Z' },
  ];

  it('one row per queued goal, first first, with criterion and check; the ends are marked for Move Up/Down', () => {
    const rows = queueRows(state({ queue: { items, autoAdvance: true } }));
    assert.deepEqual(
      rows.map((r) => [r.id, r.index, r.label, r.description, r.contextValue]),
      [
        ['q1', 0, 'Document the parser', 'done when: docs build · check: make docs', 'queue.item.first'],
        ['q2', 1, 'Tag the release', '', 'queue.item'],
        ['q3', 2, 'Announce it', '', 'queue.item.last'],
      ],
    );
    assert.match(rows[0].tooltip, /Check: make docs/);
    assert.equal(queueRows(state({ queue: { items: [items[0]], autoAdvance: true } }))[0].contextValue, 'queue.item.first.last');
    assert.deepEqual(queueRows(undefined), []);
  });

  it('the summary says how many are queued and whether auto-advance is on', () => {
    assert.equal(queueSummary(state({ queue: { items, autoAdvance: false } })), '3 queued · auto-advance off');
    assert.equal(queueSummary(state()), 'nothing queued · auto-advance on');
    assert.equal(panelContext(state({ queue: { items, autoAdvance: false } }), 1)['agentdPanel.autoAdvance'], false);
  });

  it('queueChanged replaces the queue; the goal and todos stay', () => {
    const st = state({ goal: goal() });
    const r = reconcile(st, 'default', NOTIFICATIONS.queueChanged, { workspace: WS, session: 'default', revision: 6, items, autoAdvance: false, actor: 'user' } as never);
    assert.equal(r.action, 'apply');
    if (r.action === 'apply') {
      assert.deepEqual(r.state.queue, { items, autoAdvance: false });
      assert.equal(r.state.goal, st.goal);
      assert.equal(r.state.todos, st.todos);
      assert.equal(r.state.revision, 6);
    }
    const bad = reconcile(st, 'default', NOTIFICATIONS.queueChanged, { workspace: WS, session: 'default', revision: 6 } as never);
    assert.equal(bad.action, 'refresh');
  });
});
