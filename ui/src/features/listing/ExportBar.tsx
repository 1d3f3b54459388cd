/** Export a whole listing (every page, in the current sort) to CSV or JSON, through the save dialog. */
import { useState } from "react";
import { api, type ExportFormat, type ListingKind } from "../../platform";
import { FileJobStatus, useFileJob } from "../../components/FileJob";

export function ExportBar({ kind, sort }: { kind: ListingKind; sort: string }) {
  const [format, setFormat] = useState<ExportFormat>("csv");
  const job = useFileJob(`export-${kind}`);
  return (
    <div className="export-bar">
      <select aria-label="Export format" value={format} onChange={(e) => setFormat(e.target.value as ExportFormat)} disabled={job.running}>
        <option value="csv">CSV</option>
        <option value="json">JSON</option>
      </select>
      <button type="button" onClick={() => job.run((jobId) => api.exportListing({ jobId, kind, format, sort }))} disabled={job.running}>
        {job.running ? "Exporting…" : "Export all…"}
      </button>
      <FileJobStatus job={job} unit="rows" verb="exported" />
    </div>
  );
}
