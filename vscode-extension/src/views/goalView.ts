import * as vscode from 'vscode';
import { goalRows, teamFileRows, viewDescription, type GoalRow, type GoalRowKind } from '../model';
import type { PanelStore } from '../store';
import { themeIcon } from './icons';

/** View id of the Goal view (package.json `contributes.views`). */
export const GOAL_VIEW_ID = 'agentdPanel.goal';

/** Command that opens the task file; its argument is the task-file row. */
export const OPEN_TASK_FILE_COMMAND = 'agentdPanel.goal.openTaskFile';

/**
 * The Goal view: a team file waiting for acceptance (first, with its
 * endpoints), then the goal's objective, completion criterion, status and
 * reason, turns, tokens and elapsed time with their budgets, the task file
 * and the check (in full while it waits for approval). The elapsed
 * row ticks every second while the goal is active (only the rows whose text
 * changed are redrawn).
 */
export class GoalViewProvider implements vscode.TreeDataProvider<GoalRow>, vscode.Disposable {
  private readonly emitter = new vscode.EventEmitter<GoalRow | undefined>();
  private rows: GoalRow[] = [];
  readonly onDidChangeTreeData = this.emitter.event;
  readonly view: vscode.TreeView<GoalRow>;
  private readonly disposables: vscode.Disposable[] = [this.emitter];

  constructor(private readonly store: PanelStore) {
    this.view = vscode.window.createTreeView(GOAL_VIEW_ID, { treeDataProvider: this });
    this.disposables.push(
      this.view,
      store.onDidChange(() => this.update()),
      store.onTick(() => this.tick()),
    );
    this.update();
  }

  private compute(): GoalRow[] {
    return [...teamFileRows(this.store.state), ...goalRows(this.store.state?.goal, this.store.receivedAt, Date.now(), this.store.state?.todos.items)];
  }

  /** Recomputes all rows and redraws the view. */
  update(): void {
    this.rows = this.compute();
    const s = this.store.session;
    this.view.description = viewDescription([s !== 'default' || this.store.sessions.length > 1 ? `session ${s}` : undefined], this.store.stale);
    this.view.message = this.store.lastError ? `agentd: ${this.store.lastError}` : undefined;
    this.emitter.fire(undefined);
  }

  /** Redraws only the rows whose text moved with the clock. */
  private tick(): void {
    const next = this.compute();
    if (next.length !== this.rows.length || next.some((r, i) => r.kind !== this.rows[i].kind)) {
      this.update();
      return;
    }
    if (next.some((r, i) => r.key !== this.rows[i].key)) {
      this.update();
      return;
    }
    next.forEach((r, i) => {
      const cur = this.rows[i];
      if (cur.description !== r.description || cur.tooltip !== r.tooltip || cur.icon.id !== r.icon.id) {
        Object.assign(cur, r);
        this.emitter.fire(cur);
      }
    });
  }

  /** The rows as currently shown (for tests). */
  get currentRows(): readonly GoalRow[] {
    return this.rows;
  }

  /** The first row of one kind, if shown. */
  row(kind: GoalRowKind): GoalRow | undefined {
    return this.rows.find((r) => r.kind === kind);
  }

  getChildren(element?: GoalRow): GoalRow[] {
    return element ? [] : this.rows;
  }

  getTreeItem(row: GoalRow): vscode.TreeItem {
    const item = new vscode.TreeItem(row.label, vscode.TreeItemCollapsibleState.None);
    item.id = `goal-${row.key ?? row.kind}`;
    item.description = row.description;
    item.tooltip = row.tooltip;
    item.iconPath = themeIcon(row.icon);
    item.contextValue = row.contextValue;
    if (row.kind === 'taskFile' && row.path) {
      const folder = vscode.workspace.workspaceFolders?.[0];
      if (folder) {
        item.resourceUri = vscode.Uri.joinPath(folder.uri, row.path);
      }
      item.command = { command: OPEN_TASK_FILE_COMMAND, title: 'Open Task File', arguments: [row] };
    }
    return item;
  }

  dispose(): void {
    for (const d of this.disposables) {
      d.dispose();
    }
  }
}
