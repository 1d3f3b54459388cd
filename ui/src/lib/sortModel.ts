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
