import * as vscode from 'vscode';
import { COMMANDS } from './commandIds';
import { teamFileNotice } from './model';
import { FOCUS_GOAL_COMMAND } from './statusBar';
import type { PanelStore } from './store';
import type { Ui } from './ui';

/** workspaceState key of the folder and file-hash pairs already notified. */
const NOTIFIED_KEY = 'agentdPanel.teamFileNotified';

const ACCEPT = 'Accept…';
const SHOW = 'Show';

/**
 * Tells the person once per folder and team-file hash that the folder has a
 * team file agentd does not use until they accept it (docs/team.md), with
 * Accept… (the confirmation that lists the endpoints) and Show (the Goal
 * view, which keeps showing it). A changed file is a new hash, told again.
 */
export class TeamFileNotifier implements vscode.Disposable {
  private readonly subscription: vscode.Disposable;

  constructor(
    private readonly store: PanelStore,
    private readonly ui: Ui,
    private readonly memory: vscode.Memento,
  ) {
    this.subscription = store.onDidChange(() => this.update());
    this.update();
  }

  private update(): void {
    const notice = teamFileNotice(this.store.state);
    const told = this.memory.get<string[]>(NOTIFIED_KEY, []);
    if (!notice || told.includes(notice.key)) {
      return;
    }
    void this.memory.update(NOTIFIED_KEY, [...told, notice.key]);
    void (async () => {
      const choice = await this.ui.warn(notice.message, ACCEPT, SHOW);
      if (choice === ACCEPT) {
        await vscode.commands.executeCommand(COMMANDS.teamAccept);
      } else if (choice === SHOW) {
        await vscode.commands.executeCommand(FOCUS_GOAL_COMMAND);
      }
    })();
  }

  dispose(): void {
    this.subscription.dispose();
  }
}
