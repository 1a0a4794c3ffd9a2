import * as vscode from 'vscode';
import { queueRows, queueSummary, viewDescription, type QueueRow } from '../model';
import type { PanelStore } from '../store';
import { themeIcon } from './icons';

/** View id of the Up next view (package.json `contributes.views`). */
export const QUEUE_VIEW_ID = 'agentdPanel.queue';

/**
 * The Up next view: the session's goal queue (docs/runtime.md §2.9), first
 * queued goal first, with the auto-advance setting in the view's
 * description. Rows carry the queued goal's id, which Remove, Move Up and
 * Move Down send.
 */
export class QueueViewProvider implements vscode.TreeDataProvider<QueueRow>, vscode.Disposable {
  private readonly emitter = new vscode.EventEmitter<QueueRow | undefined>();
  private rows: QueueRow[] = [];
  readonly onDidChangeTreeData = this.emitter.event;
  readonly view: vscode.TreeView<QueueRow>;
  private readonly disposables: vscode.Disposable[] = [this.emitter];

  constructor(private readonly store: PanelStore) {
    this.view = vscode.window.createTreeView(QUEUE_VIEW_ID, { treeDataProvider: this, showCollapseAll: false });
    this.disposables.push(this.view, store.onDidChange(() => this.update()));
    this.update();
  }

  /** Recomputes the rows from the store and redraws. */
  update(): void {
    this.rows = queueRows(this.store.state);
    this.view.description = viewDescription([queueSummary(this.store.state)], this.store.stale);
    this.emitter.fire(undefined);
  }

  /** The rows as currently shown (for tests and commands). */
  get currentRows(): readonly QueueRow[] {
    return this.rows;
  }

  getChildren(element?: QueueRow): QueueRow[] {
    return element ? [] : this.rows;
  }

  getTreeItem(row: QueueRow): vscode.TreeItem {
    const item = new vscode.TreeItem(row.label, vscode.TreeItemCollapsibleState.None);
    item.id = `queue-${row.id}`;
    item.description = row.description;
    item.tooltip = row.tooltip;
    item.iconPath = themeIcon(row.icon);
    item.contextValue = row.contextValue;
    item.accessibilityInformation = { label: `${row.index + 1}. ${row.label}` };
    return item;
  }

  dispose(): void {
    for (const d of this.disposables) {
      d.dispose();
    }
  }
}
