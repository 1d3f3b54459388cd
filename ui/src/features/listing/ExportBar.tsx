/** Export a whole listing (every page, in the current sort) to CSV or JSON. */
import { useState } from "react";
import { api, type ExportFormat, type ExportResult, type ListingKind } from "../../platform";
import { ErrorPanel } from "../../components/ErrorPanel";

export function ExportBar({ kind, sort }: { kind: ListingKind; sort: string }) {
  const [format, setFormat] = useState<ExportFormat>("csv");
  const [path, setPath] = useState("");
  const [busy, setBusy] = useState(false);
  const [done, setDone] = useState<ExportResult | null>(null);
  const [error, setError] = useState<unknown>(null);

  const run = async () => {
    setBusy(true);
    setError(null);
    setDone(null);
    try {
      setDone(await api.exportListing({ kind, format, sort, path: path.trim() || null }));
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };

  return (
    <div className="export-bar">
      <select aria-label="Export format" value={format} onChange={(e) => setFormat(e.target.value as ExportFormat)}>
        <option value="csv">CSV</option>
        <option value="json">JSON</option>
      </select>
      <input aria-label="Export path" placeholder="file path (default: export folder)" value={path} onChange={(e) => setPath(e.target.value)} size={28} />
      <button type="button" onClick={() => void run()} disabled={busy}>
        {busy ? "Exporting…" : "Export all"}
      </button>
      {done && (
        <span className="ok small" role="status">
          {done.count} rows → {done.path}
        </span>
      )}
      {error !== null && <ErrorPanel error={error} compact />}
    </div>
  );
}
