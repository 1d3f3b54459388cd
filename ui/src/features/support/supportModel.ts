/**
 * The support desk's rules, kept out of the components so they are tested as plain functions:
 * the filter form as the index wants it, the words of the header, the progress and the page
 * range, the production consent, the command palette's choices and where "Go to" leads.
 */
import { instantOf } from "../../lib/format";
import type {
  GoToTarget,
  LoanFieldFilter,
  ResponseStatus,
  SupportFilter,
  SupportIndexView,
  Progress,
  SupportSyncResult,
  Transaction,
  TransactionStatus,
} from "../../platform";
import { formatTime } from "../../lib/format";
import { SCREENS, type Screen } from "../../lib/router";
import { DEFAULT_DISPLAY, THEMES, type DisplayChoice } from "../../lib/presentation";

export const PAGE_SIZE = 50;

export const TRANSACTION_STATUSES: TransactionStatus[] = ["created", "processing", "completed"];
export const RESPONSE_STATUSES: ResponseStatus[] = ["processing", "completed", "failed", "canceled", "inputRequired"];

/** Asked before the first local copy of a production connection, in these words. */
export const PRODUCTION_CONSENT =
  "A local copy of this production connection's transactions — lenders' and borrowers' data — will be kept on this machine, encrypted, its key in the keychain. Make it?";

export interface LoanRow {
  field: string;
  value: string;
}

/** The filter form as typed: every field a string ("" = not set), times as datetime-local. */
export interface SupportForm {
  /** A status as the service writes it ("" = any): the index keeps values the console does not know. */
  status: string;
  product: string;
  requestType: string;
  responseStatus: string;
  createdSince: string;
  createdBefore: string;
  updatedSince: string;
  updatedBefore: string;
  partnerStatus: string;
  referenceNumber: string;
  requestingParty: string;
  loan: LoanRow[];
  text: string;
}

export const EMPTY_FORM: SupportForm = {
  status: "",
  product: "",
  requestType: "",
  responseStatus: "",
  createdSince: "",
  createdBefore: "",
  updatedSince: "",
  updatedBefore: "",
  partnerStatus: "",
  referenceNumber: "",
  requestingParty: "",
  loan: [],
  text: "",
};


const named = (v: string) => (v.trim() === "" ? null : v.trim());

/** The loan rows the index can use: a row with a field name; a blank row is dropped. */
export function loanFilters(rows: LoanRow[]): LoanFieldFilter[] {
  return rows
    .map((r) => ({ field: r.field.trim(), value: r.value.trim() }))
    .filter((r) => r.field !== "");
}

/** The index's filter for the form. */
export function supportFilter(form: SupportForm): SupportFilter {
  return {
    status: named(form.status),
    product: named(form.product),
    requestType: named(form.requestType),
    responseStatus: named(form.responseStatus),
    createdSince: instantOf(form.createdSince),
    createdBefore: instantOf(form.createdBefore),
    updatedSince: instantOf(form.updatedSince),
    updatedBefore: instantOf(form.updatedBefore),
    partnerStatus: named(form.partnerStatus),
    referenceNumber: named(form.referenceNumber),
    requestingParty: named(form.requestingParty),
    loan: loanFilters(form.loan),
    text: named(form.text),
  };
}

/** What is wrong with the form, in words; empty when it can be sent. */
export function formProblems(form: SupportForm): string[] {
  const problems: string[] = [];
  const times: Array<[keyof SupportForm, string]> = [
    ["createdSince", "Created from"],
    ["createdBefore", "Created before"],
    ["updatedSince", "Updated from"],
    ["updatedBefore", "Updated before"],
  ];
  for (const [key, label] of times) {
    const v = form[key] as string;
    if (v.trim() !== "" && instantOf(v) === null) problems.push(`${label} is not a time.`);
  }
  form.loan.forEach((row, i) => {
    if (row.field.trim() === "" && row.value.trim() !== "") problems.push(`Loan field ${i + 1} has a value but no field name.`);
    else if (row.field.trim() !== "" && !/^[A-Za-z0-9_.]+$/.test(row.field.trim())) {
      problems.push(`Loan field ${i + 1}: "${row.field.trim()}" is not a field name (letters, digits, _ and . only).`);
    }
  });
  return problems;
}

/** Whether the filter restricts anything. */
export function isFiltered(filter: SupportFilter): boolean {
  return Object.entries(filter).some(([key, v]) => (key === "loan" ? (v as LoanFieldFilter[]).length > 0 : v !== null));
}

/** A count chip clicked: the form with that status or product set (again: cleared). */
export function withChip(form: SupportForm, kind: "status" | "product", key: string): SupportForm {
  if (kind === "status") {
    // Any status the index counted, known to the console or not; "(none)" counts those without one.
    if (key === NO_VALUE) return form;
    return { ...form, status: form.status === key ? "" : key };
  }
  return { ...form, product: form.product === key ? "" : key };
}

const number = (n: number) => n.toLocaleString("en-US");

/** `as of 2026-01-02 03:04:05Z`, or that the index was never brought up to date. */
export function asOfText(asOf: string | null): string {
  return asOf ? `as of ${formatTime(asOf)}` : "never synced";
}

/** The header's one line about the index. */
export function indexSummary(index: SupportIndexView): string {
  if (!index.exists) return index.workspace ? "The team's index is empty" : "No local copy yet";
  const count = `${number(index.transactions)} transaction${index.transactions === 1 ? "" : "s"}`;
  const partial =
    index.filled ? "" : ` · partial: ${number(index.fillPosition)}${index.fillTotal !== null ? ` of ${number(index.fillTotal)}` : ""} read, the next sync continues`;
  return `${count} · ${asOfText(index.asOf)}${partial}`;
}

/** The sync button's words. */
export function syncLabel(index: SupportIndexView | undefined): string {
  // The team's servers keep the index for everyone: a sync asks them to bring it up to date now.
  if (index?.workspace) return "Sync the team's index";
  if (!index || !index.exists) return "Make a local copy";
  return index.filled ? "Refresh" : "Continue the copy";
}

/** Where the answers come from while a team workspace is joined; null on this machine's own copy. */
export function workspaceSourceText(index: SupportIndexView): string | null {
  if (!index.workspace) return null;
  return `Answers come from the team workspace ${index.workspace}: its servers keep the index and sync it for everyone; nothing is copied to this machine.`;
}

/** Whether the user must agree before this sync (the first copy of a production connection). */
export function needsProductionConsent(index: SupportIndexView): boolean {
  return index.production && !index.exists;
}

/** The progress line: `products`, `fill 1,234 of 100,000`, `refresh 12`. */
export function syncPhaseText(progress: Progress | null): string {
  if (!progress) return "Starting…";
  if (progress.phase === "products") return "products";
  const done = number(progress.done);
  // A sync's progress always names its phase.
  const phase = progress.phase ?? "sync";
  return progress.total === null ? `${phase} ${done}` : `${phase} ${done} of ${number(progress.total)}`;
}

/** The progress bar's fraction, none when the total is not known. */
export function syncFraction(progress: Progress | null): number | null {
  if (!progress || !progress.total) return null;
  return Math.min(1, progress.done / progress.total);
}

/** What a finished sync did. */
export function syncResultText(result: SupportSyncResult): string {
  if (result.cancelled) return `Stopped: the ${number(result.index.transactions)} transactions stored so far stay; the next sync continues from there.`;
  const parts = [
    result.filled ? `${number(result.filled)} read` : null,
    `${number(result.created)} new`,
    `${number(result.updated)} updated`,
  ].filter((p): p is string => p !== null);
  return `Synced: ${parts.join(", ")} · ${asOfText(result.index.asOf)}.`;
}

/** `1–50 of 1,234 · as of …`, `0 of 0 · as of …`. */
export function rangeText(offset: number, shown: number, total: number, asOf: string | null): string {
  const range = shown === 0 ? `0 of ${number(total)}` : `${number(offset + 1)}–${number(offset + shown)} of ${number(total)}`;
  return `${range} · ${asOfText(asOf)}`;
}

/** The loan number of the request (`request.loan.loanNumber`), when it has one. */
export function loanNumber(t: Transaction): string | null {
  const loan = t.request?.loan;
  if (loan === null || typeof loan !== "object" || Array.isArray(loan)) return null;
  const value = (loan as Record<string, unknown>).loanNumber;
  return typeof value === "string" || typeof value === "number" ? String(value) : null;
}

/** The requesting party's name, when the request names one. */
export function requestingPartyName(t: Transaction): string | null {
  const party = t.request?.requestingParty;
  if (party === null || typeof party !== "object" || Array.isArray(party)) return null;
  const name = (party as Record<string, unknown>).name;
  return typeof name === "string" ? name : null;
}

/**
 * The status filter's choices: the spec's, every status the index counted (a service may send
 * values the console does not know: they are kept, shown and filterable), and the one chosen.
 */
export function statusChoices(chosen: string, counted: { key: string }[]): string[] {
  const all: string[] = [...TRANSACTION_STATUSES];
  for (const c of counted) if (c.key !== NO_VALUE && !all.includes(c.key)) all.push(c.key);
  if (chosen !== "" && !all.includes(chosen)) all.push(chosen);
  return all;
}

/** What the index counts transactions without a status (or a product) under. */
export const NO_VALUE = "(none)";

/** What is deleted by "Forget this connection's data", in words. */
export function forgetText(index: SupportIndexView): string {
  return `Deletes the local copy of ${index.connectionLabel}'s data (${number(index.transactions)} transactions and ${number(index.products)} products, ${index.path}) and its key from the keychain. Nothing on the service changes; a new copy can be made later.`;
}

/** Where a "Go to" answer leads: a route, or the words saying why nowhere. */
export type GoToStep = { screen: Screen; id: string; eventId: string | null } | { message: string };

export function goToStep(target: GoToTarget): GoToStep {
  switch (target.kind) {
    case "transaction":
      return { screen: "transactions", id: target.transactionId, eventId: target.eventId };
    case "product":
      return { screen: "products", id: target.productId, eventId: null };
    case "notFound":
      return { message: target.message };
  }
}

/** One choice of the command palette. */
export type PaletteItem =
  | { kind: "goTo"; label: string; text: string }
  | { kind: "screen"; label: string; screen: Screen }
  | { kind: "sync"; label: string }
  | { kind: "display"; label: string; change: Partial<DisplayChoice> };

/** The display commands: stage mode on or off (whichever it is not), and the other themes. */
function displayItems(display: DisplayChoice): PaletteItem[] {
  return [
    { kind: "display", label: display.stage ? "Stage mode: turn off" : "Stage mode: turn on", change: { stage: !display.stage } },
    ...THEMES.filter((t) => t.value !== display.theme).map((t): PaletteItem => ({ kind: "display", label: `Theme: ${t.label}`, change: { theme: t.value } })),
  ];
}

/** The palette's choices for what is typed: "Go to …" first, then screens and commands that match. */
export function paletteItems(typed: string, display: DisplayChoice = DEFAULT_DISPLAY): PaletteItem[] {
  const text = typed.trim();
  const needle = text.toLowerCase();
  const commands: PaletteItem[] = [
    ...SCREENS.map((s): PaletteItem => ({ kind: "screen", label: s.label, screen: s.screen })),
    ...displayItems(display),
    { kind: "sync", label: "Sync the local index" },
  ];
  const matching = needle === "" ? commands : commands.filter((c) => c.label.toLowerCase().includes(needle));
  return text === "" ? matching : [{ kind: "goTo", label: `Go to ${text}`, text }, ...matching];
}

/** The selection after an arrow key, wrapping at both ends. */
export function moveSelection(current: number, count: number, key: "ArrowDown" | "ArrowUp"): number {
  if (count === 0) return 0;
  return key === "ArrowDown" ? (current + 1) % count : (current - 1 + count) % count;
}

/**
 * A sync asked for from elsewhere (the command palette): kept until the support screen is
 * mounted and takes it, and announced to a screen that is already mounted.
 */
let syncRequested = false;
export const SYNC_REQUEST_EVENT = "support-sync-request";

export function requestSync(): void {
  syncRequested = true;
  window.dispatchEvent(new Event(SYNC_REQUEST_EVENT));
}

/** Takes the pending request, if any (once). */
export function takeSyncRequest(): boolean {
  const was = syncRequested;
  syncRequested = false;
  return was;
}
