/**
 * "Check connection": the way to the service step by step (address, proxy, TCP, TLS and who
 * issued its certificate, HTTP, a token, a list call of each kind), each step shown as it ends,
 * what to do under the first that fails, and the whole report as text for a support ticket.
 * The check is the shell's (`partner doctor` runs the same).
 */
import { useMutation } from "@tanstack/react-query";
import { useEffect, useRef, useState } from "react";
import { api, copyText, events, type CheckStepView } from "../../platform";
import { ErrorPanel } from "../../components/ErrorPanel";

const MARK: Record<string, string> = { passed: "✓", failed: "✗", skipped: "–", warning: "!" };

export function ConnectionCheck({ id, label, onClose }: { id: string; label: string; onClose: () => void }) {
  const [live, setLive] = useState<CheckStepView[]>([]);
  const [copied, setCopied] = useState<"copied" | "failed" | null>(null);
  const current = useRef(id);
  const check = useMutation({ mutationFn: () => api.checkConnection(id) });
  const { mutate } = check;

  useEffect(() => {
    current.current = id;
    return events.onConnectionCheck((e) => {
      if (e.connectionId === current.current) setLive((steps) => [...steps, e.step]);
    });
  }, [id]);
  useEffect(() => {
    mutate();
  }, [mutate]);

  const steps = check.data?.steps ?? live;
  const again = () => {
    setLive([]);
    setCopied(null);
    check.mutate();
  };
  return (
    <section className="card connection-check" aria-label={`Check of ${label}`} data-testid="connection-check">
      <div className="toolbar">
        <h2>Check of {label}</h2>
        <span className="spacer" />
        {check.data && (
          <span className={check.data.allPassed ? "ok small" : "bad small"} role="status" data-testid="connection-check-verdict">
            {check.data.allPassed ? "Every step passed." : "A step did not pass: what to do is under it."}
          </span>
        )}
      </div>
      <ol className="check-steps" aria-label="Steps">
        {steps.map((s) => (
          <li key={s.name} className={`check-step ${s.outcome}`} data-step={s.name} data-outcome={s.outcome}>
            <span className="mark" aria-hidden="true">{MARK[s.outcome] ?? "?"}</span>
            <strong>{s.name}</strong>
            <span className="muted small">{s.elapsedMs} ms</span>
            <div className="detail mono small">{s.detail}</div>
            {s.advice && <div className="advice small">→ {s.advice}</div>}
          </li>
        ))}
        {check.isPending && <li className="muted small">Checking…</li>}
      </ol>
      {check.isError && <ErrorPanel error={check.error} compact />}
      <div className="actions">
        {check.data && (
          <button
            type="button"
            data-testid="connection-check-copy"
            onClick={() => void copyText(check.data.text).then((ok) => setCopied(ok ? "copied" : "failed"))}
          >
            Copy as text
          </button>
        )}
        {copied === "copied" && <span className="ok small">Copied: paste it into the support ticket.</span>}
        {copied === "failed" && <span className="bad small" role="alert">The clipboard refused the text.</span>}
        <button type="button" onClick={again} disabled={check.isPending}>Check again</button>
        <button type="button" onClick={onClose}>Close</button>
      </div>
    </section>
  );
}
