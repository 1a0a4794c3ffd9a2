/**
 * The extension's own command ids, declared once. package.json's
 * `contributes.commands` must list exactly these (a unit test checks it).
 * They use the `agentdPanel.` prefix: the language client registers the
 * server's `agentd.*` command ids as editor commands, and a clash would fail
 * activation. No `vscode` import: unit-tested in plain Node.
 */
export const COMMANDS = {
  todoAdd: 'agentdPanel.todo.add',
  todoClear: 'agentdPanel.todo.clear',
  todoSetPending: 'agentdPanel.todo.setPending',
  todoSetInProgress: 'agentdPanel.todo.setInProgress',
  todoSetDone: 'agentdPanel.todo.setDone',
  todoRename: 'agentdPanel.todo.rename',
  todoDelete: 'agentdPanel.todo.delete',
  goalCreate: 'agentdPanel.goal.create',
  goalPause: 'agentdPanel.goal.pause',
  goalResume: 'agentdPanel.goal.resume',
  goalCancel: 'agentdPanel.goal.cancel',
  goalSetBudget: 'agentdPanel.goal.setBudget',
  goalWait: 'agentdPanel.goal.wait',
  goalOpenTaskFile: 'agentdPanel.goal.openTaskFile',
  goalSetCheck: 'agentdPanel.goal.setCheck',
  goalRunCheck: 'agentdPanel.goal.runCheck',
  goalApproveCheck: 'agentdPanel.goal.approveCheck',
  teamAccept: 'agentdPanel.team.accept',
  queueAdd: 'agentdPanel.queue.add',
  queueRemove: 'agentdPanel.queue.remove',
  queueMoveUp: 'agentdPanel.queue.moveUp',
  queueMoveDown: 'agentdPanel.queue.moveDown',
  queueAutoAdvanceOn: 'agentdPanel.queue.autoAdvanceOn',
  queueAutoAdvanceOff: 'agentdPanel.queue.autoAdvanceOff',
  todoUndo: 'agentdPanel.todo.undo',
  goalUndo: 'agentdPanel.goal.undo',
  historyOpen: 'agentdPanel.history.open',
  historyOlder: 'agentdPanel.history.older',
  pickSession: 'agentdPanel.pickSession',
  refresh: 'agentdPanel.refresh',
  restartServer: 'agentdPanel.restartServer',
  showOutput: 'agentdPanel.showOutput',
  openSettings: 'agentdPanel.openSettings',
  setupAgents: 'agentdPanel.setupAgents',
} as const;

/** One of the extension's command ids. */
export type CommandId = (typeof COMMANDS)[keyof typeof COMMANDS];
