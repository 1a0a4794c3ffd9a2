import * as vscode from 'vscode';
import { errorMessage, type AgentdClient } from '../client';
import { COMMANDS } from '../commandIds';
import { eventSummary, historyRows, historySides, type HistoryRow } from '../history';
import { SERVER_COMMANDS, type HistoryEvent } from '../protocol.gen';
import type { PanelStore } from '../store';
import { themeIcon } from './icons';

/** View id of the History view (package.json `contributes.views`). */
export const HISTORY_VIEW_ID = 'agentdPanel.history';

/** URI scheme of the read-only before/after documents of an event. */
export const HISTORY_SCHEME = 'agentd-history';

/** Events read per page of `agentd.history`. */
const PAGE = 50;

/** A row of the History view: an event, or the "load older" row when more exist. */
export type HistoryItem = HistoryRow | { more: true };

/**
 * The History view: the selected session's history, newest first (time,
 * actor, what changed), read with `agentd.history` (docs/protocol.md §3)
 * whenever the shown revision or session changes, so every notification
 * refreshes it. Older events load a page at a time from the last row.
 * Opening an event shows a diff of the list or goal before and after it, on
 * two read-only documents of the `agentd-history` scheme.
 */
export class HistoryViewProvider implements vscode.TreeDataProvider<HistoryItem>, vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly emitter = new vscode.EventEmitter<HistoryItem | undefined>();
  private rows: HistoryRow[] = [];
  private more = false;
  /** `session@revision` of the rows shown, so a reload happens once per change. */
  private loadedKey = '';
  /** Counts loads: the answer of a superseded one is dropped. */
  private generation = 0;
  private readonly texts = new Map<string, string>();
  readonly onDidChangeTreeData = this.emitter.event;
  readonly view: vscode.TreeView<HistoryItem>;
  private readonly disposables: vscode.Disposable[] = [this.emitter];

  constructor(
    private readonly client: AgentdClient,
    private readonly store: PanelStore,
  ) {
    this.view = vscode.window.createTreeView(HISTORY_VIEW_ID, { treeDataProvider: this });
    this.disposables.push(
      this.view,
      vscode.workspace.registerTextDocumentContentProvider(HISTORY_SCHEME, this),
      store.onDidChange(() => void this.reload()),
    );
  }

  /** Reads the newest page again when the shown session or revision moved. */
  async reload(): Promise<void> {
    const st = this.store.state;
    const key = st ? `${this.store.session}@${st.revision}` : '';
    if (key === this.loadedKey) {
      return;
    }
    this.loadedKey = key;
    const gen = ++this.generation;
    if (!st) {
      this.show(gen, [], false);
      return;
    }
    try {
      const page = await this.client.execute(SERVER_COMMANDS.history, { ...this.store.baseArgs(), limit: PAGE });
      this.show(gen, historyRows(page.events), page.more);
    } catch (err) {
      if (gen === this.generation) {
        this.loadedKey = '';
        this.view.message = `agentd: ${errorMessage(err)}`;
      }
    }
  }

  /** Appends the next page of older events. */
  async loadOlder(): Promise<void> {
    const last = this.rows.at(-1);
    if (!this.more || !last) {
      return;
    }
    const gen = this.generation;
    try {
      const page = await this.client.execute(SERVER_COMMANDS.history, { ...this.store.baseArgs(), limit: PAGE, before: last.seq });
      this.show(gen, [...this.rows, ...historyRows(page.events)], page.more);
    } catch (err) {
      this.view.message = `agentd: ${errorMessage(err)}`;
    }
  }

  private show(gen: number, rows: HistoryRow[], more: boolean): void {
    if (gen !== this.generation) {
      return;
    }
    this.rows = rows;
    this.more = more;
    this.view.message = undefined;
    this.emitter.fire(undefined);
  }

  /** Opens the diff of the list or goal before and after the event. */
  async open(ev: HistoryEvent): Promise<void> {
    const sides = historySides(ev);
    const base = `/${encodeURIComponent(this.store.session)}/${ev.seq}`;
    this.texts.set(`${base}/before`, sides.before);
    this.texts.set(`${base}/after`, sides.after);
    const uri = (side: string) => vscode.Uri.from({ scheme: HISTORY_SCHEME, path: `${base}/${side}` });
    await vscode.commands.executeCommand('vscode.diff', uri('before'), uri('after'), `#${ev.seq} ${eventSummary(ev)} (before ↔ after)`, {
      preview: true,
    });
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.texts.get(uri.path) ?? '';
  }

  /** The rows as currently shown (for tests). */
  get currentRows(): readonly HistoryRow[] {
    return this.rows;
  }

  /** Whether older events exist beyond the rows shown. */
  get hasOlder(): boolean {
    return this.more;
  }

  getChildren(element?: HistoryItem): HistoryItem[] {
    if (element) {
      return [];
    }
    return this.more ? [...this.rows, { more: true }] : this.rows;
  }

  getTreeItem(row: HistoryItem): vscode.TreeItem {
    if ('more' in row) {
      const item = new vscode.TreeItem('Load older changes…', vscode.TreeItemCollapsibleState.None);
      item.id = 'history-more';
      item.command = { command: COMMANDS.historyOlder, title: 'Load Older Changes' };
      return item;
    }
    const item = new vscode.TreeItem(row.label, vscode.TreeItemCollapsibleState.None);
    item.id = `history-${row.seq}`;
    item.description = row.description;
    item.tooltip = row.tooltip;
    item.iconPath = themeIcon(row.icon);
    item.command = { command: COMMANDS.historyOpen, title: 'Show Before and After', arguments: [row.event] };
    return item;
  }

  dispose(): void {
    for (const d of this.disposables) {
      d.dispose();
    }
  }
}
