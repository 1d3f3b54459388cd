import type { TunnelCheck } from "../../platform";
import { describeTunnelCheck } from "./listenerModel";

/** The tunnel check's outcome: what failed (a badge), what happened, what was measured, what to do. */
export function TunnelCheckResult({ check }: { check: TunnelCheck }) {
  const { badge, facts } = describeTunnelCheck(check);
  return (
    <div className="tunnel-check" role="status" aria-label="Tunnel check" data-testid="tunnel-check">
      <span className={`pill ${check.ok ? "valid" : "failed"}`}>{badge}</span>
      <span className={check.ok ? "ok small" : "field-error small"}>{check.message}</span>
      <span className="muted small">{facts}</span>
      {check.hint && <span className="hint small">{check.hint}</span>}
    </div>
  );
}
