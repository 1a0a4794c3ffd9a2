// Checks that package.json and the command registry (src/commandIds.ts) agree,
// and that no extension id can clash with a server command id.
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { COMMANDS } from '../../src/commandIds';
import { MCP_PROVIDER_ID } from '../../src/mcp';
import { SERVER_COMMANDS } from '../../src/protocol.gen';

interface Manifest {
  engines: { vscode: string };
  devDependencies: Record<string, string>;
  contributes: {
    mcpServerDefinitionProviders: { id: string; label: string }[];
    commands: { command: string; title: string }[];
    views: Record<string, { id: string; when?: string }[]>;
    viewsWelcome: { view: string; contents: string }[];
    viewsContainers: { activitybar: { id: string; icon: string }[] };
    menus: Record<string, { command: string; when?: string }[]>;
    configuration: { properties: Record<string, { description?: string; markdownDescription?: string }> };
  };
}

const root = path.resolve(__dirname, '..', '..', '..');
const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as Manifest;
const declared = Object.values(COMMANDS).sort();

describe('package.json', () => {
  it('contributes exactly the registered commands', () => {
    assert.deepEqual(pkg.contributes.commands.map((c) => c.command).sort(), declared);
  });

  it('no extension command id is a server id or in the agentd. namespace', () => {
    const server = new Set<string>(Object.values(SERVER_COMMANDS));
    for (const id of declared) {
      assert.ok(!server.has(id), id);
      assert.ok(id.startsWith('agentdPanel.'), `${id} must use the agentdPanel. prefix`);
    }
  });

  it('menus and welcome links only name known commands and views', () => {
    const known = new Set<string>([...declared, 'workbench.action.files.openFolder']);
    const views = new Set(Object.values(pkg.contributes.views).flat().map((v) => v.id));
    for (const [menu, entries] of Object.entries(pkg.contributes.menus)) {
      for (const e of entries) {
        assert.ok(known.has(e.command), `${menu}: unknown command ${e.command}`);
      }
    }
    for (const w of pkg.contributes.viewsWelcome) {
      assert.ok(views.has(w.view), `welcome for unknown view ${w.view}`);
      for (const m of w.contents.matchAll(/\(command:([^)]+)\)/g)) {
        assert.ok(known.has(m[1]), `welcome links unknown command ${m[1]}`);
      }
    }
  });

  it('one activity-bar container with an existing svg icon; views have when clauses', () => {
    const containers = pkg.contributes.viewsContainers.activitybar;
    assert.equal(containers.length, 1);
    assert.ok(fs.existsSync(path.join(root, containers[0].icon)));
    for (const v of pkg.contributes.views[containers[0].id]) {
      assert.ok(v.when, `view ${v.id} has a when clause`);
    }
  });

  it('declares the MCP server definition provider it registers, on a VS Code that has the API', () => {
    assert.deepEqual(pkg.contributes.mcpServerDefinitionProviders, [{ id: MCP_PROVIDER_ID, label: 'agentd' }]);
    const [major, minor] = pkg.engines.vscode.replace(/^\^/, '').split('.').map(Number);
    assert.ok(major > 1 || minor >= 101, `engines.vscode ${pkg.engines.vscode}: the MCP provider API needs 1.101`);
    assert.equal(pkg.devDependencies['@types/vscode'], pkg.engines.vscode.replace(/^\^/, ''), '@types/vscode matches engines.vscode');
  });

  it('every setting has a description', () => {
    for (const [key, p] of Object.entries(pkg.contributes.configuration.properties)) {
      assert.ok(p.description || p.markdownDescription, key);
    }
    assert.deepEqual(Object.keys(pkg.contributes.configuration.properties).sort(), [
      'agentd.path',
      'agentd.remote',
      'agentd.session',
      'agentd.trace.server',
    ]);
  });
});
