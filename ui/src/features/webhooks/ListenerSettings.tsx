/**
 * The listener's lasting settings: where it listens (kept in the settings file, used at every
 * start) and how many captures the store keeps. Folded by default so the inspector keeps the
 * room at the smallest window; opened by itself when the listener is down, since that is when
 * the address needs changing.
 */
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { api, type ListenerView } from "../../platform";
import { ErrorPanel } from "../../components/ErrorPanel";
import { describeJunk, describeRetention, formatSize, parseListenerAddress, parseRetention } from "./listenerModel";

export function ListenerSettings({ view }: { view: ListenerView }) {
  const [open, setOpen] = useState(view.problem !== null);
  return (
    <details className="card settings-card" open={open} onToggle={(e) => setOpen(e.currentTarget.open)}>
      <summary data-testid="listener-settings">
        <span className="summary-title">Settings</span>
        <span className="muted small mono">{view.configuredAddress}{view.path}</span>
        <span className="muted small">· keeps {describeRetention(view.retention)}</span>
        {view.problem && <span className="pill failed">not running</span>}
      </summary>
      <div className="settings-body">
        <AddressForm view={view} />
        <RetentionSettings view={view} />
        <p className="muted small store-path">
          Captures are kept in <code data-testid="listener-store-path">{view.storePath}</code>, shared with <code>partner listen</code>
          {view.dataKeyHome ? (
            <>
              , encrypted at rest with the key in <span data-testid="listener-data-key">{view.dataKeyHome}</span>.
            </>
          ) : (
            "."
          )}
        </p>
      </div>
    </details>
  );
}

function useSaved() {
  const client = useQueryClient();
  return (next: ListenerView) => {
    // The top bar's listener URL and problem come with the status, which the commands'
    // declarations have read again.
    client.setQueryData(["listener"], next);
  };
}

function AddressForm({ view }: { view: ListenerView }) {
  const saved = useSaved();
  const [address, setAddress] = useState(view.configuredAddress);
  const [path, setPath] = useState(view.path);
  // A change saved elsewhere (the banner's "Use …") refills the fields.
  const savedKey = `${view.configuredAddress} ${view.path}`;
  const [shownKey, setShownKey] = useState(savedKey);
  if (shownKey !== savedKey) {
    setShownKey(savedKey);
    setAddress(view.configuredAddress);
    setPath(view.path);
  }
  const [touched, setTouched] = useState(false);
  const parsed = parseListenerAddress(address, path);
  const save = useMutation({ mutationFn: api.setListenerAddress, onSuccess: saved });
  const problems = touched ? parsed.problems : null;
  return (
    <form
      className="settings-form"
      aria-label="Listener address"
      onSubmit={(e) => {
        e.preventDefault();
        setTouched(true);
        if (parsed.form) save.mutate(parsed.form);
      }}
    >
      <div className="form-row">
        <label>
          Address (IP:PORT)
          <input data-testid="listener-address-input" className="mono" value={address} size={22} onChange={(e) => setAddress(e.target.value)} aria-invalid={problems?.address !== undefined} />
          {problems?.address && <span className="field-error small">{problems.address}</span>}
        </label>
        <label>
          Path
          <input data-testid="listener-path-input" className="mono" value={path} size={16} onChange={(e) => setPath(e.target.value)} aria-invalid={problems?.path !== undefined} />
          {problems?.path && <span className="field-error small">{problems.path}</span>}
        </label>
        <button type="submit" data-testid="listener-save" disabled={save.isPending}>
          {save.isPending ? "Saving…" : "Save address"}
        </button>
        {save.isSuccess && <span className="ok small" role="status">Saved: listening on {save.data.configuredAddress}{save.data.path}.</span>}
      </div>
      {view.addressFromEnvironment && (
        <p className="small notice-line" data-testid="listener-address-from-env">
          {view.running ? `This run listens on ${view.address}:${view.port}, set by ` : "This run's address is set by "}
          <code>PARTNER_LISTENER_ADDR</code>; the address above is the one in the settings, used when that variable is not set.
        </p>
      )}
      {view.problem && !save.isSuccess && <ErrorPanel error={view.problem} compact />}
      {save.isError && <ErrorPanel error={save.error} compact />}
    </form>
  );
}

function RetentionSettings({ view }: { view: ListenerView }) {
  const saved = useSaved();
  const field = (n: number | null) => (n === null ? "" : String(n));
  const sizeField = (n: number | null) => (n === null ? "" : formatSize(n));
  const [maxCaptures, setMaxCaptures] = useState(field(view.retention.maxCaptures));
  const [maxBytes, setMaxBytes] = useState(sizeField(view.retention.maxBytes));
  const [maxAgeDays, setMaxAgeDays] = useState(field(view.retention.maxAgeDays));
  const [junkRate, setJunkRate] = useState(field(view.retention.junkRate));
  const savedKey = `${view.retention.maxCaptures} ${view.retention.maxBytes} ${view.retention.maxAgeDays} ${view.retention.junkRate}`;
  const [shownKey, setShownKey] = useState(savedKey);
  if (shownKey !== savedKey) {
    setShownKey(savedKey);
    setMaxCaptures(field(view.retention.maxCaptures));
    setMaxBytes(sizeField(view.retention.maxBytes));
    setMaxAgeDays(field(view.retention.maxAgeDays));
    setJunkRate(field(view.retention.junkRate));
  }
  const parsed = parseRetention(maxCaptures, maxAgeDays, maxBytes, junkRate);
  const junk = view.junk ? describeJunk(view.junk) : null;
  const save = useMutation({ mutationFn: api.setRetention, onSuccess: saved });
  return (
    <form
      className="settings-form"
      aria-label="Capture retention"
      onSubmit={(e) => {
        e.preventDefault();
        if (parsed.form) save.mutate(parsed.form);
      }}
    >
      <div className="form-row">
        <label>
          Max captures
          <input data-testid="retention-max-captures" inputMode="numeric" placeholder="no limit" value={maxCaptures} size={10} onChange={(e) => setMaxCaptures(e.target.value)} aria-invalid={parsed.problems?.maxCaptures !== undefined} />
          {parsed.problems?.maxCaptures && <span className="field-error small">{parsed.problems.maxCaptures}</span>}
        </label>
        <label>
          Max size
          <input data-testid="retention-max-bytes" placeholder="no limit" value={maxBytes} size={8} onChange={(e) => setMaxBytes(e.target.value)} aria-invalid={parsed.problems?.maxBytes !== undefined} />
          {parsed.problems?.maxBytes && <span className="field-error small">{parsed.problems.maxBytes}</span>}
        </label>
        <label>
          Max age (days)
          <input data-testid="retention-max-age" inputMode="numeric" placeholder="no limit" value={maxAgeDays} size={6} onChange={(e) => setMaxAgeDays(e.target.value)} aria-invalid={parsed.problems?.maxAgeDays !== undefined} />
          {parsed.problems?.maxAgeDays && <span className="field-error small">{parsed.problems.maxAgeDays}</span>}
        </label>
        <label title="Junk (other paths and methods, failed or absent signatures) past this many a second is answered and counted, one in a hundred kept as a sample; empty stores every request">
          Junk stored a second
          <input data-testid="retention-junk-rate" inputMode="numeric" placeholder="all" value={junkRate} size={5} onChange={(e) => setJunkRate(e.target.value)} aria-invalid={parsed.problems?.junkRate !== undefined} />
          {parsed.problems?.junkRate && <span className="field-error small">{parsed.problems.junkRate}</span>}
        </label>
        <button type="submit" data-testid="retention-save" disabled={parsed.form === null || save.isPending}>
          {save.isPending ? "Saving…" : "Save retention"}
        </button>
        {save.isSuccess && <span className="ok small" role="status">Saved: keeps {describeRetention(save.data.retention)}.</span>}
      </div>
      <p className="muted small">
        Empty is no limit. Past a limit, junk goes first (other paths and methods, failed or absent signatures; it holds at most a tenth of either limit), then notifications of subscriptions
        without a key here, validly signed ones last; oldest first in each. A flood of junk past its rate a second is answered and counted, one in a hundred kept as a sample.
      </p>
      {junk && (
        <p className="muted small" data-testid="retention-junk" role="status">
          {junk}
        </p>
      )}
      {save.isError && <ErrorPanel error={save.error} compact />}
    </form>
  );
}
