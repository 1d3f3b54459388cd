/**
 * Forwarding to the user's own app: ordered rules by resource type and event type ("transaction
 * events to :3000/hooks/events"); the first rule that matches a valid notification sends it on,
 * unchanged (same headers, same bytes, so the app verifies what the service signed). The answer
 * shows in each capture's "forwards" tab. Kept in the settings, so they hold after a restart.
 *
 * A rule may name any resource type and event type, not only the spec's (issue #46): the
 * listener takes every signed notification whatever its types, and a service that adds one must
 * be routable without a new console. So each name is a choice of the known ones plus "Other…",
 * which opens a field for the name as the service sends it.
 */
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { api, type ForwardRuleView, type ListenerView } from "../../platform";
import { ErrorPanel } from "../../components/ErrorPanel";
import { describeForwardRule, forwardRuleProblems, FORWARD_EVENT_TYPES, FORWARD_RESOURCE_TYPES, knownForwardName } from "./listenerModel";

const EMPTY_RULE: ForwardRuleView = { resourceType: null, eventType: null, url: "" };

export function ForwardRules({ view }: { view: ListenerView }) {
  const client = useQueryClient();
  const [open, setOpen] = useState(false);
  const [rules, setRules] = useState<ForwardRuleView[]>(view.forwardRules);
  const save = useMutation({
    mutationFn: () => api.setForwardRules(rules.map((r) => ({ ...r, url: r.url.trim() }))),
    onSuccess: (next) => {
      client.setQueryData(["listener"], next);
      setRules(next.forwardRules);
    },
  });
  const problems = forwardRuleProblems(rules);
  const change = (index: number, patch: Partial<ForwardRuleView>) => setRules((cur) => cur.map((r, i) => (i === index ? { ...r, ...patch } : r)));
  const move = (index: number, by: number) =>
    setRules((cur) => {
      const next = [...cur];
      const [rule] = next.splice(index, 1);
      if (rule) next.splice(index + by, 0, rule);
      return next;
    });
  const saved = view.forwardRules;
  return (
    <details className="card settings-card" open={open} onToggle={(e) => setOpen(e.currentTarget.open)}>
      <summary data-testid="forwarding">
        <span className="summary-title">Forwarding</span>
        <span className={`small ${saved.length ? "pill valid" : "muted"}`} data-testid="forwarding-summary">
          {saved.length === 0 ? "off" : saved.length === 1 ? describeForwardRule(saved[0] as ForwardRuleView) : `${saved.length} rules`}
        </span>
      </summary>
      <form
        className="settings-body"
        aria-label="Forward rules"
        onSubmit={(e) => {
          e.preventDefault();
          if (problems.length === 0) save.mutate();
        }}
      >
        <p className="muted small">
          Valid notifications go on, unchanged, to your own app: the first rule that matches sends it. Replays and notifications that fail verification are
          never forwarded.
        </p>
        {rules.length === 0 && <p className="muted small">No rules: nothing is forwarded.</p>}
        <ol className="forward-rules">
          {rules.map((rule, i) => (
            <li key={i} className="forward-rule" data-testid="forward-rule">
              <NameChoice
                label={`Rule ${i + 1} resource type`}
                any="Any resource"
                known={FORWARD_RESOURCE_TYPES}
                placeholder="transaction:document"
                value={rule.resourceType}
                onChange={(resourceType) => change(i, { resourceType })}
              />
              <NameChoice
                label={`Rule ${i + 1} event type`}
                any="Any event"
                known={FORWARD_EVENT_TYPES}
                placeholder="reassigned"
                value={rule.eventType}
                onChange={(eventType) => change(i, { eventType })}
              />
              <span className="muted">→</span>
              <input aria-label={`Rule ${i + 1} URL`} className="mono" placeholder="http://localhost:3000/hooks" value={rule.url} onChange={(e) => change(i, { url: e.target.value })} />
              <button type="button" aria-label={`Move rule ${i + 1} up`} disabled={i === 0} onClick={() => move(i, -1)}>↑</button>
              <button type="button" aria-label={`Move rule ${i + 1} down`} disabled={i === rules.length - 1} onClick={() => move(i, 1)}>↓</button>
              <button type="button" className="danger" aria-label={`Remove rule ${i + 1}`} onClick={() => setRules((cur) => cur.filter((_, j) => j !== i))}>✕</button>
            </li>
          ))}
        </ol>
        {problems.map((p) => <p key={p} className="field-error small">{p}</p>)}
        <div className="actions">
          <button type="button" onClick={() => setRules((cur) => [...cur, EMPTY_RULE])}>Add rule</button>
          <button type="submit" className="primary" data-testid="forward-save" disabled={problems.length > 0 || save.isPending}>Save</button>
          {save.isSuccess && <span className="ok small" role="status">Saved: {save.data.forwardRules.length === 0 ? "nothing is forwarded" : `${save.data.forwardRules.length} rule${save.data.forwardRules.length === 1 ? "" : "s"}`}.</span>}
        </div>
        {save.isError && <ErrorPanel error={save.error} compact />}
      </form>
    </details>
  );
}

/** The choice "Other…" (`*` means any in a rule, so no name is this). */
const OTHER = "*other";

/** A resource or event type: any, one the spec shows, or another typed as sent. */
function NameChoice({
  label,
  any,
  known,
  placeholder,
  value,
  onChange,
}: {
  label: string;
  any: string;
  known: readonly string[];
  placeholder: string;
  value: string | null;
  onChange: (value: string | null) => void;
}) {
  const shown = knownForwardName(value, known);
  // "Other…" picked with nothing typed yet; a name that is not a known one is "other" by itself.
  const [picked, setPicked] = useState(false);
  const other = picked || (value !== null && value !== "" && shown === null);
  return (
    <>
      <select
        aria-label={label}
        value={other ? OTHER : (shown ?? "")}
        onChange={(e) => {
          const choice = e.target.value;
          setPicked(choice === OTHER);
          onChange(choice === OTHER ? (shown === null ? value : "") : choice || null);
        }}
      >
        <option value="">{any}</option>
        {known.map((t) => <option key={t} value={t}>{t}</option>)}
        <option value={OTHER}>Other…</option>
      </select>
      {other && <input aria-label={`${label} name`} className="mono" placeholder={placeholder} value={value ?? ""} onChange={(e) => onChange(e.target.value)} />}
    </>
  );
}
