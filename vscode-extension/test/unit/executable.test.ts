// Unit tests of findExecutable (src/executable.ts), run with `node --test`.
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import { bundledPath, chooseAgentd, chooseRemote, findExecutable, setupArgs } from '../../src/executable';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'agentd-exe-'));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

function file(rel: string, mode: number): string {
  const p = path.join(tmp, rel);
  fs.mkdirSync(path.dirname(p), { recursive: true });
  fs.writeFileSync(p, '#!/bin/sh\n');
  fs.chmodSync(p, mode);
  return p;
}

const notExec = file('a/agentd', 0o644);
fs.mkdirSync(path.join(tmp, 'b', 'agentd'), { recursive: true });
const good = file('c/agentd', 0o755);
const PATH = [path.join(tmp, 'missing'), path.join(tmp, 'a'), path.join(tmp, 'b'), '', path.join(tmp, 'c')].join(path.delimiter);

describe('findExecutable', () => {
  it('looks a bare name up on PATH, skipping non-executable files and folders', () => {
    assert.equal(findExecutable('agentd', PATH, '/'), good);
  });
  it('takes a path relative to cwd', () => {
    assert.equal(findExecutable('c/agentd', undefined, tmp), good);
    assert.equal(findExecutable('./c/agentd', '', tmp), good);
  });
  it('takes an absolute path as is', () => {
    assert.equal(findExecutable(good, '', '/'), good);
    assert.equal(findExecutable(notExec, '', '/'), undefined);
  });
  it('expands ~/', () => {
    const home = process.env.HOME;
    process.env.HOME = tmp;
    try {
      assert.equal(findExecutable('~/c/agentd', '', '/'), good);
    } finally {
      process.env.HOME = home;
    }
  });
  it('undefined when missing', () => {
    assert.equal(findExecutable('agentd', path.join(tmp, 'a'), '/'), undefined);
    assert.equal(findExecutable('no-such-agentd', PATH, '/'), undefined);
    assert.equal(findExecutable('agentd', undefined, '/'), undefined);
  });
});

describe('the bundled agentd', () => {
  it('is bin/agentd in the extension, bin/agentd.exe on Windows', () => {
    assert.equal(bundledPath('/ext', 'linux'), path.join('/ext', 'bin', 'agentd'));
    assert.equal(bundledPath('/ext', 'darwin'), path.join('/ext', 'bin', 'agentd'));
    assert.equal(bundledPath('/ext', 'win32'), path.join('/ext', 'bin', 'agentd.exe'));
  });
  it('runs unless agentd.path is set; without either, agentd on PATH', () => {
    assert.equal(chooseAgentd(undefined, '/ext/bin/agentd'), '/ext/bin/agentd');
    assert.equal(chooseAgentd('  ', '/ext/bin/agentd'), '/ext/bin/agentd');
    assert.equal(chooseAgentd('~/go/bin/agentd', '/ext/bin/agentd'), '~/go/bin/agentd');
    assert.equal(chooseAgentd(undefined, undefined), 'agentd');
  });
  it('is what agentd setup wires: --user names it by its path', () => {
    assert.deepEqual(setupArgs('claude', true), ['setup', 'claude', '--user']);
    assert.deepEqual(setupArgs('codex', false), ['setup', 'codex']);
  });
});

describe('agentd.remote as run', () => {
  it('is the setting, else auto, on every system (Windows has the shared daemon too)', () => {
    assert.equal(chooseRemote(undefined), 'auto');
    assert.equal(chooseRemote('auto'), 'auto');
    assert.equal(chooseRemote('off'), 'off');
  });
});
