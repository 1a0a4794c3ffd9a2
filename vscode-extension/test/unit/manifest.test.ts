// Checks that package.json and the command registry (src/commandIds.ts) agree,
// that no extension id can clash with a server command id, and that the when
// clauses gating goal actions on the goal status offer each action for exactly
// the statuses the server accepts it in (GOAL_ACTION_STATUSES, generated from goal).
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { COMMANDS } from '../../src/commandIds';
import { MCP_PROVIDER_ID } from '../../src/mcp';
import { GOAL_ACTION_STATUSES, GOAL_STATUSES, GoalAction, GoalStatus, SERVER_COMMANDS } from '../../src/protocol.gen';

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

/** The extension command of each goal action whose menu entries are gated on the goal status. */
const GATED: Partial<Record<string, GoalAction>> = {
  [COMMANDS.goalPause]: 'pause',
  [COMMANDS.goalResume]: 'resume',
  [COMMANDS.goalSetBudget]: 'setBudget',
  [COMMANDS.goalWait]: 'wait',
};

const STATUS_KEY = 'agentdPanel.goalStatus';

/**
 * The goal statuses for which a when clause's terms on agentdPanel.goalStatus
 * all hold (every other term taken as true), or undefined when it has none.
 * Knows the forms `== s`, `!= s` and `=~ /^(a|b)$/`; throws on any other, and
 * on a status that is not in GOAL_STATUSES.
 */
function statusesOf(when: string): GoalStatus[] | undefined {
  const terms = when.split('&&').map((t) => t.trim()).filter((t) => t.includes(STATUS_KEY));
  if (terms.length === 0) {
    return undefined;
  }
  const known = new Set<string>(GOAL_STATUSES);
  const tests = terms.map((term) => {
    const m = /^agentdPanel\.goalStatus\s*(==|!=|=~)\s*(.+)$/.exec(term);
    assert.ok(m, `${when}: cannot read the term ${term}`);
    const [, op, arg] = m;
    if (op === '=~') {
      const re = /^\/\^\(?([\w|]+)\)?\$\/$/.exec(arg);
      assert.ok(re, `${when}: the regex ${arg} is not of the form /^(a|b)$/`);
      const names = re[1].split('|');
      for (const n of names) {
        assert.ok(known.has(n), `${when}: ${n} is not a goal status (GOAL_STATUSES, generated from goal.Statuses)`);
      }
      return (s: string) => names.includes(s);
    }
    assert.ok(known.has(arg), `${when}: ${arg} is not a goal status (GOAL_STATUSES, generated from goal.Statuses)`);
    return op === '==' ? (s: string) => s === arg : (s: string) => s !== arg;
  });
  return GOAL_STATUSES.filter((s) => tests.every((t) => t(s)));
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

  it('goal actions are offered for exactly the statuses the server accepts them in', () => {
    const gated = new Set<string>();
    for (const [menu, entries] of Object.entries(pkg.contributes.menus)) {
      for (const e of entries) {
        const statuses = statusesOf(e.when ?? '');
        const action = GATED[e.command];
        if (statuses === undefined) {
          assert.ok(!action, `${menu}: ${e.command} is offered whatever the goal status; gate it on ${STATUS_KEY}`);
          continue;
        }
        assert.ok(action, `${menu}: ${e.command} is gated on the goal status but is no action of GOAL_ACTION_STATUSES`);
        gated.add(e.command);
        assert.deepEqual(
          [...statuses].sort(),
          [...GOAL_ACTION_STATUSES[action]].sort(),
          `${menu}: the when clause of ${e.command} (${e.when}) must hold for exactly GOAL_ACTION_STATUSES.${action} (goal/snapshot.go)`,
        );
      }
    }
    assert.deepEqual([...gated].sort(), Object.keys(GATED).sort(), 'every gated command has a gated menu entry');
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
