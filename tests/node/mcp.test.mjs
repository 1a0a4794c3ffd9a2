// End-to-end test of `agentd mcp` with @modelcontextprotocol/sdk's Client,
// the MCP stack Claude Code, Gemini CLI and VS Code use, against the real
// binary over stdio. AGENTD_BIN names the binary (tests/run.sh builds it).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';

const bin = process.env.AGENTD_BIN;

test('MCP SDK client: tools, refusal, resources with updates, goal prompt', async (t) => {
  assert.ok(bin, 'AGENTD_BIN must name the agentd binary');
  const home = mkdtempSync(join(tmpdir(), 'agentd-node-mcp-'));
  const folder = join(home, 'my project');
  mkdirSync(folder);
  mkdirSync(join(home, 'run'), { mode: 0o700 });
  const transport = new StdioClientTransport({
    command: bin,
    args: ['mcp', '--remote=off', '--workspace', folder, '--state-dir', join(home, 'state')],
    env: { ...process.env, XDG_RUNTIME_DIR: join(home, 'run') },
    stderr: 'inherit',
  });
  const client = new Client({ name: 'agentd-node-e2e', version: '1.0.0' });
  const updates = [];
  const waiters = [];
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
    updates.push(n.params.uri);
    for (const w of waiters.splice(0)) w();
  });
  // nextUpdate resolves at the first resources/updated of uri after the first `after`.
  const nextUpdate = (uri, after) => new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no resources/updated of ${uri} within 10s (got ${updates})`)), 10000);
    const check = () => {
      if (updates.slice(after).includes(uri)) { clearTimeout(timer); resolve(); } else waiters.push(check);
    };
    check();
  });
  await client.connect(transport);
  t.after(async () => {
    await client.close();
    rmSync(home, { recursive: true, force: true });
  });

  assert.equal(client.getServerVersion().name, 'agentd');
  assert.match(client.getInstructions(), /TodoList/);
  const { tools } = await client.listTools();
  assert.deepEqual(tools.map((tl) => tl.name).sort(), ['CreateGoal', 'GetGoal', 'SetGoalBudget', 'TodoList', 'UpdateGoal']);
  const getGoal = tools.find((tl) => tl.name === 'GetGoal');
  assert.equal(getGoal.annotations?.readOnlyHint, true);
  assert.equal(tools.find((tl) => tl.name === 'TodoList').inputSchema.additionalProperties, false);

  await client.subscribeResource({ uri: 'agentd://session/todos.md' });
  const before = updates.length;
  const wrote = await client.callTool({ name: 'TodoList', arguments: { todos: [{ title: 'from node', status: 'in_progress' }] } });
  assert.ok(!wrote.isError, JSON.stringify(wrote));
  assert.match(wrote.content[0].text, /\[in_progress\] from node/);
  await nextUpdate('agentd://session/todos.md', before);
  const md = await client.readResource({ uri: 'agentd://session/todos.md' });
  assert.match(md.contents[0].text, /- \[ \] from node \(in progress\)/);
  const state = JSON.parse((await client.readResource({ uri: 'agentd://session/state.json' })).contents[0].text);
  assert.equal(state.todos.items[0].title, 'from node');

  const refused = await client.callTool({ name: 'TodoList', arguments: { todos: [{ title: 'x', status: 'finished' }] } });
  assert.equal(refused.isError, true);
  assert.match(refused.content[0].text, /finished/);

  const prompt = await client.getPrompt({ name: 'goal', arguments: { objective: 'ship it', criterion: 'tests pass' } });
  assert.equal(prompt.messages[0].role, 'user');
  assert.match(prompt.messages[0].content.text, /ship it/);
  const goal = await client.callTool({ name: 'GetGoal', arguments: {} });
  assert.match(goal.content[0].text, /"objective": "ship it"/);
});
