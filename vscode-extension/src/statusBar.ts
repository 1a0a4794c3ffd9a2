import * as vscode from 'vscode';
import { COMMANDS } from './commandIds';
import { checkWaitsForApproval, liveElapsedMs, STALE_LABEL, STALE_TOOLTIP, statusBarBackground, statusBarText, statusBarTooltip } from './model';
import type { PanelStore } from './store';

/** Command of the status-bar item: focuses the Goal view (VS Code makes `<viewId>.focus`). */
export const FOCUS_GOAL_COMMAND = 'agentdPanel.goal.focus';

/**
 * Status-bar item with the goal's status and progress, e.g.
 * `$(target) Goal active · 3/20 turns · 1.2k tok · 4m`. Hidden when the
 * selected session has no goal; a click focuses the Goal view, or, while the
 * goal's check waits for approval, asks to approve it (the confirmation
 * shows the command).
 */
export class GoalStatusBar implements vscode.Disposable {
  readonly item: vscode.StatusBarItem;
  private visible = false;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(private readonly store: PanelStore) {
    this.item = vscode.window.createStatusBarItem('agentdPanel.goalStatus', vscode.StatusBarAlignment.Left, 50);
    this.item.name = 'agentd Goal';
    this.item.command = FOCUS_GOAL_COMMAND;
    this.disposables.push(this.item, store.onDidChange(() => this.update()), store.onTick(() => this.update()));
    this.update();
  }

  /** True while the item is shown. */
  get isVisible(): boolean {
    return this.visible;
  }

  /** Redraws from the store. */
  update(): void {
    const goal = this.store.state?.goal;
    const elapsed = goal ? liveElapsedMs(goal, this.store.receivedAt, Date.now()) : 0;
    const text = goal ? statusBarText(goal, elapsed) : undefined;
    if (!goal || !text) {
      if (this.visible) {
        this.item.hide();
        this.visible = false;
      }
      return;
    }
    const stale = this.store.stale;
    this.item.text = stale ? `${text} · ${STALE_LABEL}` : text;
    this.item.tooltip = stale ? `${statusBarTooltip(goal, this.store.session)}\n${STALE_TOOLTIP}` : statusBarTooltip(goal, this.store.session);
    this.item.command = checkWaitsForApproval(goal.check) ? COMMANDS.goalApproveCheck : FOCUS_GOAL_COMMAND;
    const background = statusBarBackground(goal, elapsed);
    this.item.backgroundColor = background ? new vscode.ThemeColor(background) : undefined;
    this.item.accessibilityInformation = { label: this.item.text.replace(/\$\([^)]*\)\s*/g, '') };
    if (!this.visible) {
      this.item.show();
      this.visible = true;
    }
  }

  dispose(): void {
    for (const d of this.disposables) {
      d.dispose();
    }
  }
}
