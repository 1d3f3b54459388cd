/** Search across every page of a listing: the shell walks the pager, we show progress and cancel. */
import { useEffect, useRef, useState } from "react";
import { api, events, type ListingKind, type SearchProgress, type SearchResult } from "../../platform";
import { ErrorPanel } from "../../components/ErrorPanel";
import type { ListingColumn } from "./listingColumn";
import { progressPercent } from "./searchModel";

let searchCounter = 0;

export function SearchBar({
  kind,
  sort,
  columns,
  rowId,
  onOpen,
}: {
  kind: ListingKind;
  sort: string;
  columns: ListingColumn<unknown>[];
  rowId: (row: unknown) => string;
  onOpen: (row: unknown) => void;
}) {
  const [text, setText] = useState("");
  const [running, setRunning] = useState<string | null>(null);
  const [progress, setProgress] = useState<SearchProgress | null>(null);
  const [result, setResult] = useState<SearchResult | null>(null);
  const [error, setError] = useState<unknown>(null);
  const runningRef = useRef<string | null>(null);

  useEffect(
    () =>
      events.onSearchProgress((p) => {
        if (p.searchId === runningRef.current) setProgress(p);
      }),
    [],
  );

  const start = async () => {
    if (!text.trim()) return;
    searchCounter += 1;
    const searchId = `${kind}-${Date.now()}-${searchCounter}`;
    runningRef.current = searchId;
    setRunning(searchId);
    setProgress(null);
    setResult(null);
    setError(null);
    try {
      const found = await api.searchListing({ searchId, kind, sort, text: text.trim() });
      if (runningRef.current === searchId) setResult(found);
    } catch (e) {
      setError(e);
    } finally {
      if (runningRef.current === searchId) {
        runningRef.current = null;
        setRunning(null);
      }
    }
  };

  const cancel = () => {
    if (running) void api.cancelSearch(running);
  };

  return (
    <div className="search-bar">
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void start();
        }}
      >
        <input
          aria-label={`Search all ${kind}`}
          placeholder={`Search all ${kind}…`}
          value={text}
          onChange={(e) => setText(e.target.value)}
        />
        <button type="submit" disabled={running !== null || !text.trim()}>
          Search all pages
        </button>
        {running && (
          <>
            <progress max={100} value={progressPercent(progress)} aria-label="Search progress" />
            <span className="muted small">
              {progress ? `${progress.scanned} of ${progress.total} scanned, ${progress.matched} found` : "starting…"}
            </span>
            <button type="button" onClick={cancel}>Cancel</button>
          </>
        )}
      </form>
      {error !== null && <ErrorPanel error={error} compact />}
      {result && (
        <div className="search-results" role="region" aria-label="Search results">
          <div className="search-results-head">
            <strong>
              {result.items.length} match{result.items.length === 1 ? "" : "es"}
              {result.cancelled ? ` (cancelled after ${result.scanned} scanned)` : ` in ${result.scanned}`}
            </strong>
            <button type="button" className="link" onClick={() => setResult(null)}>Close</button>
          </div>
          <table className="grid compact">
            <thead>
              <tr>{columns.map((c) => <th key={c.id}>{c.header}</th>)}</tr>
            </thead>
            <tbody>
              {result.items.slice(0, 200).map((row) => (
                <tr key={rowId(row)} tabIndex={0} onKeyDown={(e) => e.key === "Enter" && onOpen(row)} onDoubleClick={() => onOpen(row)}>
                  {columns.map((c) => <td key={c.id}>{c.cell(row)}</td>)}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </div>
  );
}
