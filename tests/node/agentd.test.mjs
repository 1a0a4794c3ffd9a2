// End-to-end test of agentd with vscode-jsonrpc, the JSON-RPC library under
// VS Code's language client: a real third-party client speaks to the real
// binary over stdio. AGENTD_BIN names the binary (built by .ci/run).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import rpc from 'vscode-jsonrpc/node';

const bin = process.env.AGENTD_BIN;

function start(t) {
  assert.ok(bin, 'AGENTD_BIN must name the agentd binary');
  const home = mkdtempSync(join(tmpdir(), 'agentd-node-'));
  const folder = join(home, 'my project');
  const child = spawn(bin, ['--state-dir', join(home, 'state')], { stdio: ['pipe', 'pipe', 'inherit'] });
  const conn = rpc.createMessageConnection(
    new rpc.StreamMessageReader(child.stdout),
    new rpc.StreamMessageWriter(child.stdin),
  );
  const notes = [];
  const waiters = [];
  for (const method of ['agentd/todoChanged', 'agentd/goalChanged']) {
    conn.onNotification(method, (params) => {
      notes.push({ method, params });
      for (const w of waiters.splice(0)) w();
    });
  }
  conn.listen();
  t.after(() => {
    conn.dispose();
    child.kill();
    rmSync(home, { recursive: true, force: true });
  });
  // next resolves with the first notification of method matching pred.
  const next = (method, pred) => new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no ${method} within 10s`)), 10000);
    const check = () => {
      const hit = notes.find((n) => n.method === method && pred(n.params));
      if (hit) { clearTimeout(timer); resolve(hit.params); } else waiters.push(check);
    };
    check();
  });
  return { conn, child, folder, next };
}

test('vscode-jsonrpc client: initialize, TodoList write, notification, state, shutdown', async (t) => {
  const { conn, child, next } = start(t);
  const folder = mkdtempSync(join(tmpdir(), 'agentd ws é-'));
  t.after(() => rmSync(folder, { recursive: true, force: true }));
  const uri = pathToFileURL(folder).href;
  const init = await conn.sendRequest('initialize', {
    processId: process.pid, rootUri: null, capabilities: {},
    workspaceFolders: [{ uri, name: 'ws' }],
  });
  assert.equal(init.serverInfo.name, 'agentd');
  assert.ok(init.capabilities.executeCommandProvider.commands.includes('agentd.callTool'));
  await conn.sendNotification('initialized', {});

  const res = await conn.sendRequest('workspace/executeCommand', {
    command: 'agentd.callTool',
    arguments: [{ name: 'TodoList', input: { todos: [{ title: 'from vscode-jsonrpc', status: 'in_progress' }] } }],
  });
  assert.equal(res.isError, false);
  assert.match(res.output, /\[in_progress\] from vscode-jsonrpc/);

  const changed = await next('agentd/todoChanged', (p) => p.revision === 1);
  assert.equal(changed.workspace, uri);
  assert.equal(changed.actor, 'model');
  assert.deepEqual(changed.items, [{ title: 'from vscode-jsonrpc', status: 'in_progress' }]);

  const state = await conn.sendRequest('workspace/executeCommand', { command: 'agentd.state', arguments: [] });
  assert.equal(state.revision, 1);
  assert.equal(state.todos.revision, 1);

  await assert.rejects(
    conn.sendRequest('workspace/executeCommand', { command: 'agentd.todo.set', arguments: [{ items: [], expectedRevision: 0 }] }),
    (err) => err.code === -32803 && err.data.code === 'todo.conflict' && err.data.state.revision === 1,
  );

  const exited = new Promise((resolve) => child.on('exit', resolve));
  await conn.sendRequest('shutdown');
  await conn.sendNotification('exit');
  assert.equal(await exited, 0);
});
