import * as vscode from 'vscode';

/**
 * The prompts and messages the panel shows. Commands go through this object
 * instead of `vscode.window` so that the extension-host tests can answer the
 * prompts (the real window is used otherwise).
 */
export interface Ui {
  /** Asks for one line of text; undefined when dismissed. */
  input(options: vscode.InputBoxOptions): Thenable<string | undefined>;
  /** Asks to pick one item; undefined when dismissed. */
  pick<T extends vscode.QuickPickItem>(items: readonly T[], options: vscode.QuickPickOptions): Thenable<T | undefined>;
  /** Asks to choose files or folders with the open dialog; undefined when dismissed. */
  openDialog(options: vscode.OpenDialogOptions): Thenable<vscode.Uri[] | undefined>;
  /** Modal yes/no question; true only when `action` was chosen. */
  confirm(message: string, detail: string, action: string): Thenable<boolean>;
  /** Information message with optional buttons; resolves to the button chosen. */
  info(message: string, ...buttons: string[]): Thenable<string | undefined>;
  /** Warning message with optional buttons. */
  warn(message: string, ...buttons: string[]): Thenable<string | undefined>;
  /** Error message with optional buttons. */
  error(message: string, ...buttons: string[]): Thenable<string | undefined>;
}

/** The real window. */
export const windowUi: Ui = {
  input: (options) => vscode.window.showInputBox(options),
  pick: (items, options) => vscode.window.showQuickPick(items, options),
  openDialog: (options) => vscode.window.showOpenDialog(options),
  confirm: async (message, detail, action) =>
    (await vscode.window.showWarningMessage(message, { modal: true, detail }, action)) === action,
  info: (message, ...buttons) => vscode.window.showInformationMessage(message, ...buttons),
  warn: (message, ...buttons) => vscode.window.showWarningMessage(message, ...buttons),
  error: (message, ...buttons) => vscode.window.showErrorMessage(message, ...buttons),
};

/** A `Ui` that forwards to a replaceable target (the tests swap `target`). */
export class SwitchableUi implements Ui {
  target: Ui = windowUi;
  input(options: vscode.InputBoxOptions): Thenable<string | undefined> {
    return this.target.input(options);
  }
  pick<T extends vscode.QuickPickItem>(items: readonly T[], options: vscode.QuickPickOptions): Thenable<T | undefined> {
    return this.target.pick(items, options);
  }
  openDialog(options: vscode.OpenDialogOptions): Thenable<vscode.Uri[] | undefined> {
    return this.target.openDialog(options);
  }
  confirm(message: string, detail: string, action: string): Thenable<boolean> {
    return this.target.confirm(message, detail, action);
  }
  info(message: string, ...buttons: string[]): Thenable<string | undefined> {
    return this.target.info(message, ...buttons);
  }
  warn(message: string, ...buttons: string[]): Thenable<string | undefined> {
    return this.target.warn(message, ...buttons);
  }
  error(message: string, ...buttons: string[]): Thenable<string | undefined> {
    return this.target.error(message, ...buttons);
  }
}
