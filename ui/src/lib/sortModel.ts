/**
 * What a header click does to the sort string `A,-B,C`. Only the UI gesture lives here: whether
 * a key may be sorted on, and the string's validity, are `partner-api`'s rules, checked by the
 * shell (an edited string it rejects comes back as an error in words).
 */
export interface SortTerm {
  key: string;
  descending: boolean;
}

export function parseSort(sort: string): SortTerm[] {
  return sort
    .split(",")
    .map((part) => part.trim())
    .filter((part) => part.length > 0)
    .map((part) =>
      part.startsWith("-")
        ? { key: part.slice(1), descending: true }
        : { key: part, descending: false },
    );
}

export function formatSort(terms: SortTerm[]): string {
  return terms.map((t) => (t.descending ? `-${t.key}` : t.key)).join(",");
}

/**
 * A plain click sorts by that key alone (ascending, then descending on the next click); a
 * shift-click adds the key after the others, flips it if present, and removes it on a third click.
 */
export function toggleSort(sort: string, key: string, additive: boolean): string {
  const terms = parseSort(sort);
  const index = terms.findIndex((t) => t.key === key);
  const existing = index >= 0 ? terms[index] : undefined;
  if (!additive) {
    const descending = existing !== undefined && terms.length === 1 ? !existing.descending : false;
    return formatSort([{ key, descending }]);
  }
  if (!existing) return formatSort([...terms, { key, descending: false }]);
  if (!existing.descending) {
    return formatSort(terms.map((t, i) => (i === index ? { key, descending: true } : t)));
  }
  return formatSort(terms.filter((_, i) => i !== index));
}

/** The arrow and position shown in a header: `▲1`, `▼2`, or nothing. */
export function sortIndicator(sort: string, key: string): string {
  const terms = parseSort(sort);
  const index = terms.findIndex((t) => t.key === key);
  const term = terms[index];
  if (!term) return "";
  const arrow = term.descending ? "▼" : "▲";
  return terms.length > 1 ? `${arrow}${index + 1}` : arrow;
}

/**
 * How a column's sort key stands with the active service, for its header. The sandbox's keys are
 * known (`known`): a key is `sortable` or `unsortable`. Any other service's are not in the spec,
 * so every key may be tried, and the header says what the service said: `accepted`, `refused`
 * (with its words), or `untried`.
 */
export type KeyStanding =
  | { kind: "sortable" }
  | { kind: "unsortable" }
  | { kind: "accepted" }
  | { kind: "refused"; words: string }
  | { kind: "untried" };

export interface SortKnowledge {
  products: string[];
  transactions: string[];
  known: boolean;
  triedProducts: { key: string; refusal: string | null }[];
  triedTransactions: { key: string; refusal: string | null }[];
}

export function keyStanding(knowledge: SortKnowledge | undefined, listing: "products" | "transactions", key: string): KeyStanding {
  if (!knowledge) return { kind: "unsortable" };
  if (knowledge.known) return knowledge[listing].includes(key) ? { kind: "sortable" } : { kind: "unsortable" };
  const tried = ((listing === "products" ? knowledge.triedProducts : knowledge.triedTransactions) ?? []).find((t) => t.key === key);
  if (!tried) return { kind: "untried" };
  return tried.refusal === null ? { kind: "accepted" } : { kind: "refused", words: tried.refusal };
}

/** Whether a header of this standing sorts when clicked. */
export function isClickable(standing: KeyStanding): boolean {
  return standing.kind !== "unsortable";
}

/** The header's tooltip: what the service said of the key. */
export function standingTitle(standing: KeyStanding): string {
  switch (standing.kind) {
    case "sortable":
      return "Click to sort; shift-click to add to the sort";
    case "unsortable":
      return "The sandbox does not sort by this column";
    case "accepted":
      return "Accepted by this service. Click to sort; shift-click to add to the sort";
    case "refused":
      return `Refused by this service: ${standing.words}. Click to ask it again`;
    case "untried":
      return "Not tried yet on this service (which keys a service sorts by is not in the spec). Click to try";
  }
}

/** A short mark after the header's name: none, ✓ accepted, ✕ refused, ? not tried yet. */
export function standingMark(standing: KeyStanding): string {
  switch (standing.kind) {
    case "accepted":
      return "✓";
    case "refused":
      return "✕";
    case "untried":
      return "?";
    default:
      return "";
  }
}
