// Extension-host tests: run inside a real VS Code (see run.mjs) against the real
// agentd built from this repository. Each test reports `@@e2e pass|fail NAME`
// on the console; the driver counts them. Waits are on real state (the views'
// rows, `agentd state --json`) with timeouts, never fixed sleeps.
import { execFile, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { PanelApi } from '../../src/extension';
import { STALE_LABEL, type TodoRow } from '../../src/model';
import { SERVER_COMMANDS, type State, type TodoItem } from '../../src/protocol.gen';
import type { Ui } from '../../src/ui';

const BIN = process.env.AGENTD_E2E_BIN ?? 'agentd';
const WS = process.env.AGENTD_E2E_WORKSPACE ?? '';
const DIR = process.env.AGENTD_E2E_DIR ?? '';
/** The team run (run.mjs E2E_TEAM=1): WS is a team folder on an etcd member the driver runs. */
const TEAM = process.env.AGENTD_E2E_TEAM === '1';

// ---------------------------------------------------------------------------
// helpers

function agentd(...args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(BIN, [...args, '--workspace', WS], { cwd: WS, env: process.env, timeout: 20_000 }, (err, stdout, stderr) => {
      if (err) {
        reject(new Error(`agentd ${args.join(' ')}: ${err.message}\n${stderr}`));
      } else {
        resolve(stdout);
      }
    });
  });
}

/** The daemon's view of a session, through the CLI (`agentd state --json`). */
async function serverState(session = 'default'): Promise<State> {
  return JSON.parse(await agentd('state', '--json', '--session', session)) as State;
}

async function setTodosAsAgent(items: TodoItem[], session = 'default'): Promise<void> {
  await agentd('tool', 'TodoList', JSON.stringify({ todos: items }), '--session', session);
}

/**
 * Polls `cond` until it returns a truthy value or `ms` pass; the error names `what` and the last value seen.
 * The bound (30 s unless given) is only a hang guard: what the suite waits for comes from agentd's
 * notifications and the extension's own timers, which a loaded machine (2 cores shared by many jobs) delays.
 */
async function waitFor<T>(what: string, cond: () => T | Promise<T>, ms = 30_000): Promise<NonNullable<T>> {
  const end = Date.now() + ms;
  let last: unknown;
  for (;;) {
    try {
      last = await cond();
      if (last) {
        return last as NonNullable<T>;
      }
    } catch (err) {
      last = err;
    }
    if (Date.now() > end) {
      throw new Error(`timed out after ${ms} ms waiting for ${what}; last: ${describe(last)}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

function describe(v: unknown): string {
  if (v instanceof Error) {
    return v.message;
  }
  try {
    return JSON.stringify(v)?.slice(0, 400) ?? String(v);
  } catch {
    return String(v);
  }
}

function eq(got: unknown, want: unknown, what: string): void {
  const g = JSON.stringify(got);
  const w = JSON.stringify(want);
  if (g !== w) {
    throw new Error(`${what}: got ${g}, want ${w}`);
  }
}

function ok(cond: unknown, what: string): void {
  if (!cond) {
    throw new Error(what);
  }
}

const titles = (api: PanelApi): string[] => api.todos.currentRows.map((r) => r.label);
const statuses = (api: PanelApi): string[] => api.todos.currentRows.map((r) => r.item.status);

/** Scripted answers for the prompts; records every message. */
class ScriptedUi implements Ui {
  inputs: (string | undefined)[] = [];
  picks: ((items: readonly vscode.QuickPickItem[]) => vscode.QuickPickItem | undefined)[] = [];
  dialogs: (vscode.Uri[] | undefined)[] = [];
  confirms: boolean[] = [];
  messages: { kind: string; message: string }[] = [];

  input(): Thenable<string | undefined> {
    if (this.inputs.length === 0) {
      throw new Error('unexpected input box');
    }
    return Promise.resolve(this.inputs.shift());
  }
  pick<T extends vscode.QuickPickItem>(items: readonly T[]): Thenable<T | undefined> {
    const f = this.picks.shift();
    if (!f) {
      throw new Error('unexpected quick pick');
    }
    return Promise.resolve(f(items) as T | undefined);
  }
  openDialog(): Thenable<vscode.Uri[] | undefined> {
    if (this.dialogs.length === 0) {
      throw new Error('unexpected open dialog');
    }
    return Promise.resolve(this.dialogs.shift());
  }
  confirm(message: string): Thenable<boolean> {
    this.messages.push({ kind: 'confirm', message });
    if (this.confirms.length === 0) {
      throw new Error(`unexpected confirmation: ${message}`);
    }
    return Promise.resolve(this.confirms.shift() as boolean);
  }
  info(message: string): Thenable<string | undefined> {
    this.messages.push({ kind: 'info', message });
    return Promise.resolve(undefined);
  }
  warn(message: string): Thenable<string | undefined> {
    this.messages.push({ kind: 'warn', message });
    return Promise.resolve(undefined);
  }
  error(message: string): Thenable<string | undefined> {
    this.messages.push({ kind: 'error', message });
    return Promise.resolve(undefined);
  }
  of(kind: string): string[] {
    return this.messages.filter((m) => m.kind === kind).map((m) => m.message);
  }
}

let turnSeq = 0;

/** One goal-driven agent turn through the lifecycle commands (docs/protocol.md §3), with `tokens` output tokens. */
async function agentTurn(api: PanelApi, tokens: number): Promise<void> {
  const turnId = `e2e-turn-${++turnSeq}`;
  await api.client.execute(SERVER_COMMANDS.turnBegin, { turnId, origin: turnSeq === 1 ? 'user' : 'continuation' });
  await api.client.execute(SERVER_COMMANDS.stepBegin, { turnId });
  await api.client.execute(SERVER_COMMANDS.stepEnd, { turnId, outputTokens: tokens, finishReason: 'stop' });
  await api.client.execute(SERVER_COMMANDS.turnEnd, { turnId, outcome: 'completed' });
}

/** Asks the driver for `kind` (`@@e2e KIND {...req, replyFile}`); resolves when it answered `{ok: true}`. */
async function askDriver(kind: string, name: string, req: Record<string, unknown>): Promise<void> {
  const replyFile = path.join(DIR, `${kind}-${name}.json`);
  console.log(`@@e2e ${kind} ${JSON.stringify({ ...req, replyFile })}`);
  const reply = await waitFor(
    `the driver's ${kind} ${name}`,
    () => (fs.existsSync(replyFile) ? (JSON.parse(fs.readFileSync(replyFile, 'utf8')) as { ok: boolean; error: string }) : undefined),
    60_000,
  );
  ok(reply.ok, `driver: ${reply.error}`);
}

/** Asks the driver for DOM checks and a screenshot; resolves when it answered. */
async function screenshot(req: Record<string, unknown>): Promise<void> {
  await askDriver('screenshot', String(req.name), req);
}

let etcdSeq = 0;

/** Team run: has the driver stop the folder's etcd member (as a crash would) or start it again; resolves once it is stopped or ready. */
async function etcd(what: 'stop' | 'start'): Promise<void> {
  await askDriver('etcd', `${what}-${++etcdSeq}`, { do: what });
}

// ---------------------------------------------------------------------------
// tests

type Test = { name: string; fn: (api: PanelApi, ui: ScriptedUi) => Promise<void>; team?: boolean };
const tests: Test[] = [];
const test = (name: string, fn: Test['fn']): void => {
  tests.push({ name, fn });
};
/** A test of the team run only (TEAM); the other tests run only outside it, except the first. */
const teamTest = (name: string, fn: Test['fn']): void => {
  tests.push({ name, fn, team: true });
};

const SEEDED = ['Read the task file', 'Port the parser to the new AST', 'Update the golden files'];

test('activates and connects to agentd through --remote=auto', async (api) => {
  await waitFor('the client running', () => api.client.status === 'running' && api.store.state);
  eq(api.client.settings.remote, process.env.E2E_REMOTE ?? 'auto', 'remote setting');
  const all = await vscode.commands.getCommands(true);
  ok(all.includes(SERVER_COMMANDS.state), `the server command ${SERVER_COMMANDS.state} is registered as an editor command`);
  ok(all.includes('agentdPanel.todo.setDone'), 'extension commands are registered');
  eq(api.context['agentdPanel.ready'], true, 'context key ready');
});

test('views fill from the state written before VS Code started', async (api) => {
  await waitFor('seeded todos in the tree', () => JSON.stringify(titles(api)) === JSON.stringify(SEEDED));
  eq(statuses(api), ['done', 'in_progress', 'pending'], 'statuses');
  eq(
    api.todos.currentRows.map((r) => r.icon.id),
    ['pass', 'sync~spin', 'circle-outline'],
    'icons',
  );
  const objective = api.goal.row('objective');
  ok(objective?.label.startsWith('Port the parser described in TASK.md'), `objective row: ${describe(objective)}`);
  eq(api.goal.row('criterion')?.description, 'go test ./parser/... passes', 'criterion row');
  eq(api.goal.row('taskFile')?.description, 'TASK.md', 'task file row');
  ok(['active', 'paused'].includes(api.store.state?.goal?.status ?? ''), 'goal is active or paused');
  ok(api.statusBar.isVisible, 'status bar shown while there is a goal');
  eq(api.context['agentdPanel.hasTodos'], true, 'context hasTodos');
  eq(api.context['agentdPanel.hasGoal'], true, 'context hasGoal');
});

test('a change by another client (agentd tool TodoList) shows up in the tree', async (api) => {
  const items: TodoItem[] = [
    { title: 'Read the task file', status: 'done' },
    { title: 'Port the parser to the new AST', status: 'done' },
    { title: 'Update the golden files', status: 'in_progress' },
    { title: 'Run the full test suite', status: 'pending' },
  ];
  await setTodosAsAgent(items);
  await waitFor('the agent list in the tree', () => JSON.stringify(api.todos.currentRows.map((r) => r.item)) === JSON.stringify(items));
});

/** The parts of MCP responses the test reads. */
interface McpAnswer {
  id?: number;
  result?: { serverInfo?: { name: string }; tools?: { name: string }[]; isError?: boolean };
  error?: unknown;
}

/**
 * Runs the MCP server of `def` (as VS Code's agent mode would) for the given
 * requests, newline-delimited JSON-RPC on stdin, and returns the responses by id.
 */
function runMcp(def: vscode.McpStdioServerDefinition, requests: object[]): Promise<Map<number, McpAnswer>> {
  return new Promise((resolve, reject) => {
    const child = spawn(def.command, def.args, { cwd: def.cwd?.fsPath, env: process.env, stdio: ['pipe', 'pipe', 'inherit'] });
    const want = requests.filter((r) => 'id' in r).length;
    const answers = new Map<number, McpAnswer>();
    const timer = setTimeout(() => {
      child.kill();
      reject(new Error(`agentd mcp answered ${answers.size} of ${want} requests within 30 s`));
    }, 30_000); // a hang guard, as waitFor's
    let buf = '';
    child.stdout.on('data', (chunk: Buffer) => {
      buf += chunk.toString('utf8');
      for (let i = buf.indexOf('\n'); i >= 0; i = buf.indexOf('\n')) {
        const msg = JSON.parse(buf.slice(0, i)) as McpAnswer;
        buf = buf.slice(i + 1);
        if (typeof msg.id === 'number') {
          answers.set(msg.id, msg);
        }
        if (answers.size === want) {
          clearTimeout(timer);
          child.stdin.end();
          resolve(answers);
        }
      }
    });
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    for (const r of requests) {
      child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', ...r })}\n`);
    }
  });
}

test('the MCP server definition for agent mode starts agentd mcp, whose writes reach the tree', async (api) => {
  ok(typeof vscode.lm.registerMcpServerDefinitionProvider === 'function', 'this VS Code has the MCP provider API');
  const defs = await api.mcp.provideMcpServerDefinitions(new vscode.CancellationTokenSource().token);
  eq(defs?.length, 1, 'one server definition');
  const def = defs![0];
  eq(def.label, 'agentd', 'label');
  eq(def.args.slice(0, 3), ['mcp', '--workspace', WS], 'args name the workspace');
  const before = api.todos.currentRows.map((r) => r.item);
  const items: TodoItem[] = [{ title: 'Written by the agent over MCP', status: 'in_progress' }];
  const answers = await runMcp(def, [
    { id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'e2e', version: '1' } } },
    { method: 'notifications/initialized' },
    { id: 2, method: 'tools/list' },
    { id: 3, method: 'tools/call', params: { name: 'TodoList', arguments: { todos: items } } },
  ]);
  eq(answers.get(1)?.result?.serverInfo?.name, 'agentd', 'serverInfo');
  eq((answers.get(2)?.result?.tools ?? []).map((t) => t.name).sort(), ['CreateGoal', 'GetGoal', 'SetGoalBudget', 'TodoList', 'UpdateGoal'], 'tools');
  eq(answers.get(3)?.result?.isError ?? false, false, 'TodoList result');
  await waitFor('the MCP write in the tree', () => JSON.stringify(api.todos.currentRows.map((r) => r.item)) === JSON.stringify(items));
  await setTodosAsAgent(before);
  await waitFor('the list back in the tree', () => JSON.stringify(api.todos.currentRows.map((r) => r.item)) === JSON.stringify(before));
});

test('marking a todo done from the view reaches the daemon', async (api) => {
  const row = api.todos.currentRows.find((r) => r.label === 'Update the golden files');
  ok(row, 'row present');
  await vscode.commands.executeCommand('agentdPanel.todo.setDone', row);
  await waitFor('done in agentd state --json', async () => (await serverState()).todos.items[2]?.status === 'done');
  eq(api.todos.currentRows[2].item.status, 'done', 'row status');
  eq(api.todos.currentRows[2].icon.id, 'pass', 'row icon');
});

test('add, rename, set status and delete go through agentd.todo.set', async (api, ui) => {
  ui.inputs.push('Write release notes');
  await vscode.commands.executeCommand('agentdPanel.todo.add');
  await waitFor('added item in the daemon', async () => (await serverState()).todos.items.at(-1)?.title === 'Write release notes');
  const added = api.todos.currentRows.at(-1) as TodoRow;
  eq([added.label, added.item.status], ['Write release notes', 'pending'], 'added row');

  ui.inputs.push('Write the release notes');
  await vscode.commands.executeCommand('agentdPanel.todo.rename', added);
  await waitFor('renamed item', async () => (await serverState()).todos.items.at(-1)?.title === 'Write the release notes');

  await vscode.commands.executeCommand('agentdPanel.todo.setInProgress', api.todos.currentRows.at(-1));
  await waitFor('in progress', async () => (await serverState()).todos.items.at(-1)?.status === 'in_progress');
  eq(api.todos.currentRows.at(-1)?.icon.id, 'sync~spin', 'spinning icon');

  const before = (await serverState()).todos.items.length;
  await vscode.commands.executeCommand('agentdPanel.todo.delete', api.todos.currentRows.at(-1));
  await waitFor('deleted item', async () => (await serverState()).todos.items.length === before - 1);
  ok(!titles(api).includes('Write the release notes'), 'row gone');
  eq(ui.of('error'), [], 'no error shown');
});

test('a stale edit is refused (todo.conflict): the view shows the newer list and the user is told', async (api, ui) => {
  const stale = api.todos.currentRows[0];
  const agentItems: TodoItem[] = [
    { title: 'Agent rewrote the plan', status: 'in_progress' },
    { title: 'Second step', status: 'pending' },
  ];
  await setTodosAsAgent(agentItems);
  await waitFor('the agent list', () => titles(api)[0] === 'Agent rewrote the plan');
  await vscode.commands.executeCommand('agentdPanel.todo.setPending', stale);
  await waitFor('a warning about the conflict', () => ui.of('warn').some((m) => /changed elsewhere/.test(m)));
  eq((await serverState()).todos.items, agentItems, 'the agent list is not overwritten');
  eq(api.todos.currentRows.map((r) => r.item), agentItems, 'the view shows the agent list');
});

test('clear asks for confirmation, and does nothing when declined', async (api, ui) => {
  ui.confirms.push(false);
  await vscode.commands.executeCommand('agentdPanel.todo.clear');
  eq((await serverState()).todos.items.length, 2, 'declined: list kept');
  ui.confirms.push(true);
  await vscode.commands.executeCommand('agentdPanel.todo.clear');
  await waitFor('empty list in the daemon', async () => (await serverState()).todos.items.length === 0);
  await waitFor('empty tree', () => api.todos.currentRows.length === 0 && api.context['agentdPanel.hasTodos'] === false);
  ok(ui.of('confirm').some((m) => /Clear all 2 todos/.test(m)), 'confirmation asked');
});

test('pause and resume the goal from the view commands', async (api) => {
  if (api.store.state?.goal?.status !== 'active') {
    await vscode.commands.executeCommand('agentdPanel.goal.resume');
    await waitFor('active goal', async () => (await serverState()).goal?.status === 'active');
  }
  await waitFor('context goalStatus active', () => api.context['agentdPanel.goalStatus'] === 'active');
  await vscode.commands.executeCommand('agentdPanel.goal.pause');
  await waitFor('paused in the daemon', async () => (await serverState()).goal?.status === 'paused');
  await waitFor('paused in the view', () => api.goal.row('status')?.label === 'Paused' && api.context['agentdPanel.goalStatus'] === 'paused');
  ok(/Goal paused/.test(api.statusBar.item.text), `status bar: ${api.statusBar.item.text}`);
  await vscode.commands.executeCommand('agentdPanel.goal.resume');
  await waitFor('active in the daemon', async () => (await serverState()).goal?.status === 'active');
  await waitFor('active in the view', () => api.goal.row('status')?.label === 'Active' && api.context['agentdPanel.goalStatus'] === 'active');
  ok(/^\$\(target\) Goal active · /.test(api.statusBar.item.text), `status bar: ${api.statusBar.item.text}`);
});

test('wait: a duration, then a chosen file replacing it; a refused wait shows the daemon message', async (api, ui) => {
  await waitFor('context goalStatus active', () => api.context['agentdPanel.goalStatus'] === 'active');
  const label = (l: string) => (items: readonly vscode.QuickPickItem[]) => items.find((i) => i.label === l);
  ui.picks.push(label('A time or duration…'), label('Counts'));
  ui.inputs.push('30m', 'CI');
  await vscode.commands.executeCommand('agentdPanel.goal.wait');
  await waitFor('waiting in the daemon', async () => (await serverState()).goal?.status === 'waiting');
  const first = (await serverState()).goal?.wait;
  ok(first?.until !== undefined && first.note === 'CI' && first.by === 'user' && first.wallClock === 'counts', `wait: ${JSON.stringify(first)}`);
  await waitFor('context goalStatus waiting', () => api.context['agentdPanel.goalStatus'] === 'waiting');
  // A person's wait replaces the one in place (docs/runtime.md §2.13).
  const folder = vscode.workspace.workspaceFolders?.[0];
  if (!folder) {
    throw new Error('no workspace folder');
  }
  ui.picks.push(label('Choose a file or folder…'), label('Stops'));
  ui.dialogs.push([vscode.Uri.joinPath(folder.uri, 'build', 'out.log')]);
  ui.inputs.push('');
  await vscode.commands.executeCommand('agentdPanel.goal.wait');
  await waitFor('the path wait in the daemon', async () => (await serverState()).goal?.wait?.paths?.[0] === 'build/out.log');
  const second = (await serverState()).goal?.wait;
  ok(second?.until === undefined && second?.note === undefined && second?.wallClock === 'stops', `wait: ${JSON.stringify(second)}`);
  // 200h passes the input box; agentd refuses a wait more than 7 days ahead, and the panel shows why.
  ui.picks.push(label('A time or duration…'), label('Counts'));
  ui.inputs.push('200h', '');
  await vscode.commands.executeCommand('agentdPanel.goal.wait');
  await waitFor('the refusal shown', () => ui.of('error').some((m) => /^agentd: .*more than .* ahead/.test(m)));
  eq((await serverState()).goal?.wait?.paths, ['build/out.log'], 'the refused wait changes nothing');
  await vscode.commands.executeCommand('agentdPanel.goal.resume');
  await waitFor('active in the daemon', async () => (await serverState()).goal?.status === 'active');
});

test('elapsed time ticks every second while the goal is active', async (api) => {
  const first = api.goal.row('elapsed')?.description;
  const text = api.statusBar.item.text;
  await waitFor('the elapsed row to move', () => api.goal.row('elapsed')?.description !== first);
  ok(api.statusBar.item.text.startsWith(text.split(' · ')[0]), 'status bar still shows the goal');
});

test('set budget: quick pick of the unit, then the number', async (api, ui) => {
  ui.picks.push((items) => items.find((i) => i.label === 'Turns'));
  ui.inputs.push('20');
  await vscode.commands.executeCommand('agentdPanel.goal.setBudget');
  await waitFor('turn budget 20 in the daemon', async () => (await serverState()).goal?.budget.turnBudget === 20);
  await waitFor('turn budget in the view', () => /\/20 · 20 left$/.test(api.goal.row('turns')?.description ?? ''));
  ui.picks.push((items) => items.find((i) => i.label === 'Tokens'));
  ui.inputs.push('50000');
  await vscode.commands.executeCommand('agentdPanel.goal.setBudget');
  await waitFor('token budget in the daemon', async () => (await serverState()).goal?.budget.tokenBudget === 50_000);
  ui.picks.push((items) => items.find((i) => i.label === 'Hours'));
  ui.inputs.push('2');
  await vscode.commands.executeCommand('agentdPanel.goal.setBudget');
  await waitFor('time budget in the daemon', async () => (await serverState()).goal?.budget.wallClockBudgetMs === 7_200_000);
  // The goal's clock has run since the daemon opened the folder: past a minute it reads 1m05s.
  await waitFor('status bar with budgets', () => / · 0\/20 turns · 0\/50.0k tok · (\d+m)?\d+s\/2h$/.test(api.statusBar.item.text));
});

test('the status bar item focuses the Goal view', async (api) => {
  await vscode.commands.executeCommand('workbench.view.explorer');
  await waitFor('the Goal view hidden', () => !api.goal.view.visible);
  const command = api.statusBar.item.command;
  eq(command, 'agentdPanel.goal.focus', 'status bar command');
  await vscode.commands.executeCommand(command as string);
  await waitFor('the Goal view visible', () => api.goal.view.visible);
});

test('the sidebar renders the goal and todos (DOM checks + screenshot)', async (api) => {
  const st = await api.client.execute(SERVER_COMMANDS.todoSet, {
    items: [
      { title: 'Read TASK.md and list the parser entry points', status: 'done' },
      { title: 'Port expressions to the new AST', status: 'done' },
      { title: 'Port statements to the new AST', status: 'in_progress' },
      { title: 'Update the golden files', status: 'pending' },
      { title: 'Run go test ./parser/...', status: 'pending' },
    ],
  });
  api.store.setState(st);
  if (st.goal?.status !== 'active') {
    await vscode.commands.executeCommand('agentdPanel.goal.resume');
  }
  await waitFor('five rows', () => api.todos.currentRows.length === 5);
  // An agent works three goal turns over the extension's own connection, so
  // the picture shows real turn and token counts.
  await api.client.execute(SERVER_COMMANDS.goalSetBudget, { turns: 20, tokens: 50_000, wallClockMs: 7_200_000 });
  const before = (await api.client.execute(SERVER_COMMANDS.state, {})).goal;
  ok(before, 'a goal');
  for (const tokens of [1480, 2210, 905]) {
    await agentTurn(api, tokens);
  }
  const turns = (before?.turnsUsed ?? 0) + 3;
  await waitFor(`${turns} turns in the view`, () => api.goal.row('turns')?.description === `${turns}/20 · ${20 - turns} left`);
  await waitFor('tokens in the view', () => api.store.state?.goal?.tokensUsed === (before?.tokensUsed ?? 0) + 4595);
  await vscode.commands.executeCommand('workbench.action.closeAuxiliaryBar');
  await vscode.commands.executeCommand('workbench.action.closePanel');
  await vscode.commands.executeCommand('workbench.view.extension.agentd');
  await screenshot({
    name: 'sidebar',
    sidebarWidth: 430,
    reveal: 'agentd',
    rows: ['Port the parser described in TASK.md', 'Done when', 'Turns', 'Elapsed', 'TASK.md', 'Port statements to the new AST', 'Run go test ./parser/...'],
    actions: ['Pause Goal', 'Cancel Goal…', 'Set Goal Budget…', 'Add Todo', 'Clear Todo List…'],
    absentActions: ['Resume Goal'],
    statusBar: `Goal active · ${turns}/20 turns`,
  });
});

test('the task file row opens the file; an edit on disk updates the row', async (api) => {
  const row = api.goal.row('taskFile');
  ok(row, 'task file row');
  await vscode.commands.executeCommand('agentdPanel.goal.openTaskFile', row);
  await waitFor('TASK.md in the editor', () => vscode.window.activeTextEditor?.document.uri.fsPath === path.join(WS, 'TASK.md'));
  await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  const sha = api.store.state?.goal?.taskFile?.sha256;
  fs.appendFileSync(path.join(WS, 'TASK.md'), '\nAlso keep the public API stable.\n');
  const editedAt = Date.now();
  await waitFor(
    'a new task file hash (agentd/taskFileChanged)',
    () => api.store.state?.goal?.taskFile?.sha256 && api.store.state.goal.taskFile.sha256 !== sha,
  );
  console.log(`@@e2e info task file change reached the view after ${Date.now() - editedAt} ms`);
  ok(/TASK\.md \(changed\)/.test(api.goal.row('taskFile')?.description ?? ''), `row: ${api.goal.row('taskFile')?.description}`);
});

test('a stalled goal shows a Stalled row and the status bar says so; a todo write clears it', async (api) => {
  if (api.store.state?.goal?.status !== 'active') {
    await vscode.commands.executeCommand('agentdPanel.goal.resume');
    await waitFor('active goal', async () => (await serverState()).goal?.status === 'active');
  }
  await api.client.execute(SERVER_COMMANDS.goalSetBudget, { turns: null });
  ok(!api.goal.row('stalled'), 'no Stalled row before');
  // The first turn takes up the earlier edits (progress); the next three
  // (stallTurns, 3 by default) change nothing.
  for (let i = 0; i < 4; i++) {
    await agentTurn(api, 10);
  }
  await waitFor('stalled in the daemon', async () => (await serverState()).goal?.stalled === true);
  await waitFor('the Stalled row', () => api.goal.row('stalled')?.label === 'Stalled');
  eq(api.goal.currentRows.map((r) => r.kind).indexOf('stalled'), api.goal.currentRows.map((r) => r.kind).indexOf('status') + 1, 'right after the status');
  ok(/^\$\(target\) Goal active \(stalled\) · /.test(api.statusBar.item.text), `status bar: ${api.statusBar.item.text}`);
  eq((api.statusBar.item.backgroundColor as vscode.ThemeColor | undefined)?.id, 'statusBarItem.warningBackground', 'status bar colour');
  const before = (await serverState()).todos.items;
  await setTodosAsAgent([...before, { title: 'Try a different approach', status: 'in_progress' }]);
  await waitFor('not stalled in the daemon', async () => (await serverState()).goal?.stalled === false);
  await waitFor('the Stalled row gone', () => !api.goal.row('stalled') && !/stalled/.test(api.statusBar.item.text));
  await setTodosAsAgent(before);
  await waitFor('the list back in the tree', () => JSON.stringify(api.todos.currentRows.map((r) => r.item)) === JSON.stringify(before));
});

test('the task file row shows its checkboxes; ticking one on disk updates it', async (api) => {
  fs.writeFileSync(path.join(WS, 'TASK.md'), '# Task\n\n- [x] Port expressions\n- [ ] Port statements\n  - [ ] Update the golden files\n');
  await waitFor('1/3 checked in the row', () => / · 1\/3 checked$/.test(api.goal.row('taskFile')?.description ?? ''));
  eq(api.store.state?.goal?.taskFile?.checkboxes, { checked: 1, total: 3 }, 'snapshot checkboxes');
  fs.writeFileSync(path.join(WS, 'TASK.md'), '# Task\n\n- [x] Port expressions\n- [X] Port statements\n  - [ ] Update the golden files\n');
  await waitFor('2/3 checked in the row', () => / · 2\/3 checked$/.test(api.goal.row('taskFile')?.description ?? ''));
  eq((await serverState()).goal?.taskFile?.checkboxes, { checked: 2, total: 3 }, 'daemon checkboxes');
});

test('budget rows and the status bar take the warning colour from 50 % and the error colour from 80 %', async (api) => {
  while ((api.store.state?.goal?.turnsUsed ?? 0) < 4) {
    await agentTurn(api, 10);
  }
  const used = (await serverState()).goal?.turnsUsed ?? 0;
  const colour = () => api.goal.row('turns')?.icon.color;
  const background = () => (api.statusBar.item.backgroundColor as vscode.ThemeColor | undefined)?.id;
  await api.client.execute(SERVER_COMMANDS.goalSetBudget, { turns: used * 4, tokens: null, wallClockMs: null });
  await waitFor('no colour at 25 %', () => api.store.state?.goal?.budget.turnBudget === used * 4 && colour() === undefined && background() === undefined);
  await api.client.execute(SERVER_COMMANDS.goalSetBudget, { turns: used * 2 });
  await waitFor('the warning colour at 50 %', () => colour() === 'list.warningForeground' && background() === 'statusBarItem.warningBackground');
  const near = Math.floor((used * 100) / 80); // used is at least 80 % of it, and below it (used >= 4)
  await api.client.execute(SERVER_COMMANDS.goalSetBudget, { turns: near });
  await waitFor('the error colour at 80 %', () => colour() === 'list.errorForeground' && background() === 'statusBarItem.errorBackground');
  eq(api.store.state?.goal?.status, 'active', 'still active below the limit');
  await api.client.execute(SERVER_COMMANDS.goalSetBudget, { turns: null });
  await waitFor('no colour without a budget', () => colour() === undefined && background() === undefined);
});

test('goal check: set it, run it from the view (running, then the result and its output), remove it', async (api, ui) => {
  const release = path.join(DIR, 'check-release');
  fs.rmSync(release, { force: true });
  const command = `echo "checking $AGENTD_GOAL_ID"; while [ ! -f '${release}' ]; do sleep 0.05; done; echo 'FAIL: parser_test.go:12'; exit 1`;
  ui.inputs.push(command);
  await vscode.commands.executeCommand('agentdPanel.goal.setCheck');
  await waitFor('the check in the daemon', async () => (await serverState()).goal?.check?.command === command);
  await waitFor('the Check row, not run yet', () => /^not run yet( · set by .+)?$/.test(api.goal.row('check')?.description ?? ''));
  await waitFor('context hasCheck', () => api.context['agentdPanel.hasCheck'] === true);

  const running = vscode.commands.executeCommand('agentdPanel.goal.runCheck');
  await waitFor('the Check row running', () => /^running…( · set by .+)?$/.test(api.goal.row('check')?.description ?? '') && api.goal.row('check')?.icon.id === 'sync~spin');
  eq(api.goal.row('check')?.contextValue, 'goal.check.running', 'context value while running');
  await waitFor('context hasCheck off while it runs', () => api.context['agentdPanel.hasCheck'] === false);
  fs.writeFileSync(release, '');
  await running;
  const row = await waitFor('the failed result in the row', () => {
    const r = api.goal.row('check');
    return r && /^failed: exit 1 after \d+s · \d\d:\d\d:\d\d( · set by .+)?$/.test(r.description) ? r : undefined;
  });
  const goalId = api.store.state?.goal?.goalId ?? '';
  ok(row.tooltip.includes(`Output (its end):\nchecking ${goalId}\nFAIL: parser_test.go:12`), `tooltip: ${row.tooltip}`);
  eq(row.icon.id, 'error', 'failed icon');
  ok(ui.of('warn').some((m) => m.startsWith('Goal check failed: exit 1 after')), `warnings: ${describe(ui.of('warn'))}`);
  const last = (await serverState()).goal?.check?.lastRun;
  eq([last?.exitCode, (await serverState()).goal?.status], [1, api.store.state?.goal?.status], 'the run is stored, the status unchanged');

  ui.inputs.push('test -d .');
  await vscode.commands.executeCommand('agentdPanel.goal.setCheck');
  await waitFor('the new check in the row', () => api.goal.row('check')?.label === 'Check: test -d .' && /^not run yet( · set by .+)?$/.test(api.goal.row('check')?.description ?? ''));
  await vscode.commands.executeCommand('agentdPanel.goal.runCheck');
  await waitFor('passed in the row', () => /^passed in \d+s · /.test(api.goal.row('check')?.description ?? ''));
  ok(ui.of('info').some((m) => /^Goal check passed in \d+s$/.test(m)), `infos: ${describe(ui.of('info'))}`);

  ui.inputs.push('');
  ui.confirms.push(true);
  await vscode.commands.executeCommand('agentdPanel.goal.setCheck');
  await waitFor('no check in the daemon', async () => !(await serverState()).goal?.check);
  await waitFor('no Check row', () => !api.goal.row('check'));
});

test('session picker switches the views to another session', async (api, ui) => {
  await setTodosAsAgent([{ title: 'Review the other branch', status: 'in_progress' }], 'review');
  await waitFor('two sessions known', () => api.store.sessions.length >= 2 && api.context['agentdPanel.multipleSessions'] === true);
  ui.picks.push((items) => items.find((i) => i.label === 'review'));
  await vscode.commands.executeCommand('agentdPanel.pickSession');
  await waitFor('the review session in the tree', () => api.store.session === 'review' && titles(api)[0] === 'Review the other branch');
  eq(api.store.state?.goal, null, 'no goal in the review session');
  await waitFor('status bar hidden', () => !api.statusBar.isVisible);
  // Edits go to the shown session.
  await vscode.commands.executeCommand('agentdPanel.todo.setDone', api.todos.currentRows[0]);
  await waitFor('done in session review', async () => (await serverState('review')).todos.items[0]?.status === 'done');
  ui.picks.push((items) => items.find((i) => i.label === 'default'));
  await vscode.commands.executeCommand('agentdPanel.pickSession');
  await waitFor('back to default', () => api.store.session === 'default' && api.todos.currentRows.length === 5 && api.statusBar.isVisible);
});

test('the Undo actions of the Todos and Goal views revert the newest change; a stale view gets a conflict and undoes nothing', async (api, ui) => {
  const before = api.todos.currentRows.map((r) => r.item);
  await setTodosAsAgent([{ title: 'An agent edit to undo', status: 'in_progress' }]);
  await waitFor('the agent edit in the tree', () => titles(api)[0] === 'An agent edit to undo');
  await vscode.commands.executeCommand('agentdPanel.todo.undo');
  await waitFor('the list before it in the daemon', async () => JSON.stringify((await serverState()).todos.items) === JSON.stringify(before));
  await waitFor('the list before it in the tree', () => JSON.stringify(api.todos.currentRows.map((r) => r.item)) === JSON.stringify(before));
  ok(
    ui.of('info').some((m) => /^Undid "Todo list written \(1 item\)" \(#\d+, by the agent\)\.$/.test(m)),
    `undo message: ${describe(ui.of('info'))}`,
  );

  if (api.store.state?.goal?.status !== 'active') {
    await vscode.commands.executeCommand('agentdPanel.goal.resume');
    await waitFor('active goal', () => api.store.state?.goal?.status === 'active');
  }
  await vscode.commands.executeCommand('agentdPanel.goal.pause');
  await waitFor('paused in the view', () => api.goal.row('status')?.label === 'Paused');
  await vscode.commands.executeCommand('agentdPanel.goal.undo');
  await waitFor('active again in the daemon', async () => (await serverState()).goal?.status === 'active');
  await waitFor('active again in the view', () => api.goal.row('status')?.label === 'Active');
  ok(ui.of('info').some((m) => /^Undid "Goal paused: paused by the user" \(#\d+, by you\)\.$/.test(m)), `undo message: ${describe(ui.of('info'))}`);

  // A pause from a shell; the view is set back to the state before it, as if
  // its notification had not arrived yet: the undo names that older revision
  // and is refused, and the view then shows the current state.
  const stale = api.store.state;
  await agentd('goal', 'pause', '--reason', 'from a shell');
  await waitFor('the shell pause in the view', () => api.store.state?.goal?.status === 'paused');
  api.store.state = stale;
  const warnings = ui.of('warn').length;
  await vscode.commands.executeCommand('agentdPanel.goal.undo');
  await waitFor('the conflict warning', () => ui.of('warn').length > warnings);
  const warning = ui.of('warn').at(-1) ?? '';
  ok(/^Nothing was undone: the goal changed since the view showed it\. .*goal\.pause .*newer than the revision \d+ you saw/.test(warning), `warning: ${warning}`);
  eq((await serverState()).goal?.terminalReason, 'from a shell', 'the shell pause stays');
  await waitFor('the view shows the current state', () => api.goal.row('status')?.label === 'Paused' && api.store.state?.revision === stale!.revision + 1);
  await vscode.commands.executeCommand('agentdPanel.goal.resume');
  await waitFor('active for the next tests', async () => (await serverState()).goal?.status === 'active');
});

test('the History view lists changes newest first, pages older ones, and shows a change before and after', async (api) => {
  await waitFor('the History view at the shown revision', () => api.history.currentRows[0]?.event.revision === api.store.state?.revision);
  const top = api.history.currentRows[0];
  eq(top.label, 'Goal resumed: resumed by the user', 'newest row');
  ok(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} · you$/.test(top.description), `description: ${top.description}`);
  const pause = api.history.currentRows.find((r) => r.label === 'Goal paused: from a shell');
  ok(pause, `the shell pause among ${describe(api.history.currentRows.map((r) => r.label))}`);
  await vscode.commands.executeCommand('agentdPanel.history.open', pause!.event);
  const diff = await waitFor('a diff editor', () => {
    const input = vscode.window.tabGroups.activeTabGroup.activeTab?.input;
    return input instanceof vscode.TabInputTextDiff ? input : undefined;
  });
  const beforeText = (await vscode.workspace.openTextDocument(diff.original)).getText();
  const afterText = (await vscode.workspace.openTextDocument(diff.modified)).getText();
  ok(/^Objective: .*\nStatus: Active\n/.test(beforeText), `before: ${beforeText}`);
  ok(/\nStatus: Paused\nReason: from a shell\n/.test(afterText), `after: ${afterText}`);
  await vscode.commands.executeCommand('workbench.action.closeAllEditors');

  // Enough changes for a second page.
  const items = api.store.state?.todos.items ?? [];
  for (let i = 0; i < 51; i++) {
    api.store.setState(await api.client.execute(SERVER_COMMANDS.todoSet, { items }));
  }
  await waitFor('the newest page', () => api.history.currentRows[0]?.event.revision === api.store.state?.revision && api.history.hasOlder);
  eq(api.history.currentRows.length, 50, 'one page');
  await vscode.commands.executeCommand('agentdPanel.history.older');
  await waitFor('the second page', () => api.history.currentRows.length > 50);
  const seqs = api.history.currentRows.map((r) => r.seq);
  ok(seqs.every((s, i) => i === 0 || s < seqs[i - 1]), `newest first: ${describe(seqs)}`);
});

test('after a server restart the views still follow live changes', async (api) => {
  await vscode.commands.executeCommand('agentdPanel.restartServer');
  await waitFor('running again', () => api.client.status === 'running' && api.store.state);
  await setTodosAsAgent([{ title: 'Changed after the restart', status: 'pending' }]);
  await waitFor('the change in the tree', () => titles(api)[0] === 'Changed after the restart');
});

/** Pids of the shared daemons serving our private runtime folder. */
function daemonPids(): number[] {
  const pids: number[] = [];
  for (const p of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(p)) {
      continue;
    }
    try {
      const cmd = fs.readFileSync(`/proc/${p}/cmdline`, 'utf8').split('\0');
      if (cmd.includes('serve') && cmd.some((a) => a.startsWith('--listen=unix:') && a.includes(DIR))) {
        pids.push(Number(p));
      }
    } catch {
      // gone
    }
  }
  return pids;
}

test('the shared daemon dies: the client restarts it and re-reads the state', async (api) => {
  const pids = daemonPids();
  eq(pids.length, 1, 'one shared daemon for the test folder');
  let starts = 0;
  const sub = api.client.onDidStart(() => starts++);
  try {
    process.kill(pids[0], 'SIGKILL');
    await waitFor('a new connection', () => starts > 0 && api.client.status === 'running');
    const server = await serverState();
    await waitFor(
      'the view to match the restarted daemon',
      () => api.store.state?.revision === server.revision && api.store.state?.goal?.status === server.goal?.status,
    );
    ok(!daemonPids().includes(pids[0]), 'a new daemon');
    if (server.goal?.terminalReason) {
      eq(api.goal.row('status')?.description, server.goal.terminalReason.split('\n')[0].slice(0, 120), 'reason shown in the status row');
    }
    console.log(`@@e2e info after the daemon restart the goal is ${server.goal?.status}: ${server.goal?.terminalReason ?? ''}`);
    await setTodosAsAgent([{ title: 'Written after the daemon restart', status: 'pending' }]);
    await waitFor('the change in the tree', () => titles(api)[0] === 'Written after the daemon restart');
  } finally {
    sub.dispose();
  }
});

test('create goal (input boxes, replace confirmation) and cancel it (confirmation)', async (api, ui) => {
  ui.inputs.push('Ship version 2', 'the release is tagged');
  ui.confirms.push(true);
  await vscode.commands.executeCommand('agentdPanel.goal.create');
  await waitFor('the new goal in the daemon', async () => (await serverState()).goal?.objective === 'Ship version 2');
  await waitFor('the new goal in the view', () => api.goal.row('objective')?.label === 'Ship version 2');
  eq(api.goal.row('criterion')?.description, 'the release is tagged', 'criterion');
  ok(ui.of('confirm').some((m) => /Replace the current goal/.test(m)), 'replace confirmation asked');

  ui.confirms.push(true);
  await vscode.commands.executeCommand('agentdPanel.goal.cancel');
  await waitFor('no goal in the daemon', async () => (await serverState()).goal === null);
  await waitFor('empty goal view, hidden status bar', () => api.goal.currentRows.length === 0 && !api.statusBar.isVisible);
  eq(api.context['agentdPanel.hasGoal'], false, 'context hasGoal');
});

test('Up next: queue goals, reorder, remove, toggle auto-advance; a completion advances to the first', async (api, ui) => {
  const queued = (): string[] => api.queue.currentRows.map((r) => r.label);
  await agentd('goal', 'create', 'Finish the parser', '--replace', '--require-todos=false');
  await waitFor('the goal in the view', () => api.goal.row('objective')?.label === 'Finish the parser');

  ui.inputs.push('Document the parser', 'docs build', 'make docs');
  await vscode.commands.executeCommand('agentdPanel.queue.add');
  ui.inputs.push('Tag the release', '', '');
  await vscode.commands.executeCommand('agentdPanel.queue.add');
  await agentd('goal', 'queue', 'add', 'Announce it');
  await waitFor('three queued goals in Up next', () => JSON.stringify(queued()) === JSON.stringify(['Document the parser', 'Tag the release', 'Announce it']));
  const first = api.queue.currentRows[0];
  eq(first.description, 'done when: docs build · check: make docs', 'criterion and check of the first row');
  eq((await serverState()).queue.items[0].check, 'make docs', 'the check reached the daemon');
  eq(api.queue.view.description, '3 queued · auto-advance on', 'view description');

  await vscode.commands.executeCommand('agentdPanel.queue.moveUp', api.queue.currentRows[2]);
  await waitFor('Announce it moved up', () => JSON.stringify(queued()) === JSON.stringify(['Document the parser', 'Announce it', 'Tag the release']));
  await vscode.commands.executeCommand('agentdPanel.queue.moveDown', api.queue.currentRows[0]);
  await waitFor('Document the parser moved down', () => JSON.stringify(queued()) === JSON.stringify(['Announce it', 'Document the parser', 'Tag the release']));
  eq(
    (await serverState()).queue.items.map((i) => i.objective),
    ['Announce it', 'Document the parser', 'Tag the release'],
    'the daemon has the new order',
  );
  await vscode.commands.executeCommand('agentdPanel.queue.remove', api.queue.currentRows[0]);
  await waitFor('Announce it removed', () => JSON.stringify(queued()) === JSON.stringify(['Document the parser', 'Tag the release']));

  await vscode.commands.executeCommand('agentdPanel.queue.autoAdvanceOff');
  await waitFor('auto-advance off in the daemon and the context', async () => (await serverState()).queue.autoAdvance === false && api.context['agentdPanel.autoAdvance'] === false);
  eq(api.queue.view.description, '2 queued · auto-advance off', 'view description with auto-advance off');
  await vscode.commands.executeCommand('agentdPanel.queue.autoAdvanceOn');
  await waitFor('auto-advance on again', () => api.context['agentdPanel.autoAdvance'] === true);

  // The model completes the goal: the first queued goal becomes the goal.
  await agentd('tool', 'UpdateGoal', JSON.stringify({ status: 'complete' }));
  await waitFor('the queued goal in the Goal view', () => api.goal.row('objective')?.label === 'Document the parser' && api.store.state?.goal?.status === 'active');
  eq(api.goal.row('criterion')?.description, 'docs build', 'criterion of the advanced goal');
  await waitFor('Up next without it', () => JSON.stringify(queued()) === JSON.stringify(['Tag the release']));

  // Leave no goal and an empty queue for the tests after this one.
  await vscode.commands.executeCommand('agentdPanel.queue.remove', api.queue.currentRows[0]);
  await agentd('goal', 'cancel');
  await waitFor('nothing queued, no goal', () => api.queue.currentRows.length === 0 && api.goal.currentRows.length === 0);
});

test('a missing binary gives one error with the install command, and no restart loop', async (api, ui) => {
  const cfg = vscode.workspace.getConfiguration('agentd');
  const errorsBefore = ui.of('error').length;
  const saved = cfg.inspect<string>('path')?.workspaceValue;
  await cfg.update('path', path.join(DIR, 'no-such-agentd'), vscode.ConfigurationTarget.Workspace);
  await waitFor('status missing', () => api.client.status === 'missing');
  await waitFor('the error message', () => ui.of('error').length > errorsBefore);
  const errors = ui.of('error').slice(errorsBefore);
  eq(errors.length, 1, 'one error');
  ok(errors[0].includes('go install github.com/agentd/agentd/cmd/agentd@latest'), `install command in: ${errors[0]}`);
  eq(api.context['agentdPanel.serverMissing'], true, 'setup view shown');
  await api.store.refresh();
  await api.client.start();
  eq(ui.of('error').length - errorsBefore, 1, 'still one error after another start attempt');
  await cfg.update('path', saved, vscode.ConfigurationTarget.Workspace);
  await waitFor('running again', () => api.client.status === 'running' && api.store.state);
  eq(api.context['agentdPanel.serverMissing'], false, 'setup view hidden');
});

test('a binary that exits at once gives one error and is not restarted in a loop', async (api, ui) => {
  const cfg = vscode.workspace.getConfiguration('agentd');
  const saved = cfg.inspect<string>('path')?.workspaceValue;
  const starts = path.join(DIR, 'broken-starts');
  const broken = path.join(DIR, 'broken-agentd');
  fs.writeFileSync(broken, `#!/bin/sh\necho started >> '${starts}'\necho 'broken agentd for the test' >&2\nexit 3\n`, { mode: 0o755 });
  const errorsBefore = ui.of('error').length;
  try {
    await cfg.update('path', broken, vscode.ConfigurationTarget.Workspace);
    await waitFor('status failed', () => api.client.status === 'failed');
    await waitFor('the error message', () => ui.of('error').length > errorsBefore);
    const errors = ui.of('error').slice(errorsBefore);
    eq(errors.length, 1, 'one error');
    ok(errors[0].includes('failed to start'), `error: ${errors[0]}`);
    eq(fs.readFileSync(starts, 'utf8').trim().split('\n').length, 1, 'started once');
    eq(api.context['agentdPanel.connection'], 'failed', 'failed welcome shown');
  } finally {
    await cfg.update('path', saved, vscode.ConfigurationTarget.Workspace);
  }
  await waitFor('running again', () => api.client.status === 'running' && api.store.state);
});

// Team run: the seeded state is in etcd (docs/team.md "Faults").
teamTest('team folder: with etcd stopped the status bar and the three views say stale; with etcd back the mark goes and a write shows up', async (api) => {
  await waitFor('seeded todos in the tree', () => JSON.stringify(titles(api)) === JSON.stringify(SEEDED));
  await waitFor('the status bar shown for the seeded goal', () => api.statusBar.isVisible);
  ok(!api.store.stale, 'not stale while etcd answers');
  ok(!api.statusBar.item.text.includes(STALE_LABEL), `status bar: ${api.statusBar.item.text}`);
  ok(!(api.todos.view.description ?? '').includes(STALE_LABEL), `Todos description: ${api.todos.view.description}`);

  await etcd('stop');
  await waitFor('the store marked stale', () => api.store.stale);
  await waitFor('the status bar to say stale', () => api.statusBar.item.text.endsWith(` · ${STALE_LABEL}`));
  await waitFor('the Todos view description to say stale', () => api.todos.view.description?.endsWith(STALE_LABEL));
  eq(api.goal.view.description, STALE_LABEL, 'Goal view description');
  ok(api.queue.view.description?.endsWith(` · ${STALE_LABEL}`), `Up next description: ${api.queue.view.description}`);
  eq(titles(api), SEEDED, 'the last state stays in the tree');
  await vscode.commands.executeCommand('workbench.view.extension.agentd');
  await screenshot({ name: 'team-stale', reveal: 'agentd', rows: [SEEDED[0]], statusBar: `· ${STALE_LABEL}` });

  await etcd('start');
  await waitFor(
    'the stale mark to go from the store, the status bar and both views',
    () =>
      !api.store.stale &&
      !api.statusBar.item.text.includes(STALE_LABEL) &&
      !(api.todos.view.description ?? '').includes(STALE_LABEL) &&
      !(api.queue.view.description ?? '').includes(STALE_LABEL) &&
      api.goal.view.description === undefined,
  );
  await setTodosAsAgent([
    { title: 'Read the task file', status: 'done' },
    { title: 'Port the parser to the new AST', status: 'done' },
    { title: 'Written after etcd came back', status: 'pending' },
  ]);
  await waitFor('the write in the tree', () => titles(api).includes('Written after etcd came back'));
  eq(statuses(api), ['done', 'done', 'pending'], 'statuses after the write');
});

// ---------------------------------------------------------------------------

/** Entry point called by VS Code's test runner (the test-electron contract). */
export async function run(): Promise<void> {
  console.log(`@@e2e info extension host PATH has agentd dir: ${(process.env.PATH ?? '').includes(path.dirname(BIN))}`);
  const ext = vscode.extensions.getExtension<PanelApi>('agentd.agentd-vscode');
  if (!ext) {
    console.log('@@e2e fail extension agentd.agentd-vscode not found');
    throw new Error('extension not found');
  }
  console.log(`@@e2e info agentd.path setting: ${vscode.workspace.getConfiguration('agentd').get('path')}`);
  const api = await ext.activate();
  const ui = new ScriptedUi();
  api.ui.target = ui;
  let failures = 0;
  const only = process.env.E2E_ONLY ? new RegExp(process.env.E2E_ONLY) : undefined;
  let connected = true;
  for (const t of tests) {
    if (t !== tests[0] && (t.team === true) !== TEAM) {
      continue;
    }
    if (only && !only.test(t.name) && t !== tests[0]) {
      continue;
    }
    if (!connected) {
      failures++;
      console.log(`@@e2e fail ${t.name}: not run, the extension never connected to agentd`);
      continue;
    }
    const started = Date.now();
    try {
      await t.fn(api, ui);
      console.log(`@@e2e pass ${t.name} (${Date.now() - started} ms)`);
    } catch (err) {
      failures++;
      const why = (err instanceof Error ? err.message : String(err)).replace(/\s*\n\s*/g, ' | ');
      console.log(`@@e2e fail ${t.name}: ${why.length > 600 ? `${why.slice(0, 600)}…` : why}`);
      if (t === tests[0]) {
        connected = false;
      }
    }
  }
  if (failures > 0) {
    throw new Error(`${failures} test(s) failed`);
  }
}
