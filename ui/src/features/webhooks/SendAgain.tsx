/**
 * "Send again…" in the inspector: the captures the filter shows (or the selected one) sent to a
 * receiver, paced (at a time, per second), with progress and Stop; each one's answer is kept
 * beside its capture by the shell, and the outcomes are listed here and copied as JSON Lines.
 * The same sending as `partner listen replay` (`send_captures_again`).
 */
import { useState } from "react";
import { api, type CaptureFilter, type SendReport } from "../../platform";
import { ErrorPanel } from "../../components/ErrorPanel";
import { progressText, useJob } from "../../components/FileJob";
import { navigate } from "../../lib/router";

/** Failures listed by name; the rest are counted. */
const FAILURES_LISTED = 20;

export function SendAgain({ filter, filtered, shown, capped, selectedId, onSent }: { filter: CaptureFilter; filtered: boolean; shown: number; capped: boolean; selectedId: number | null; onSent: () => void }) {
  const [open, setOpen] = useState(false);
  const [which, setWhich] = useState<"shown" | "selected">("shown");
  const [target, setTarget] = useState("");
  const [atATime, setAtATime] = useState("4");
  const [perSecond, setPerSecond] = useState("");
  const [resign, setResign] = useState(false);
  const [copied, setCopied] = useState(false);
  const job = useJob<SendReport>("send-again");
  const onlySelected = which === "selected" && selectedId !== null;
  const count = onlySelected ? 1 : shown;
  const concurrency = Number(atATime);
  const rate = perSecond.trim() === "" ? null : Number(perSecond);
  const invalid =
    !Number.isInteger(concurrency) || concurrency < 1 || concurrency > 32
      ? "Send 1 to 32 at a time."
      : rate !== null && !(rate > 0)
        ? "The rate is sends per second, above 0 (or empty for no limit)."
        : count === 0
          ? "The filter shows no capture."
          : null;
  const send = () =>
    job.run((jobId) =>
      api
        .sendCapturesAgain({ jobId, filter, ids: onlySelected && selectedId !== null ? [selectedId] : null, target: target.trim() || null, concurrency, perSecond: rate, resign })
        .then((report) => {
          // Each send's record is kept in its capture's detail: the command's declaration has
          // them read again.
          onSent();
          return report;
        }),
    );
  const report = job.result;
  const failures = report ? report.sent.filter((s) => s.failure !== null) : [];
  const copy = () => {
    if (!report) return;
    const lines = report.sent.map((s) => JSON.stringify(s)).join("\n");
    void navigator.clipboard.writeText(`${lines}\n`).then(() => setCopied(true));
  };
  if (!open) {
    return (
      <button type="button" onClick={() => setOpen(true)} data-testid="send-again-open" disabled={shown === 0 && selectedId === null}>
        Send again…
      </button>
    );
  }
  const shownLabel = filtered ? `the ${shown.toLocaleString("en-US")}${capped ? "+" : ""} shown` : `all ${shown.toLocaleString("en-US")}${capped ? "+" : ""}`;
  return (
    <div className="confirm-bar send-again" role="group" aria-label="Send again" data-testid="send-again">
      <select aria-label="Which captures" value={which} onChange={(e) => setWhich(e.target.value as "shown" | "selected")} disabled={job.running}>
        <option value="shown">{shownLabel}</option>
        <option value="selected" disabled={selectedId === null}>the selected one</option>
      </select>
      <label className="inline">
        to <input className="mono" aria-label="Send again to" placeholder="this app's listener, or http://…" value={target} onChange={(e) => setTarget(e.target.value)} disabled={job.running} />
      </label>
      <label className="inline">
        <input aria-label="At a time" inputMode="numeric" size={2} value={atATime} onChange={(e) => setAtATime(e.target.value)} disabled={job.running} /> at a time
      </label>
      <label className="inline">
        <input aria-label="Per second" inputMode="decimal" size={3} placeholder="any" value={perSecond} onChange={(e) => setPerSecond(e.target.value)} disabled={job.running} /> per second
      </label>
      <label className="check-line">
        <input type="checkbox" checked={resign} onChange={(e) => setResign(e.target.checked)} disabled={job.running} />
        <span>sign again with the subscription's current key</span>
      </label>
      {job.running ? (
        <span className="job-progress" role="status" data-testid="send-again-progress">
          {job.progress?.total ? <progress max={1} value={Math.min(1, job.progress.done / job.progress.total)} /> : <progress />}
          <span className="small">{progressText(job.progress, "sent")}</span>
          <button type="button" onClick={job.cancel}>Stop</button>
        </span>
      ) : (
        <>
          <button type="button" className="primary" data-testid="send-again-start" disabled={invalid !== null} onClick={send} title={invalid ?? undefined}>
            Send {count.toLocaleString("en-US")}
          </button>
          <button type="button" onClick={() => setOpen(false)}>Close</button>
        </>
      )}
      {invalid !== null && !job.running && <span className="bad small">{invalid}</span>}
      {job.error !== null && <ErrorPanel error={job.error} compact />}
      {report && !job.running && (
        <div className="send-again-result" data-testid="send-again-result">
          <span className={`small ${failures.length ? "bad" : "ok"}`} role="status">
            {report.cancelled ? "Stopped: " : ""}
            {report.sent.length - failures.length} of {report.sent.length} taken (2xx or 3xx)
            {failures.length ? `, ${failures.length} not` : ""} · each answer is kept in its capture's forwards and replays
          </span>
          <button type="button" className="link small" onClick={copy}>{copied ? "Copied" : "Copy outcomes (JSON Lines)"}</button>
          {failures.length > 0 && (
            <ul className="small" aria-label="Not taken">
              {failures.slice(0, FAILURES_LISTED).map((f) => (
                <li key={f.captureId}>
                  <button type="button" className="link" onClick={() => navigate("webhooks", String(f.captureId))}>#{f.captureId}</button> {f.failure}
                </li>
              ))}
              {failures.length > FAILURES_LISTED && <li className="muted">and {failures.length - FAILURES_LISTED} more (in the copied outcomes)</li>}
            </ul>
          )}
        </div>
      )}
    </div>
  );
}
