import * as vscode from 'vscode';
import type { IconSpec } from '../model';

/** The `ThemeIcon` of a model icon spec. */
export function themeIcon(spec: IconSpec): vscode.ThemeIcon {
  return spec.color ? new vscode.ThemeIcon(spec.id, new vscode.ThemeColor(spec.color)) : new vscode.ThemeIcon(spec.id);
}
