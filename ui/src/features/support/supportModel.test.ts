import { describe, expect, it } from "vitest";
import type { SupportIndexView, SupportSyncResult } from "../../platform";
import { transaction } from "../../test/fixtures";
import {
  EMPTY_FORM,
  formProblems,
  goToStep,
  indexSummary,
  isFiltered,
  loanNumber,
  requestingPartyName,
  statusChoices,
  moveSelection,
  needsProductionConsent,
  paletteItems,
  rangeText,
  supportFilter,
  syncFraction,
  syncLabel,
  syncPhaseText,
  syncResultText,
  withChip,
  workspaceSourceText,
} from "./supportModel";

const view = (patch: Partial<SupportIndexView> = {}): SupportIndexView => ({
  exists: true,
  asOf: "2026-03-04T05:06:07Z",
  filled: true,
  fillPosition: 100000,
  fillTotal: 100000,
  transactions: 100000,
  products: 4,
  production: false,
  connectionLabel: "Acme",
  path: "/x/acme.db",
  ...patch,
});

describe("support model", () => {
  it("turns the form into the index's filter: blanks are none, times are instants, blank loan rows go", () => {
    expect(supportFilter(EMPTY_FORM)).toEqual({
      status: null, product: null, requestType: null, responseStatus: null, createdSince: null, createdBefore: null,
      updatedSince: null, updatedBefore: null, partnerStatus: null, referenceNumber: null, requestingParty: null, loan: [], text: null,
    });
    expect(isFiltered(supportFilter(EMPTY_FORM))).toBe(false);
    const filter = supportFilter({ ...EMPTY_FORM, status: "completed", product: "  p-1 ", createdSince: "2026-01-02T03:04", loan: [{ field: " loanNumber ", value: " L-1 " }, { field: "", value: "" }] });
    expect(filter).toMatchObject({ status: "completed", product: "p-1", createdSince: new Date("2026-01-02T03:04").toISOString(), loan: [{ field: "loanNumber", value: "L-1" }] });
    expect(isFiltered(filter)).toBe(true);
    expect(isFiltered(supportFilter({ ...EMPTY_FORM, loan: [{ field: "a", value: "b" }] }))).toBe(true);
  });

  it("says what is wrong with the form", () => {
    expect(formProblems(EMPTY_FORM)).toEqual([]);
    expect(formProblems({ ...EMPTY_FORM, updatedBefore: "not a time" })).toEqual(["Updated before is not a time."]);
    expect(formProblems({ ...EMPTY_FORM, loan: [{ field: "", value: "x" }, { field: "bad field!", value: "" }] })).toEqual([
      "Loan field 1 has a value but no field name.",
      'Loan field 2: "bad field!" is not a field name (letters, digits, _ and . only).',
    ]);
  });

  it("sets and clears a chip's status or product", () => {
    const once = withChip(EMPTY_FORM, "status", "processing");
    expect(once.status).toBe("processing");
    expect(withChip(once, "status", "processing").status).toBe("");
    expect(withChip(EMPTY_FORM, "status", "escalated").status).toBe("escalated"); // a status of the service's own
    expect(withChip(once, "product", "p-2")).toMatchObject({ status: "processing", product: "p-2" });
  });

  it("words a team workspace's index as the team's, never as a local copy", () => {
    const team = view({ workspace: "https://team.example", path: "https://team.example" });
    expect(syncLabel(team)).toBe("Sync the team's index");
    expect(syncLabel({ ...team, exists: false })).toBe("Sync the team's index");
    expect(indexSummary({ ...team, exists: false })).toBe("The team's index is empty");
    expect(needsProductionConsent({ ...team, exists: false })).toBe(false);
    expect(workspaceSourceText(team)).toBe(
      "Answers come from the team workspace https://team.example: its servers keep the index and sync it for everyone; nothing is copied to this machine.",
    );
    expect(workspaceSourceText(view())).toBeNull();
  });

  it("words the header, the sync and the page range", () => {
    expect(indexSummary(view({ exists: false }))).toBe("No local copy yet");
    expect(indexSummary(view())).toBe("100,000 transactions · as of 2026-03-04 05:06:07Z");
    expect(indexSummary(view({ transactions: 1, filled: false, fillPosition: 1, fillTotal: null }))).toBe("1 transaction · as of 2026-03-04 05:06:07Z · partial: 1 read, the next sync continues");
    expect(syncLabel(undefined)).toBe("Make a local copy");
    expect(syncLabel(view())).toBe("Refresh");
    expect(syncLabel(view({ filled: false }))).toBe("Continue the copy");
    expect(syncPhaseText(null)).toBe("Starting…");
    expect(syncPhaseText({ jobId: "j", phase: "products", done: 3, total: null })).toBe("products");
    expect(syncPhaseText({ jobId: "j", phase: "fill", done: 1234, total: 100000 })).toBe("fill 1,234 of 100,000");
    expect(syncPhaseText({ jobId: "j", phase: "refresh", done: 12, total: null })).toBe("refresh 12");
    expect(syncFraction({ jobId: "j", phase: "fill", done: 50, total: 200 })).toBe(0.25);
    expect(syncFraction({ jobId: "j", phase: "refresh", done: 50, total: null })).toBeNull();
    expect(rangeText(0, 50, 1234, "2026-03-04T05:06:07Z")).toBe("1–50 of 1,234 · as of 2026-03-04 05:06:07Z");
    expect(rangeText(0, 0, 0, null)).toBe("0 of 0 · never synced");
    const result: SupportSyncResult = { cancelled: false, filled: 0, created: 3, updated: 2, fallbacks: [], index: view() };
    expect(syncResultText(result)).toBe("Synced: 3 new, 2 updated · as of 2026-03-04 05:06:07Z.");
  });

  it("asks for consent only before the first copy of a production connection", () => {
    expect(needsProductionConsent(view({ production: true, exists: false }))).toBe(true);
    expect(needsProductionConsent(view({ production: true, exists: true }))).toBe(false);
    expect(needsProductionConsent(view({ production: false, exists: false }))).toBe(false);
  });

  it("reads the loan number from the request's loan, when there is one", () => {
    const t = transaction(1);
    expect(loanNumber(t)).toBeNull();
    expect(loanNumber({ ...t, request: { ...t.request, loan: { loanNumber: 42 } } })).toBe("42");
    expect(loanNumber({ ...t, request: { ...t.request, loan: ["x"] } })).toBeNull();
    // A service may send a transaction with only its id.
    expect(loanNumber({ id: "t-only", document: { id: "t-only" } })).toBeNull();
    expect(requestingPartyName({ id: "t-only", document: { id: "t-only" } })).toBeNull();
  });

  it("offers every status the index counted, known to the console or not", () => {
    const counted = [{ key: "escalated" }, { key: "created" }, { key: "(none)" }];
    expect(statusChoices("", counted)).toEqual(["created", "processing", "completed", "escalated"]);
    expect(statusChoices("on-hold", [])).toEqual(["created", "processing", "completed", "on-hold"]);
    expect(withChip(EMPTY_FORM, "status", "escalated").status).toBe("escalated");
    expect(withChip({ ...EMPTY_FORM, status: "escalated" }, "status", "escalated").status).toBe("");
    expect(withChip(EMPTY_FORM, "status", "(none)").status).toBe("");
  });

  it("leads Go to answers to a route or to words", () => {
    expect(goToStep({ kind: "transaction", transactionId: "t-1", eventId: null })).toEqual({ screen: "transactions", id: "t-1", eventId: null });
    expect(goToStep({ kind: "transaction", transactionId: "t-1", eventId: "e-1" })).toEqual({ screen: "transactions", id: "t-1", eventId: "e-1" });
    expect(goToStep({ kind: "product", productId: "p-1" })).toEqual({ screen: "products", id: "p-1", eventId: null });
    expect(goToStep({ kind: "notFound", message: "No such id." })).toEqual({ message: "No such id." });
  });

  it("offers Go to first, then the screens and the sync that match, and wraps the selection", () => {
    const all = paletteItems("");
    expect(all[0]).toEqual({ kind: "screen", label: "Products", screen: "products" });
    expect(all.at(-1)).toEqual({ kind: "sync", label: "Sync the local index" });
    expect(all.some((i) => i.kind === "screen" && i.screen === "support")).toBe(true);
    expect(paletteItems(" sup ").map((i) => i.label)).toEqual(["Go to sup", "Support"]);
    expect(paletteItems("sync").map((i) => i.label)).toEqual(["Go to sync", "Sync the local index"]);
    expect(paletteItems("t-123").map((i) => i.label)).toEqual(["Go to t-123"]);
    expect(moveSelection(0, 3, "ArrowUp")).toBe(2);
    expect(moveSelection(2, 3, "ArrowDown")).toBe(0);
    expect(moveSelection(0, 0, "ArrowDown")).toBe(0);
  });
});
