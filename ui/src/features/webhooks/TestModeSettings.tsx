/**
 * The listener's test mode, with everything `partner listen` has: the status and delay of every
 * answer, and failures on purpose (a share at random, the first N attempts of each
 * notification) so the service's retries can be watched. Folded, like the listener settings.
 */
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { api, type ListenerView } from "../../platform";
import { ErrorPanel } from "../../components/ErrorPanel";
import { describeTestMode, parseTestMode, testModeFields, type TestModeFields } from "./listenerModel";

export function TestModeSettings({ view }: { view: ListenerView }) {
  const client = useQueryClient();
  const [open, setOpen] = useState(false);
  const [fields, setFields] = useState<TestModeFields>(testModeFields(view.testMode));
  const apply = useMutation({
    mutationFn: api.setTestMode,
    onSuccess: (next) => {
      client.setQueryData(["listener"], next);
      setFields(testModeFields(next.testMode));
    },
  });
  const parsed = parseTestMode(fields);
  const set = (patch: Partial<TestModeFields>) => setFields((f) => ({ ...f, ...patch }));
  const field = (key: Exclude<keyof TestModeFields, "enabled">, label: string, size: number, unit?: string) => (
    <label className="test-field">
      <span>{label}</span>
      <span className="inline">
        <input aria-label={label} value={fields[key]} onChange={(e) => set({ [key]: e.target.value })} size={size} disabled={!fields.enabled} aria-invalid={Boolean(parsed.problems?.[key])} />
        {unit && <span className="muted small">{unit}</span>}
      </span>
      {parsed.problems?.[key] && <span className="field-error small">{parsed.problems[key]}</span>}
    </label>
  );
  return (
    <details className="card settings-card" open={open} onToggle={(e) => setOpen(e.currentTarget.open)}>
      <summary data-testid="test-mode">
        <span className="summary-title">Test mode</span>
        <span className={`small ${view.testMode.enabled ? "pill warn" : "muted"}`} data-testid="test-mode-summary">{describeTestMode(view.testMode)}</span>
      </summary>
      <form
        className="settings-body"
        aria-label="Test mode"
        onSubmit={(e) => {
          e.preventDefault();
          if (parsed.form) apply.mutate(parsed.form);
        }}
      >
        <label className="check-line">
          <input type="checkbox" checked={fields.enabled} onChange={(e) => set({ enabled: e.target.checked })} />
          <span>Answer on purpose as set here (captures are still kept and verified)</span>
        </label>
        <div className="test-fields">
          {field("status", "Status", 3)}
          {field("delay", "Delay", 6, "ms")}
          {field("failPercent", "Failure rate", 4, "%")}
          {field("failFirst", "Fail first", 3, "attempts")}
          {field("failureStatus", "Failure status", 3)}
        </div>
        <div className="actions">
          <button type="submit" className="primary" data-testid="test-mode-apply" disabled={!parsed.form || apply.isPending}>Apply</button>
          {apply.isSuccess && <span className="ok small" role="status">Applied: {describeTestMode(apply.data.testMode)}.</span>}
        </div>
        {apply.isError && <ErrorPanel error={apply.error} compact />}
      </form>
    </details>
  );
}
