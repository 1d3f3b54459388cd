import type { PageView, Product, Transaction } from "../platform";

export function product(i: number): Product {
  return {
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
  };
}

export function transaction(i: number, responseStatus: Transaction["response"] extends infer R ? (R extends { status: infer S } ? S : never) : never = "processing"): Transaction {
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
