import * as vscode from 'vscode';
import { todoRows, todoSummary, viewDescription, type TodoRow } from '../model';
import type { PanelStore } from '../store';
import { themeIcon } from './icons';

/** View id of the Todos view (package.json `contributes.views`). */
export const TODO_VIEW_ID = 'agentdPanel.todos';

/**
 * The Todos view: one row per item of the selected session's list, with a
 * status icon and the status as description. Rows carry the list and revision
 * they were rendered from, so edits made from a row are compare-and-set
 * against what the user saw.
 */
export class TodoTreeProvider implements vscode.TreeDataProvider<TodoRow>, vscode.Disposable {
  private readonly emitter = new vscode.EventEmitter<TodoRow | undefined>();
  private rows: TodoRow[] = [];
  readonly onDidChangeTreeData = this.emitter.event;
  readonly view: vscode.TreeView<TodoRow>;
  private readonly disposables: vscode.Disposable[] = [this.emitter];

  constructor(private readonly store: PanelStore) {
    this.view = vscode.window.createTreeView(TODO_VIEW_ID, { treeDataProvider: this, showCollapseAll: false });
    this.disposables.push(this.view, store.onDidChange(() => this.update()));
    this.update();
  }

  /** Recomputes the rows from the store and redraws. */
  update(): void {
    this.rows = todoRows(this.store.state);
    const summary = todoSummary(this.store.state?.todos.items ?? []);
    const session = this.store.session !== 'default' || this.store.sessions.length > 1 ? `session ${this.store.session}` : '';
    this.view.description = viewDescription([session, summary], this.store.stale);
    this.emitter.fire(undefined);
  }

  /** The rows as currently shown (for tests and commands). */
  get currentRows(): readonly TodoRow[] {
    return this.rows;
  }

  getChildren(element?: TodoRow): TodoRow[] {
    return element ? [] : this.rows;
  }

  getTreeItem(row: TodoRow): vscode.TreeItem {
    const item = new vscode.TreeItem(row.label, vscode.TreeItemCollapsibleState.None);
    item.id = `todo-${row.index}`;
    item.description = row.description;
    item.tooltip = row.tooltip;
    item.iconPath = themeIcon(row.icon);
    item.contextValue = row.contextValue;
    item.accessibilityInformation = { label: `${row.label}, ${row.description}` };
    return item;
  }

  dispose(): void {
    for (const d of this.disposables) {
      d.dispose();
    }
  }
}
