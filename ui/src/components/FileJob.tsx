/**
 * A long job (an export, an import, a send again) that the shell runs under an id the UI
 * chose: its progress arrives as `job-progress` events, and Cancel stops it. A file job's file
 * is chosen in the desktop's save or open dialog, which the shell shows.
 */
import { useEffect, useRef, useState } from "react";
import { api, events, type FileJobResult, type Progress } from "../platform";
import { ErrorPanel } from "./ErrorPanel";

let jobs = 0;
function newJobId(prefix: string): string {
  jobs += 1;
  return `${prefix}-${Date.now()}-${jobs}`;
}

/** A job the shell runs under an id the UI chose, ending with a `T`. */
export interface Job<T> {
  running: boolean;
  progress: Progress | null;
  result: T | null;
  error: unknown;
  /** Starts `work` under a new job id; one job at a time. */
  run: (work: (jobId: string) => Promise<T>) => void;
  cancel: () => void;
}

export type FileJob = Job<FileJobResult>;

export function useJob<T>(prefix: string): Job<T> {
  const [jobId, setJobId] = useState<string | null>(null);
  const [progress, setProgress] = useState<Progress | null>(null);
  const [result, setResult] = useState<T | null>(null);
  const [error, setError] = useState<unknown>(null);
  const current = useRef<string | null>(null);

  useEffect(
    () =>
      events.onJobProgress((p) => {
        if (p.jobId === current.current) setProgress(p);
      }),
    [],
  );

  const run = (work: (jobId: string) => Promise<T>) => {
    if (current.current !== null) return;
    const id = newJobId(prefix);
    current.current = id;
    setJobId(id);
    setProgress(null);
    setResult(null);
    setError(null);
    work(id)
      .then(setResult, setError)
      .finally(() => {
        current.current = null;
        setJobId(null);
      });
  };
  const cancel = () => {
    if (jobId) void api.cancelJob(jobId);
  };
  return { running: jobId !== null, progress, result, error, run, cancel };
}

export function useFileJob(prefix: string): FileJob {
  return useJob<FileJobResult>(prefix);
}

/** `1,234 of 5,000`, or `1,234` when the total is not known; then what the job is doing now
 * when it says (`40,000 of 100,000 captures · indexing for search`, `· waiting 2 s: rate limited`). */
export function progressText(p: Progress | null, unit: string): string {
  if (!p) return "Starting…";
  const done = p.done.toLocaleString("en-US");
  const count = p.total === null ? `${done} ${unit}` : `${done} of ${p.total.toLocaleString("en-US")} ${unit}`;
  return p.note ? `${count} · ${p.note}` : count;
}

/** The job's bar while it runs, then what it did (or why it failed). */
export function FileJobStatus({ job, unit, verb }: { job: FileJob; unit: string; verb: string }) {
  if (job.running) {
    const p = job.progress;
    const fraction = p && p.total ? Math.min(1, p.done / p.total) : null;
    return (
      <span className="job-progress" role="status" data-testid="job-progress" data-job={verb}>
        {fraction !== null ? <progress max={1} value={fraction} /> : <progress />}
        <span className="small">{progressText(p, unit)}</span>
        <button type="button" onClick={job.cancel}>Cancel</button>
      </span>
    );
  }
  if (job.error !== null) return <ErrorPanel error={job.error} compact />;
  const r = job.result;
  if (!r || r.path === null) return null;
  const count = r.count.toLocaleString("en-US");
  return (
    <span className={`small ${r.cancelled ? "muted" : "ok"}`} role="status" data-testid="job-result" data-job={verb} title={r.path}>
      {r.cancelled
        ? verb === "imported"
          ? `Stopped: ${count} ${unit} imported before the stop were kept.`
          : "Stopped: nothing was written."
        : `${count} ${unit} ${verb}${r.skipped ? ` (${r.skipped.toLocaleString("en-US")} already there)` : ""} · ${r.path}`}
    </span>
  );
}
