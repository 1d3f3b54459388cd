import type { AppStatus, WorkspacePermission, WorkspaceView, CaptureSummary, ClearCapturesForm, ConnectionView, CaptureFilter, InspectorQuery, ListenerView, PageView, Product, ResponseStatus, StoredTransaction, Transaction } from "../platform";

/** A view as the service sent it: the document holds the same fields. */
function received<T extends object>(view: T): T & { document: Record<string, unknown> } {
  return { ...view, document: { ...view } as Record<string, unknown> };
}

export function product(i: number): Product {
  return received({
    id: `p-${i}`,
    partnerId: "partner-1",
    name: `product-${i}`,
    listingName: `Product ${i}`,
    requestTypes: ["NEW_REQUEST"],
    environment: "sandbox",
    status: "development",
    interfaceUrl: null,
    adminInterfaceUrl: null,
    integrationType: "ASYNC",
    credentials: [],
    tags: { workflows: [], categories: [], applications: [] },
    extensionLimit: 0,
    webhooks: [{ subscriptionId: `sub-${i}`, url: "http://127.0.0.1:7070/webhooks", events: ["created"], resource: "urn:svc:partner:transaction" }],
    created: "2026-01-01T00:00:00Z",
    createdBy: "partner",
    updated: "2026-01-01T00:00:00Z",
    updatedBy: "partner",
  });
}

export function transaction(i: number, responseStatus: ResponseStatus = "processing"): Transaction {
  return received(storedTransaction(i, responseStatus));
}

/** A transaction as the support desk's local copy keeps it (every field of the sandbox's). */
export function storedTransaction(i: number, responseStatus: ResponseStatus = "processing"): StoredTransaction {
  return {
    id: `t-${i}`,
    status: "created",
    clientId: "client",
    environment: "sandbox",
    created: "2026-01-01T00:00:00Z",
    createdBy: "lender",
    updated: "2026-01-01T00:00:00Z",
    updatedBy: "lender",
    product: { id: "p-1", partnerId: "partner-1", name: "product-1" },
    entityRef: { entityId: `loan-${i}`, entityType: "urn:svc:loan" },
    request: { type: "NEW_REQUEST", options: {}, loan: {}, resources: [], requestingParty: null },
    response: i < 0 ? { status: responseStatus, partnerStatus: null, referenceNumber: null } : null,
  };
}

export function pageOf<T>(items: T[], args: Record<string, unknown>, total: number): PageView<T> {
  const query = args.query as { start: number; limit: number; sort: string };
  return { items, total, start: query.start, limit: query.limit, sort: query.sort };
}

/** The embedded sandbox as the shell lists it: always first, even before it has started. */
export const embeddedConnection: ConnectionView = {
  id: "embedded-sandbox",
  label: "Embedded sandbox",
  baseUrl: "http://127.0.0.1:1",
  clientId: "demo",
  environment: "sandbox",
  labelled: "sandbox",
  serviceEnvironment: null,
  embedded: true,
  readOnly: false,
  network: { proxyUrl: null, proxyUser: null, caCertFile: null, clientCertFile: null, summary: "" },
};

/** A ready status on the embedded sandbox, with a running listener and nothing to report. */
export function readyStatus(patch: Partial<AppStatus> = {}): AppStatus {
  return {
    phase: "ready",
    startupError: null,
    active: embeddedConnection,
    connections: [embeddedConnection],
    embeddedSandbox: embeddedConnection.baseUrl,
    demoSubscription: null,
    keychain: { available: true, message: null },
    notices: [],
    listener: { running: true, url: "http://127.0.0.1:7070/webhooks", problem: null, suggestedAddress: null },
    tunnel: null,
    version: 1,
    ...patch,
  };
}

/** A running listener on 127.0.0.1:7070/webhooks with no tunnel and no limits. */
export function listenerView(patch: Partial<ListenerView> = {}): ListenerView {
  return {
    running: true,
    address: "127.0.0.1",
    port: 7070,
    path: "/webhooks",
    configuredAddress: "127.0.0.1:7070",
    addressFromEnvironment: false,
    callbackUrl: "http://127.0.0.1:7070/webhooks",
    tunnelUrl: null,
    testMode: { enabled: false, status: 200, delayMs: 0, failRate: 0, failFirstAttempts: 0, failureStatus: 500 },
    problem: null,
    suggestedAddress: null,
    retention: { maxCaptures: null, maxBytes: null, maxAgeDays: null, junkRate: 20 },
    junk: null,
    storePath: "/home/me/.local/share/partner-console/captures.sqlite",
    dataKeyHome: "the OS's secret store",
    forwardRules: [],
    ...patch,
  };
}

/**
 * The shell's inspector commands over rows kept here, newest first: enough of the store's
 * filter (verdict, event type, an id substring) and grouping for screen tests. The store's own
 * query is tested in Rust; this only answers as the command does.
 */
export function captureStore(initial: CaptureSummary[]) {
  let rows = [...initial].sort((a, b) => b.id - a.id);
  const matches = (f: CaptureFilter | null, c: CaptureSummary, verdicts = true) =>
    f === null ||
    ((!verdicts || f.verdicts.length === 0 || f.verdicts.includes(c.verdict)) &&
      (f.eventType === null || c.eventType === f.eventType) &&
      (f.text === null || [c.eventId, c.resourceId, c.subscriptionId].some((v) => v.includes(f.text as string))));
  const handlers = {
    inspector_page: (a: Record<string, unknown>) => {
      const q = a.query as InspectorQuery;
      let hits = rows.filter((c) => matches(q.filter, c));
      if (q.grouped) {
        const seen = new Map<string, CaptureSummary>();
        for (const c of hits) {
          const key = `${c.subscriptionId} ${c.resourceType} ${c.eventId}`;
          const first = seen.get(key);
          if (first) first.groupAttempts += 1;
          else seen.set(key, { ...c, groupAttempts: 1 });
        }
        hits = [...seen.values()];
      }
      // Counted through the page only, as the store does when asked: "this far, and more".
      const end = q.offset + q.limit;
      const more = !q.countPastPage && hits.length > end;
      return { offset: q.offset, total: more ? end : hits.length, totalCapped: more, unsearched: 0, items: hits.slice(q.offset, end) };
    },
    inspector_facets: (a: Record<string, unknown>) => {
      const f = a.filter as CaptureFilter;
      const verdicts: Record<string, number> = {};
      for (const c of rows) if (matches(f, c, false)) verdicts[c.verdict] = (verdicts[c.verdict] ?? 0) + 1;
      const distinct = (pick: (c: CaptureSummary) => string) => [...new Set(rows.map(pick))].sort();
      return { verdicts, eventTypes: distinct((c) => c.eventType), resourceTypes: distinct((c) => c.resourceType), subscriptions: distinct((c) => c.subscriptionId), stored: rows.length, total: rows.filter((c) => matches(f, c)).length, capped: false };
    },
    clear_captures: (a: Record<string, unknown>) => {
      const form = a.form as ClearCapturesForm;
      const before = rows.length;
      rows = rows.filter((c) => c.id > form.upToId || !matches(form.filter, c));
      return { cleared: before - rows.length };
    },
    capture_attempts: (a: Record<string, unknown>) => {
      const of = rows.find((c) => c.id === a.id);
      return rows.filter((c) => of && c.eventId === of.eventId && c.subscriptionId === of.subscriptionId).sort((x, y) => x.id - y.id);
    },
  };
  return { handlers, add: (c: CaptureSummary) => (rows = [c, ...rows]), rows: () => rows };
}

/** Who may do what in a team workspace, as the core lists it: each action and the least role that may. */
const LEAST: Array<[string, string, string]> = [
  ["respond", "answer transactions", "support"],
  ["write-note", "write notes", "support"],
  ["export-evidence", "export evidence", "support"],
  ["sync-index", "sync the support index", "support"],
  ["replay", "replay captures", "developer"],
  ["clear", "clear captures", "developer"],
  ["recover", "recover missed notifications", "developer"],
];
const ORDER = ["viewer", "support", "developer", "admin"];

function permissions(role: string): WorkspacePermission[] {
  return LEAST.map(([action, label, least]) => {
    const allowed = ORDER.indexOf(role) >= ORDER.indexOf(least);
    const article = role === "admin" ? "An" : "A";
    const who = role === "support" ? "support member" : role;
    return { action, label, allowed, whyNot: allowed ? null : `${article} ${who} may not ${label}: ${least} and up may. Ask an admin of the workspace.` };
  });
}

export function joinedAs(member: string, role: string): WorkspaceView {
  return { joined: true, url: "https://team.example", member, role, fromEnvironment: false, reachable: true, lastError: null, checkedAt: "2026-12-06T20:00:00Z", permissions: permissions(role), tokenStore: "the OS's secret store" };
}

export const notJoined: WorkspaceView = { ...joinedAs("x", "viewer"), joined: false, url: null, member: null, role: null, permissions: [] };
