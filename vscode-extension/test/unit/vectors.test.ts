// The vectors the Go server, this extension and the Neovim plugin share:
// formatting (goal/testdata/format.json; Go is the reference) and how the
// store takes states and notifications (commands/testdata/reconcile.json).
import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';
import format from '../../../goal/testdata/format.json';
import reconcileVectors from '../../../commands/testdata/reconcile.json';
import { emptyBudget, formatElapsed, formatProgress, formatTokens, reconcile, takesState } from '../../src/model';
import { NOTIFICATIONS, type State } from '../../src/protocol.gen';

describe('format vectors', () => {
  it('are there', () => {
    assert.ok(format.tokens.length > 0 && format.elapsed.length > 0 && format.progress.length > 0);
  });
  for (const c of format.tokens) {
    it(`formatTokens(${c.n}) = ${c.want}`, () => assert.equal(formatTokens(c.n), c.want));
  }
  for (const c of format.elapsed) {
    it(`formatElapsed(${c.ms}) = ${c.want}`, () => assert.equal(formatElapsed(c.ms), c.want));
  }
  for (const c of format.progress) {
    it(`formatProgress = ${c.want}`, () => assert.equal(formatProgress({ ...c.goal, budget: { ...emptyBudget(), ...c.goal.budget } }), c.want));
  }
});

function shownState(revision: number | null, session: string): State | undefined {
  if (revision === null) {
    return undefined;
  }
  return { workspace: 'file:///w', session, revision, todos: { items: [], revision }, goal: null, queue: { items: [], autoAdvance: true } };
}

describe('reconcile vectors', () => {
  // The extension drops stale and foreign notifications alike and re-reads on a gap.
  const action = { apply: 'apply', stale: 'ignore', ignore: 'ignore', gap: 'refresh' } as const;
  it('are there', () => {
    assert.ok(reconcileVectors.notifications.length > 0 && reconcileVectors.states.length > 0);
  });
  for (const c of reconcileVectors.notifications) {
    it(`notification: ${c.name}`, () => {
      const params = { workspace: 'file:///w', items: [], ...c.params } as never;
      const r = reconcile(shownState(c.shown, c.session), c.session, NOTIFICATIONS.todoChanged, params);
      assert.equal(r.action, action[c.want as keyof typeof action]);
    });
  }
  for (const c of reconcileVectors.states) {
    it(`state: ${c.name}`, () => {
      const incoming = shownState(c.incoming, 'default') as State;
      assert.equal(takesState(shownState(c.shown, 'default'), 'default', incoming), c.want);
    });
  }
});
