import * as vscode from 'vscode';
import { subagentRows, todoRows, todoSummary, viewDescription, type SubagentRow, type TodoRow } from '../model';
import type { PanelStore } from '../store';
import { themeIcon } from './icons';

/** View id of the Todos view (package.json `contributes.views`). */
export const TODO_VIEW_ID = 'agentdPanel.todos';

/** A row of the Todos view: an item, a subagent's list, or an item of one. */
type Row = TodoRow | SubagentRow | SubagentRow['children'][number];

/**
 * The Todos view: one row per item of the selected session's list, with a
 * status icon and the status as description, and each subagent's list under
 * the item it is linked to (docs/runtime.md §1.3). Rows carry the list and
 * revision they were rendered from, so edits made from a row are
 * compare-and-set against what the user saw.
 */
export class TodoTreeProvider implements vscode.TreeDataProvider<Row>, vscode.Disposable {
  private readonly emitter = new vscode.EventEmitter<Row | undefined>();
  private rows: TodoRow[] = [];
  private subagents: SubagentRow[] = [];
  readonly onDidChangeTreeData = this.emitter.event;
  readonly view: vscode.TreeView<Row>;
  private readonly disposables: vscode.Disposable[] = [this.emitter];

  constructor(private readonly store: PanelStore) {
    this.view = vscode.window.createTreeView(TODO_VIEW_ID, { treeDataProvider: this, showCollapseAll: false });
    this.disposables.push(this.view, store.onDidChange(() => this.update()));
    this.update();
  }

  /** Recomputes the rows from the store and redraws. */
  update(): void {
    this.rows = todoRows(this.store.state);
    this.subagents = subagentRows(this.store.state);
    const summary = todoSummary(this.store.state?.todos.items ?? []);
    const session = this.store.session !== 'default' || this.store.sessions.length > 1 ? `session ${this.store.session}` : '';
    this.view.description = viewDescription([session, summary], this.store.stale);
    this.emitter.fire(undefined);
  }

  /** The rows as currently shown (for tests and commands). */
  get currentRows(): readonly TodoRow[] {
    return this.rows;
  }

  getChildren(element?: Row): Row[] {
    if (!element) {
      return [...this.rows, ...this.subagents.filter((l) => l.parentIndex < 0)];
    }
    if ('todosRevision' in element) {
      return this.subagents.filter((l) => l.parentIndex === element.index);
    }
    return 'children' in element ? element.children : [];
  }

  getTreeItem(row: Row): vscode.TreeItem {
    if (!('todosRevision' in row)) {
      const nested = 'children' in row;
      const item = new vscode.TreeItem(row.label, nested ? vscode.TreeItemCollapsibleState.Expanded : vscode.TreeItemCollapsibleState.None);
      item.id = row.id;
      item.description = row.description;
      item.contextValue = row.contextValue;
      item.iconPath = nested ? new vscode.ThemeIcon('person') : themeIcon(row.icon);
      return item;
    }
    const nested = this.subagents.some((l) => l.parentIndex === row.index);
    const item = new vscode.TreeItem(row.label, nested ? vscode.TreeItemCollapsibleState.Expanded : vscode.TreeItemCollapsibleState.None);
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
