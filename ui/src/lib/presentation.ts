/**
 * How the console is displayed: its theme and stage mode (for a projector: larger type, ids
 * shortened, secrets never on screen, the connection unmistakable). One store, kept in
 * localStorage and shown as attributes on `<html>` that the stylesheet reads:
 * `data-theme="light|dark|contrast"` (none for System) and `data-stage="on"`. For System,
 * `data-system="light|dark|contrast"` says what the desktop asks for (`prefers-contrast` /
 * `prefers-color-scheme`), kept up to date while System is chosen; so the stylesheet writes
 * each theme's colours once, for `[data-theme=X]` and `[data-system=X]` together.
 *
 * No React here: `main.tsx` applies the stored choice before the first render (no flash of the
 * wrong theme), and must not pull React into the entry. The hooks are in `useDisplay.ts`.
 */

import { isStageShortcut, SHORTCUTS } from "./shortcuts";

export type ThemeChoice = "system" | "light" | "dark" | "contrast";

export interface DisplayChoice {
  theme: ThemeChoice;
  stage: boolean;
}

export const DISPLAY_STORAGE_KEY = "partner-console.display";
export const DEFAULT_DISPLAY: DisplayChoice = { theme: "system", stage: false };

/** The themes in the order the menu and the palette offer them. */
export const THEMES: ReadonlyArray<{ value: ThemeChoice; label: string }> = [
  { value: "system", label: "System" },
  { value: "light", label: "Light" },
  { value: "dark", label: "Dark" },
  { value: "contrast", label: "High contrast" },
];

/** Ctrl+Shift+M (⇧⌘M on a Mac): stage mode on or off, anywhere in the app (`lib/shortcuts`). */
export const STAGE_SHORTCUT_LABEL = SHORTCUTS.stage;
export { isStageShortcut };

function isTheme(value: unknown): value is ThemeChoice {
  return THEMES.some((t) => t.value === value);
}

/**
 * The stored choice: JSON `{theme, stage}`. Anything else (missing, not JSON, fields of the
 * wrong type, a theme this version does not know) falls back to the default field by field;
 * never throws.
 */
export function parseDisplayChoice(raw: string | null | undefined): DisplayChoice {
  if (!raw) return { ...DEFAULT_DISPLAY };
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return { ...DEFAULT_DISPLAY };
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return { ...DEFAULT_DISPLAY };
  const { theme, stage } = value as Record<string, unknown>;
  return {
    theme: isTheme(theme) ? theme : DEFAULT_DISPLAY.theme,
    stage: typeof stage === "boolean" ? stage : DEFAULT_DISPLAY.stage,
  };
}

/** What System resolves to: the theme the desktop asks for. */
export type SystemTheme = "light" | "dark" | "contrast";

const CONTRAST_QUERY = "(prefers-contrast: more)";
const DARK_QUERY = "(prefers-color-scheme: dark)";

/** A media query's list, or none where `matchMedia` is missing (jsdom) or throws. */
function mediaQuery(query: string): MediaQueryList | null {
  try {
    return typeof window !== "undefined" && typeof window.matchMedia === "function" ? window.matchMedia(query) : null;
  } catch {
    return null;
  }
}

/**
 * The theme System stands for now: high contrast when the desktop asks for more contrast (even
 * on a dark desktop), dark on a dark one, light otherwise (and wherever media queries can't be
 * asked).
 */
export function systemTheme(): SystemTheme {
  if (mediaQuery(CONTRAST_QUERY)?.matches) return "contrast";
  if (mediaQuery(DARK_QUERY)?.matches) return "dark";
  return "light";
}

/** Puts a choice on `<html>` (or `root`): the stylesheet does the rest. */
export function applyDisplay(choice: DisplayChoice, root: HTMLElement = document.documentElement): void {
  if (choice.theme === "system") {
    root.removeAttribute("data-theme");
    root.setAttribute("data-system", systemTheme());
  } else {
    root.setAttribute("data-theme", choice.theme);
    root.removeAttribute("data-system");
  }
  if (choice.stage) root.setAttribute("data-stage", "on");
  else root.removeAttribute("data-stage");
}

/** localStorage, or none where it is missing or refused (a locked-down webview). */
function storage(): Storage | null {
  try {
    return typeof window === "undefined" ? null : window.localStorage;
  } catch {
    return null;
  }
}

let current: DisplayChoice = { ...DEFAULT_DISPLAY };
const listeners = new Set<() => void>();

/** Stops following the desktop's media queries, if they are followed. */
let unfollowSystem: (() => void) | null = null;

/**
 * While System is chosen, `data-system` on `<html>` follows the desktop as it changes; with any
 * other theme, nothing listens. Asks `matchMedia` afresh each time (a no-op where it is missing).
 */
function followSystem(): void {
  unfollowSystem?.();
  unfollowSystem = null;
  if (current.theme !== "system") return;
  const queries = [mediaQuery(CONTRAST_QUERY), mediaQuery(DARK_QUERY)].filter(
    (query): query is MediaQueryList => query !== null && typeof query.addEventListener === "function",
  );
  if (queries.length === 0) return;
  const onChange = () => {
    if (current.theme === "system") document.documentElement.setAttribute("data-system", systemTheme());
  };
  queries.forEach((query) => query.addEventListener("change", onChange));
  unfollowSystem = () => queries.forEach((query) => query.removeEventListener("change", onChange));
}

/** Reads the stored choice and applies it; `main.tsx` calls this before the first render. */
export function loadDisplay(): DisplayChoice {
  let raw: string | null = null;
  try {
    raw = storage()?.getItem(DISPLAY_STORAGE_KEY) ?? null;
  } catch {
    raw = null;
  }
  current = parseDisplayChoice(raw);
  applyDisplay(current);
  followSystem();
  listeners.forEach((listener) => listener());
  return current;
}

/** The choice in force (the same object until it changes, as `useSyncExternalStore` needs). */
export function currentDisplay(): DisplayChoice {
  return current;
}

/** Changes the choice: applied at once, kept for the next start, told to every subscriber. */
export function changeDisplay(change: Partial<DisplayChoice>): void {
  const next = { ...current, ...change };
  if (next.theme === current.theme && next.stage === current.stage) return;
  const themeChanged = next.theme !== current.theme;
  current = next;
  applyDisplay(current);
  if (themeChanged) followSystem();
  try {
    storage()?.setItem(DISPLAY_STORAGE_KEY, JSON.stringify(current));
  } catch {
    // A full or refused storage: the choice holds for this run only.
  }
  listeners.forEach((listener) => listener());
}

export function toggleStage(): void {
  changeDisplay({ stage: !current.stage });
}

export function subscribeDisplay(listener: () => void): () => void {
  listeners.add(listener);
  return () => {
    listeners.delete(listener);
  };
}

/** What stage mode shows in place of a token, a client secret, a signing key or a signature. */
export const STAGE_MASK = "•••• hidden in stage mode";

/**
 * An id as stage mode shows it: its first 8 characters and an ellipsis (ids of 12 characters
 * or fewer are short enough already). The full value stays in the title and in what is copied.
 */
export function stageId(id: string): string {
  return id.length > 12 ? `${id.slice(0, 8)}…` : id;
}

/** A sentence with every UUID in it shown as stage mode shows ids (the Demo's log says what
 * the lender did, naming transactions by id). */
export function stageIdsIn(text: string): string {
  return text.replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi, stageId);
}

/** A value that reads as an opaque id (a UUID, or a long run of letters, digits and dashes with
 * digits in it): what the record tables shorten in stage mode. */
export function looksLikeId(value: string): boolean {
  if (/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(value)) return true;
  return value.length > 20 && /^[A-Za-z0-9_-]+$/.test(value) && /\d/.test(value) && /[A-Za-z]/.test(value);
}

/** Header names whose values are credentials or signatures (compared without case). */
const SECRET_HEADERS = new Set(["authorization", "proxy-authorization", "cookie", "set-cookie", "svc-signature", "x-api-key", "x-auth-token"]);

/** Whether a header's or a field's name says its value is a secret. */
export function isSecretName(name: string): boolean {
  const lower = name.trim().toLowerCase();
  if (SECRET_HEADERS.has(lower)) return true;
  // token_type ("Bearer") and the like name a kind, not a value.
  if (/(^|[-_])(type|kind|lifetime|expires?|exp)$/.test(lower)) return false;
  return /(secret|password|token|signature|signing[-_]?key|api[-_]?key)/.test(lower);
}
