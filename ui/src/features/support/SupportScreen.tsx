/**
 * The support desk: the active connection's transactions, copied into a local encrypted index
 * by one sync (progress, cancel, resumable), then asked anything at once — filters, text,
 * counts per status and product, an export of the filtered set — without a page walk. Every
 * answer says "as of" the last sync, and a refresh is one click.
 */
import { keepPreviousData, useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect, useRef, useState, type FormEvent } from "react";
import { api, type ExportFormat, type SupportCount, type SupportFilter, type SupportIndexView, type Progress, type Transaction } from "../../platform";
import { ErrorPanel } from "../../components/ErrorPanel";
import { FileJobStatus, useFileJob } from "../../components/FileJob";
import { tableTime } from "../../lib/format";
import { Id } from "../../components/Id";
import { navigate } from "../../lib/router";
import {
  EMPTY_FORM,
  forgetText,
  formProblems,
  indexSummary,
  isFiltered,
  loanNumber,
  needsProductionConsent,
  PAGE_SIZE,
  PRODUCTION_CONSENT,
  rangeText,
  requestingPartyName,
  RESPONSE_STATUSES,
  supportFilter,
  syncFraction,
  syncLabel,
  syncPhaseText,
  syncResultText,
  SYNC_REQUEST_EVENT,
  takeSyncRequest,
  statusChoices,
  withChip,
  workspaceSourceText,
  type SupportForm,
} from "./supportModel";
import { refusal, useTeam } from "../../lib/team";
import { cancelSync, forgetSyncOutcome, startSync, useSyncState } from "./syncStore";

const INDEX_KEY = ["support", "index"] as const;

/** The shared sync (see syncStore), as this screen drives it. */
function useSync(onDone: (index: SupportIndexView) => void) {
  const state = useSyncState();
  const done = useRef(onDone);
  useEffect(() => {
    done.current = onDone;
  });
  return {
    running: state.jobId !== null,
    progress: state.progress,
    result: state.result,
    error: state.error,
    start: (allowProduction: boolean) => startSync(allowProduction, (r) => done.current(r.index)),
    cancel: cancelSync,
  };
}

export function SupportScreen() {
  const client = useQueryClient();
  const index = useQuery({ queryKey: INDEX_KEY, queryFn: api.supportIndex, retry: false });
  const view = index.data;
  const [form, setForm] = useState<SupportForm>(EMPTY_FORM);
  const [applied, setApplied] = useState<SupportFilter>(() => supportFilter(EMPTY_FORM));
  const [offset, setOffset] = useState(0);
  const [problems, setProblems] = useState<string[]>([]);

  const ready = view?.exists ?? false;
  const page = useQuery({
    queryKey: ["support", "find", applied, offset],
    queryFn: () => api.supportFind({ filter: applied, offset, limit: PAGE_SIZE }),
    enabled: ready,
    placeholderData: keepPreviousData,
    retry: false,
  });
  const counts = useQuery({
    queryKey: ["support", "counts", applied],
    queryFn: () => api.supportCounts(applied),
    enabled: ready,
    placeholderData: keepPreviousData,
    retry: false,
  });

  const afterChange = (next: SupportIndexView) => {
    // The answers and counts are read again by the sync's and forget's declarations.
    client.setQueryData(INDEX_KEY, next);
  };

  const sync = useSync(afterChange);
  // Joined to a team workspace: a role that may not sync sees the button disabled, with why.
  const team = useTeam();
  const syncRefused = view?.workspace ? refusal(team.data, "sync-index") : null;
  useEffect(() => forgetSyncOutcome, []);
  const [consent, setConsent] = useState(false);
  const beginSync = (current: SupportIndexView) => {
    if (needsProductionConsent(current)) setConsent(true);
    // An index that exists was agreed to when it was made.
    else sync.start(current.production && current.exists);
  };

  // "Sync the local index" from the command palette, before or after this screen opened.
  const [asked, setAsked] = useState(0);
  useEffect(() => {
    const onAsk = () => setAsked((n) => n + 1);
    window.addEventListener(SYNC_REQUEST_EVENT, onAsk);
    return () => window.removeEventListener(SYNC_REQUEST_EVENT, onAsk);
  }, []);
  const begin = useRef(beginSync);
  useEffect(() => {
    begin.current = beginSync;
  });
  useEffect(() => {
    if (view && takeSyncRequest()) begin.current(view);
  }, [view, asked]);

  const apply = (next: SupportForm) => {
    const found = formProblems(next);
    setProblems(found);
    if (found.length > 0) return;
    setApplied(supportFilter(next));
    setOffset(0);
  };
  const onSubmit = (e: FormEvent) => {
    e.preventDefault();
    apply(form);
  };
  const onChip = (kind: "status" | "product", key: string) => {
    const next = withChip(form, kind, key);
    setForm(next);
    apply(next);
  };
  const clear = () => {
    setForm(EMPTY_FORM);
    apply(EMPTY_FORM);
  };

  if (index.isError) {
    return (
      <div className="page">
        <h1>Support</h1>
        <ErrorPanel error={index.error} onRetry={() => void index.refetch()} />
      </div>
    );
  }
  if (!view) return <div className="page muted">Reading the local index…</div>;

  const items = page.data?.items ?? [];
  const total = page.data?.total ?? 0;
  const asOf = page.data?.asOf ?? view.asOf;

  return (
    <div className="page support">
      <div className="toolbar">
        <h1>Support</h1>
        <span className="conn-name">{view.connectionLabel}</span>
        <span className="muted small" data-testid="support-summary">{indexSummary(view)}</span>
        <span className="spacer" />
        {sync.running ? (
          <SyncProgress progress={sync.progress} onCancel={sync.cancel} />
        ) : (
          <button type="button" className="primary" data-testid="support-sync" onClick={() => beginSync(view)} disabled={consent || syncRefused !== null}>
            {syncLabel(view)}
          </button>
        )}
        {view.exists && !view.workspace && <ForgetButton view={view} onForgotten={afterChange} disabled={sync.running} />}
      </div>
      {view.workspace ? (
        <p className="small support-path" data-testid="support-workspace">{workspaceSourceText(view)}</p>
      ) : (
        view.exists && (
          <p className="muted small support-path" title={view.path}>
            <span className="mono">{view.path}</span> · encrypted; key in the keychain
          </p>
        )
      )}
      {syncRefused !== null && <p className="small caution" data-testid="support-sync-refused">{syncRefused}</p>}
      {consent && (
        <div className="confirm-bar" role="alertdialog" aria-label="Make a local copy of production data">
          <span>{PRODUCTION_CONSENT}</span>
          <button
            type="button"
            className="primary"
            onClick={() => {
              setConsent(false);
              sync.start(true);
            }}
          >
            Make the copy
          </button>
          <button type="button" onClick={() => setConsent(false)}>Cancel</button>
        </div>
      )}
      {sync.error !== null && <ErrorPanel error={sync.error} compact />}
      {sync.result && (
        <p className={`small ${sync.result.cancelled ? "muted" : "ok"}`} role="status" data-testid="sync-result">{syncResultText(sync.result)}</p>
      )}
      {sync.result?.fallbacks.map((note) => (
        <p key={note} className="small caution" data-testid="sync-fallback">
          During this sync: {note}.
        </p>
      ))}

      {!view.exists && view.workspace ? (
        <div className="notice">
          The team's index is empty: it fills at the servers' own syncs, or when a member whose role may sync it (support and up) does.
        </div>
      ) : !view.exists ? (
        <div className="notice">
          No local copy of {view.connectionLabel}'s transactions yet. Make one to find any transaction by status, product, loan
          field or text in a moment; it is kept encrypted on this machine, its key in the keychain.
        </div>
      ) : (
        <>
          <FilterForm form={form} setForm={setForm} onSubmit={onSubmit} onClear={clear} products={counts.data?.byProduct ?? []} statuses={counts.data?.byStatus ?? []} problems={problems} />
          {counts.isError && <ErrorPanel error={counts.error} compact />}
          {counts.data && (
            <div className="support-chips" aria-label="Counts">
              <span className="small muted">{counts.data.total.toLocaleString("en-US")} {counts.data.total === 1 ? "transaction matches" : "transactions match"}</span>
              <Chips title="Status" counts={counts.data.byStatus} active={applied.status} onPick={(key) => onChip("status", key)} />
              <Chips title="Product" counts={counts.data.byProduct} active={applied.product} onPick={(key) => onChip("product", key)} />
            </div>
          )}
          {page.isError ? (
            <ErrorPanel error={page.error} compact onRetry={() => void page.refetch()} />
          ) : (
            <Results items={items} />
          )}
          <div className="pager">
            <button type="button" aria-label="Previous page" onClick={() => setOffset(Math.max(0, offset - PAGE_SIZE))} disabled={offset === 0 || page.isFetching}>‹ Prev</button>
            <button type="button" aria-label="Next page" onClick={() => setOffset(offset + PAGE_SIZE)} disabled={offset + PAGE_SIZE >= total || page.isFetching}>Next ›</button>
            <span className="page-label small" data-testid="support-range">{page.data ? rangeText(page.data.offset, items.length, total, asOf) : "Finding…"}</span>
            {isFiltered(applied) && <span className="muted small">filtered</span>}
            <span className="spacer" />
            <SupportExport filter={applied} />
          </div>
        </>
      )}
    </div>
  );
}

function SyncProgress({ progress, onCancel }: { progress: Progress | null; onCancel: () => void }) {
  const fraction = syncFraction(progress);
  return (
    <span className="job-progress" role="status" data-testid="sync-progress">
      {fraction !== null ? <progress max={1} value={fraction} aria-label="Sync progress" /> : <progress aria-label="Sync progress" />}
      <span className="small">{syncPhaseText(progress)}</span>
      <button type="button" onClick={onCancel}>Cancel</button>
    </span>
  );
}

function ForgetButton({ view, onForgotten, disabled }: { view: SupportIndexView; onForgotten: (next: SupportIndexView) => void; disabled: boolean }) {
  const [confirming, setConfirming] = useState(false);
  const [pending, setPending] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const forget = () => {
    setPending(true);
    setError(null);
    api.supportForget().then(
      (next) => {
        setConfirming(false);
        onForgotten(next);
      },
      setError,
    ).finally(() => setPending(false));
  };
  return (
    <>
      <button type="button" className="danger" onClick={() => setConfirming(true)} disabled={disabled || confirming}>
        Forget this connection's data
      </button>
      {confirming && (
        <div className="confirm-bar" role="alertdialog" aria-label="Forget this connection's data">
          <span>{forgetText(view)}</span>
          <button type="button" className="primary danger-fill" onClick={forget} disabled={pending}>Forget</button>
          <button type="button" onClick={() => setConfirming(false)} disabled={pending}>Cancel</button>
          {error !== null && <ErrorPanel error={error} compact />}
        </div>
      )}
    </>
  );
}

function FilterForm({
  form,
  setForm,
  onSubmit,
  onClear,
  products,
  statuses,
  problems,
}: {
  form: SupportForm;
  setForm: (next: SupportForm) => void;
  onSubmit: (e: FormEvent) => void;
  onClear: () => void;
  products: SupportCount[];
  statuses: SupportCount[];
  problems: string[];
}) {
  const set = <K extends keyof SupportForm>(key: K, value: SupportForm[K]) => setForm({ ...form, [key]: value });
  const text = (key: Exclude<keyof SupportForm, "loan" | "status" | "responseStatus">, label: string, type = "text") => (
    <label>
      {label}
      <input type={type} aria-label={label} value={form[key]} onChange={(e) => set(key, e.target.value)} />
    </label>
  );
  const more = [form.createdSince, form.createdBefore, form.updatedSince, form.updatedBefore, form.partnerStatus, form.referenceNumber, form.requestingParty].filter((v) => v.trim() !== "").length + form.loan.length;
  return (
    <form className="support-filters" aria-label="Filter" onSubmit={onSubmit}>
      <div className="support-filter-row">
        <label className="grow">
          Text
          <input type="search" aria-label="Text" placeholder="words of the request or response" value={form.text} onChange={(e) => set("text", e.target.value)} />
        </label>
        <label>
          Status
          <select aria-label="Status" value={form.status} onChange={(e) => set("status", e.target.value)}>
            <option value="">any</option>
            {statusChoices(form.status, statuses).map((s) => <option key={s} value={s}>{s}</option>)}
          </select>
        </label>
        <label>
          Product
          <input aria-label="Product" list="support-products" placeholder="id or name" value={form.product} onChange={(e) => set("product", e.target.value)} />
          <datalist id="support-products">
            {products.map((p) => <option key={p.key} value={p.key}>{p.label}</option>)}
          </datalist>
        </label>
        {text("requestType", "Request type")}
        <label>
          Response
          <select aria-label="Response status" value={form.responseStatus} onChange={(e) => set("responseStatus", e.target.value)}>
            <option value="">any</option>
            {RESPONSE_STATUSES.map((s) => <option key={s} value={s}>{s}</option>)}
          </select>
        </label>
        <span className="support-filter-actions">
          <button type="submit" className="primary">Find</button>
          <button type="button" onClick={onClear}>Clear</button>
        </span>
      </div>
      <details className="support-more">
        <summary className="small">More filters{more > 0 ? ` (${more} set)` : ""}: times, partner status, reference, requesting party, loan fields</summary>
        <div className="support-filter-row">
          {text("createdSince", "Created from", "datetime-local")}
          {text("createdBefore", "Created before", "datetime-local")}
          {text("updatedSince", "Updated from", "datetime-local")}
          {text("updatedBefore", "Updated before", "datetime-local")}
          {text("partnerStatus", "Partner status")}
          {text("referenceNumber", "Reference number")}
          {text("requestingParty", "Requesting party")}
          <fieldset className="support-loan">
            <legend>Loan fields (request.loan.FIELD = VALUE)</legend>
            {form.loan.map((row, i) => (
              <span className="support-loan-row" key={i}>
                <input aria-label={`Loan field ${i + 1}`} placeholder="loanNumber" className="mono" value={row.field} onChange={(e) => set("loan", form.loan.map((r, j) => (j === i ? { ...r, field: e.target.value } : r)))} />
                <span aria-hidden>=</span>
                <input aria-label={`Loan value ${i + 1}`} placeholder="value" value={row.value} onChange={(e) => set("loan", form.loan.map((r, j) => (j === i ? { ...r, value: e.target.value } : r)))} />
                <button type="button" className="link danger" aria-label={`Remove loan field ${i + 1}`} onClick={() => set("loan", form.loan.filter((_, j) => j !== i))}>Remove</button>
              </span>
            ))}
            <button type="button" onClick={() => set("loan", [...form.loan, { field: "", value: "" }])}>Add loan field</button>
          </fieldset>
        </div>
      </details>
      {problems.length > 0 && (
        <ul className="field-error small" role="alert">
          {problems.map((p) => <li key={p}>{p}</li>)}
        </ul>
      )}
    </form>
  );
}

function Chips({ title, counts, active, onPick }: { title: string; counts: SupportCount[]; active: string | null; onPick: (key: string) => void }) {
  if (counts.length === 0) return null;
  return (
    <span className="support-chip-group" role="group" aria-label={`${title} counts`}>
      <span className="small muted">{title}</span>
      {counts.map((c) => (
        <button type="button" key={c.key} className={`support-chip${active === c.key ? " active" : ""}`} aria-pressed={active === c.key} onClick={() => onPick(c.key)} title={c.key}>
          {c.label} <b>{c.count.toLocaleString("en-US")}</b>
        </button>
      ))}
    </span>
  );
}

function Results({ items }: { items: Transaction[] }) {
  return (
    <div className="grid-wrap support-results">
      <table className="grid compact" aria-label="Support results">
        <thead>
          <tr>
            <th>Id</th><th>Status</th><th>Product</th><th>Loan number</th><th>Requesting party</th><th>Created</th><th>Updated</th>
          </tr>
        </thead>
        <tbody>
          {items.length === 0 && (
            <tr><td colSpan={7} className="empty">Nothing in the local index matches.</td></tr>
          )}
          {items.map((t) => (
            <tr
              key={t.id}
              tabIndex={0}
              data-testid="support-row"
              onClick={() => navigate("transactions", t.id)}
              onKeyDown={(e) => {
                if (e.key === "Enter") navigate("transactions", t.id);
              }}
            >
              <td className="mono"><Id value={t.id} compact /></td>
              <td>{t.status ? <span className={`pill ${t.status}`}>{t.status}</span> : "—"}</td>
              <td><span className="cell-clip" title={t.product?.id ?? undefined}>{t.product?.name ?? t.product?.id ?? "—"}</span></td>
              <td className="mono">{loanNumber(t) ?? "—"}</td>
              <td><span className="cell-clip">{requestingPartyName(t) ?? "—"}</span></td>
              <td>{t.created ? tableTime(t.created) : "—"}</td>
              <td>{t.updated ? tableTime(t.updated) : "—"}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function SupportExport({ filter }: { filter: SupportFilter }) {
  const [format, setFormat] = useState<ExportFormat>("csv");
  const job = useFileJob("support-export");
  return (
    <span className="export-bar">
      <select aria-label="Export format" value={format} onChange={(e) => setFormat(e.target.value as ExportFormat)} disabled={job.running}>
        <option value="csv">CSV</option>
        <option value="json">JSON</option>
      </select>
      <button type="button" onClick={() => job.run((jobId) => api.supportExport({ jobId, format, filter }))} disabled={job.running}>
        {job.running ? "Exporting…" : "Export filtered…"}
      </button>
      <FileJobStatus job={job} unit="transactions" verb="exported" />
    </span>
  );
}
