/** Page arithmetic for the server-paged tables (`start`/`limit`, total from `X-Total-Count`). */
import type { ListingKind } from "../platform";

export const PAGE_SIZES = [10, 25, 50] as const;

/** The first page a listing shows: what it asks for on mount (and what start-up asks for early). */
export const FIRST_PAGE = { start: 0, limit: 25 } as const;

/** The query-cache key of one page of a listing ("products" or "transactions"). */
export function listingQueryKey(kind: ListingKind, start: number, limit: number, sort: string) {
  return ["listing", kind, start, limit, sort] as const;
}

export function pageCount(total: number, limit: number): number {
  if (limit <= 0) return 1;
  return Math.max(1, Math.ceil(total / limit));
}

/** 1-based page of a start index. */
export function pageOf(start: number, limit: number): number {
  if (limit <= 0) return 1;
  return Math.floor(start / limit) + 1;
}

/** The start index of a 1-based page, clamped into the listing. */
export function startOfPage(page: number, limit: number, total: number): number {
  const last = pageCount(total, limit);
  const clamped = Math.min(Math.max(1, Math.floor(page)), last);
  return (clamped - 1) * limit;
}

/** Parses the page-jump box: a whole page number in range, or an error in words. */
export function parsePageJump(raw: string, total: number, limit: number): number | string {
  const trimmed = raw.trim();
  if (!/^\d+$/.test(trimmed)) return "Type a page number.";
  const page = Number(trimmed);
  const last = pageCount(total, limit);
  if (page < 1 || page > last) return `Pages run from 1 to ${last}.`;
  return page;
}

/** "26–50 of 120" */
export function rangeLabel(start: number, count: number, total: number): string {
  if (total === 0 || count === 0) return `0 of ${total}`;
  return `${start + 1}–${start + count} of ${total}`;
}
