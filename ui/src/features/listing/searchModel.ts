import type { SearchProgress } from "../../platform";

/** Percentage of a listing's pages walked so far. */
export function progressPercent(progress: SearchProgress | null): number {
  if (!progress || progress.total <= 0) return 0;
  return Math.min(100, Math.round((progress.scanned / progress.total) * 100));
}
