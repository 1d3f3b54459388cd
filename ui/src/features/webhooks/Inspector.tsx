/**
 * The live inspector: a virtualized list (TanStack Virtual) over the capture store, newest
 * first. The page holds only the blocks of rows on screen; counts, filter choices and search
 * are the store's. It follows new arrivals while the user is at the top and holds still when
 * they scroll away, saying how many arrived meanwhile.
 */
import { memo, useCallback, useEffect, useMemo, useRef, useState, type KeyboardEvent, type RefObject } from "react";
import { api, type CaptureFileFormat, type CaptureSummary, type CaptureFilter } from "../../platform";
import { ErrorPanel } from "../../components/ErrorPanel";
import { FileJobStatus, useFileJob } from "../../components/FileJob";
import { shortTime, shortId } from "../../lib/format";
import { Id } from "../../components/Id";
import { useFixedRows } from "../../lib/fixedRows";
import { refusal, useTeam } from "../../lib/team";
import {
  blocksFor,
  captureCount,
  drawnCount,
  drawnRow,
  isFiltered,
  NO_FILTER,
  rowAt,
  shortResource,
  shouldFollow,
  storeFilter,
  VERDICTS,
  type Expanded,
  type FilterForm,
} from "./inspectorModel";
import { CaptureDetailPane } from "./CaptureDetailPane";
import { SendAgain } from "./SendAgain";
import { useInspector, type InspectorData } from "./useInspector";

const ROW_HEIGHT = 28;
/** Rows drawn beyond the visible ones: enough for keyboard moves, few enough that a jump
 * (scrolling to the middle, a new filter) rebuilds little. */
const OVERSCAN = 3;

export function Inspector({ selectedCapture = null }: { selectedCapture?: number | null }) {
  const [form, setForm] = useState<FilterForm>(NO_FILTER);
  const [grouped, setGrouped] = useState(false);
  const [following, setFollowing] = useState(true);
  const [expanded, setExpanded] = useState<Expanded | null>(null);
  // Typing asks the store at once, without waiting for a pause: `useInspector` runs one read
  // at a time and, for the keystrokes typed meanwhile, one more, so results follow typing and
  // a burst never queues a read per keystroke.
  const filter = useMemo(() => storeFilter(form), [form]);
  const data = useInspector(filter, grouped, following);
  // A team workspace's captures: the file and send-again tools work on this machine's store,
  // so they are left out while the inspector shows the workspace's.
  const joined = useTeam().data?.joined === true;
  const [selectedId, setSelectedId] = useState<number | null>(selectedCapture);
  // A capture named by the route (`#/webhooks/<id>`, a delivery's link) is shown.
  const [routed, setRouted] = useState(selectedCapture);
  if (routed !== selectedCapture) {
    setRouted(selectedCapture);
    if (selectedCapture !== null) setSelectedId(selectedCapture);
  }
  // The capture shown before this one: what "compare" offers first.
  const [previousId, setPreviousId] = useState<number | null>(null);
  const shownId = useRef(selectedId);
  useEffect(() => {
    shownId.current = selectedId;
  }, [selectedId]);
  const select = useCallback((id: number) => {
    if (shownId.current !== null && shownId.current !== id) setPreviousId(shownId.current);
    setSelectedId(id);
  }, []);
  const scrollRef = useRef<HTMLDivElement>(null);

  /** A new filter shows its newest matches, from the top. */
  const change = (next: Partial<FilterForm>) => {
    setForm((cur) => ({ ...cur, ...next }));
    setExpanded(null);
    setFollowing(true);
    if (scrollRef.current) scrollRef.current.scrollTop = 0;
  };
  const jumpToNewest = () => {
    setFollowing(true);
    setExpanded(null);
    if (scrollRef.current) scrollRef.current.scrollTop = 0;
    data.refresh();
  };
  const toggleExpanded = (index: number, row: CaptureSummary) => {
    if (expanded?.id === row.id) {
      setExpanded(null);
      return;
    }
    api.captureAttempts(row.id).then((attempts) => setExpanded({ index, id: row.id, attempts }), () => setExpanded(null));
  };

  const facets = data.facets;
  const counts = facets?.verdicts ?? {};
  const stored = facets?.stored ?? data.total;
  const newest = rowAt(data.blocks, 0);

  return (
    <div className="inspector">
      <div className="toolbar secondary filter-bar">
        <select aria-label="Verdict filter" value={form.verdict} onChange={(e) => change({ verdict: e.target.value as FilterForm["verdict"] })}>
          <option value="all">All verdicts</option>
          {VERDICTS.map((v) => <option key={v} value={v}>{v}</option>)}
        </select>
        <Choice label="Event type filter" all="All events" value={form.eventType} choices={facets?.eventTypes ?? []} onChange={(eventType) => change({ eventType })} />
        <Choice label="Resource type filter" all="All resources" value={form.resourceType} choices={facets?.resourceTypes ?? []} onChange={(resourceType) => change({ resourceType })} show={shortResource} />
        <Choice label="Subscription filter" all="All subscriptions" value={form.subscriptionId} choices={facets?.subscriptions ?? []} onChange={(subscriptionId) => change({ subscriptionId })} show={shortId} />
        <input className="search" type="search" aria-label="Search captures" placeholder="Search body, headers, ids…" value={form.text} onChange={(e) => change({ text: e.target.value })} />
        <span className="time-range" role="group" aria-label="Received between">
          <input type="datetime-local" step="1" aria-label="Received from" title="Received from" value={form.since} onChange={(e) => change({ since: e.target.value })} />
          <span className="muted small">to</span>
          <input type="datetime-local" step="1" aria-label="Received until" title="Received until" value={form.until} onChange={(e) => change({ until: e.target.value })} />
        </span>
        {isFiltered(form) && (
          <button type="button" className="link" onClick={() => change(NO_FILTER)}>Clear filter</button>
        )}
      </div>
      <div className="toolbar secondary">
        <div className="counts" aria-label="Counts by verdict">
          {VERDICTS.filter((v) => (counts[v] ?? 0) > 0 || v === "valid" || v === "invalid-signature").map((v) => (
            <button type="button" key={v} className={`pill ${v} count`} data-verdict={v} aria-pressed={form.verdict === v} onClick={() => change({ verdict: form.verdict === v ? "all" : v })}>
              {v} <b>{(counts[v] ?? 0).toLocaleString("en-US")}{facets?.capped ? "+" : ""}</b>
            </button>
          ))}
        </div>
        <label className="check-line small">
          <input type="checkbox" aria-label="Group attempts" checked={grouped} onChange={(e) => { setGrouped(e.target.checked); setExpanded(null); }} />
          <span>Group attempts</span>
        </label>
        <span className="spacer" />
        <span className="muted small" data-testid="capture-count">
          {data.total.toLocaleString("en-US")}{data.capped ? "+" : ""}{grouped ? " notifications" : ""} of {stored.toLocaleString("en-US")}
        </span>
        {data.unsearched > 0 && (
          <span className="muted small" role="status" data-testid="search-unsearched" title="The store is indexing captures for search (after an import or an upgrade); the search looked at the newest of them">
            still indexing: {data.unsearched.toLocaleString("en-US")} older not searched yet
          </span>
        )}
        {!following && (
          <button type="button" onClick={jumpToNewest} data-testid="jump-to-newest">
            {data.arrivedAway > 0 ? `${data.arrivedAway.toLocaleString("en-US")} new · jump to newest` : "Paused · jump to newest"}
          </button>
        )}
        {!joined && <CaptureFiles filter={filter} filtered={isFiltered(form)} shown={data.total} capped={data.capped} selectedId={selectedId} onImported={data.refresh} />}
        {!joined && <SendAgain filter={filter} filtered={isFiltered(form)} shown={data.total} capped={data.capped} selectedId={selectedId} onSent={data.refresh} />}
        <ClearCaptures
          filter={isFiltered(form) ? filter : null}
          shown={data.total}
          shownCapped={data.capped}
          stored={stored}
          newestShown={newest?.id ?? null}
          onCleared={() => {
            setSelectedId(null);
            setExpanded(null);
            data.refresh();
          }}
        />
      </div>
      {data.missed > 0 && (
        <p className="muted small pad-x" role="status" data-testid="live-gap">
          {captureCount(data.missed)} arrived faster than the page could show them live; the list was read again from the store, so none is missing.
        </p>
      )}
      {data.error !== null && <ErrorPanel error={data.error} onRetry={data.refresh} />}
      <div className="split">
        <CaptureList
          data={data}
          grouped={grouped}
          expanded={expanded}
          following={following}
          selectedId={selectedId}
          scrollRef={scrollRef}
          filtered={isFiltered(form)}
          onFollowingChange={setFollowing}
          onSelect={select}
          onToggle={toggleExpanded}
        />
        <aside className="detail-panel wide" aria-label="Capture detail">
          {selectedId !== null ? (
            <CaptureDetailPane id={selectedId} onSelect={select} filter={filter} shown={data.total} compareWith={previousId} />
          ) : (
            <p className="muted pad">Select a notification to see its headers, body, signature check, attempts and forwards.</p>
          )}
        </aside>
      </div>
    </div>
  );
}

/** A filter choice read from the store. */
function Choice({ label, all, value, choices, onChange, show = (v) => v }: { label: string; all: string; value: string; choices: string[]; onChange: (value: string) => void; show?: (value: string) => string }) {
  const options = value !== "" && !choices.includes(value) ? [value, ...choices] : choices;
  return (
    <select aria-label={label} value={value} onChange={(e) => onChange(e.target.value)}>
      <option value="">{all}</option>
      {options.map((c) => <option key={c} value={c} title={c}>{show(c)}</option>)}
    </select>
  );
}

interface CaptureListProps {
  data: InspectorData;
  grouped: boolean;
  expanded: Expanded | null;
  following: boolean;
  selectedId: number | null;
  scrollRef: RefObject<HTMLDivElement | null>;
  filtered: boolean;
  onFollowingChange: (following: boolean) => void;
  onSelect: (id: number) => void;
  onToggle: (index: number, row: CaptureSummary) => void;
}

/** The virtualized list on its own (and memoized): a scroll re-renders these rows only, not
 * the toolbar, the counts or the detail pane around them. */
const CaptureList = memo(function CaptureList({ data, grouped, expanded, following, selectedId, scrollRef, filtered, onFollowingChange, onSelect, onToggle }: CaptureListProps) {
  const { total, blocks, want, loading } = data;
  const count = drawnCount(total, expanded);
  const { rows: virtualItems, totalHeight, scrollToIndex } = useFixedRows({ count, rowHeight: ROW_HEIGHT, overscan: OVERSCAN, scrollRef });
  const first = virtualItems[0]?.index ?? 0;
  const last = virtualItems[virtualItems.length - 1]?.index ?? 0;

  // The blocks under the window are read as the window moves; once they are in (this runs
  // again when blocks arrive), the one either side, for the next scroll.
  useEffect(() => {
    const firstRow = drawnRow(first, expanded);
    const lastRow = drawnRow(last, expanded);
    const from = firstRow.kind === "row" ? firstRow.index : firstRow.parentIndex;
    const to = lastRow.kind === "row" ? lastRow.index : lastRow.parentIndex;
    const { inView, around } = blocksFor(from, to, total);
    want(inView.every((b) => blocks.has(b)) ? [...inView, ...around] : inView);
  }, [first, last, total, blocks, expanded, want]);

  useEffect(() => {
    if (following && scrollRef.current) scrollRef.current.scrollTop = 0;
  }, [blocks, following, scrollRef]);

  const slots = Math.max(1, virtualItems.length);
  const selectedIndex = useMemo(() => {
    if (selectedId === null) return -1;
    for (const item of virtualItems) {
      const row = drawnRow(item.index, expanded);
      const capture = row.kind === "row" ? rowAt(blocks, row.index) : row.attempt;
      if (capture?.id === selectedId) return item.index;
    }
    return -1;
  }, [selectedId, virtualItems, blocks, expanded]);

  const captureAt = (i: number): CaptureSummary | undefined => {
    const row = drawnRow(i, expanded);
    return row.kind === "row" ? rowAt(blocks, row.index) : row.attempt;
  };

  const onKey = (e: KeyboardEvent<HTMLDivElement>) => {
    if (e.key !== "ArrowDown" && e.key !== "ArrowUp" && e.key !== "Home" && e.key !== "End") return;
    e.preventDefault();
    let next = selectedIndex < 0 ? first : selectedIndex;
    if (e.key === "ArrowDown") next = Math.min(count - 1, next + 1);
    if (e.key === "ArrowUp") next = Math.max(0, next - 1);
    if (e.key === "Home") next = 0;
    if (e.key === "End") next = count - 1;
    scrollToIndex(next);
    const capture = captureAt(next);
    if (capture) onSelect(capture.id);
  };

  return (
    <div className="capture-list">
      <div className="capture-row head" role="presentation">
        <span>Time</span><span>Verdict</span><span>Event</span><span>Resource</span><span>Instance</span><span>Resource id</span><span>{grouped ? "Tries" : "Att."}</span>
      </div>
      <div
        ref={scrollRef}
        className="capture-scroll"
        tabIndex={0}
        role="listbox"
        aria-label="Captured notifications"
        aria-busy={loading}
        onKeyDown={onKey}
        onScroll={(e) => onFollowingChange(shouldFollow(e.currentTarget.scrollTop))}
      >
        <div style={{ height: totalHeight, position: "relative" }}>
          {virtualItems.map((item) => {
            const row = drawnRow(item.index, expanded);
            // Keyed by slot in the window, not by capture: a scroll or a new filter
            // updates the text of the rows already in the page instead of replacing them.
            const key = item.index % slots;
            if (row.kind === "attempt") {
              return <AttemptRow key={key} capture={row.attempt} number={row.number} top={item.top} selected={row.attempt.id === selectedId} onSelect={onSelect} />;
            }
            const c = rowAt(blocks, row.index);
            if (!c) return <div key={key} className="capture-row pending" style={{ height: ROW_HEIGHT, transform: `translateY(${item.top}px)` }} aria-hidden="true" />;
            return (
              <CaptureRow
                key={key}
                capture={c}
                top={item.top}
                selected={c.id === selectedId}
                grouped={grouped}
                open={expanded?.id === c.id}
                onSelect={onSelect}
                onToggle={() => onToggle(row.index, c)}
              />
            );
          })}
        </div>
        {!loading && total === 0 && (
          <p className="muted pad">
            {filtered ? "No capture matches the filter." : "No notifications yet. Use Demo → New transaction to have the sandbox send one."}
          </p>
        )}
      </div>
    </div>
  );
});

const CaptureRow = memo(function CaptureRow({ capture: c, top, selected, grouped, open, onSelect, onToggle }: { capture: CaptureSummary; top: number; selected: boolean; grouped: boolean; open: boolean; onSelect: (id: number) => void; onToggle: () => void }) {
  const folded = grouped && c.groupAttempts > 1;
  return (
    <div
      role="option"
      aria-selected={selected}
      aria-expanded={folded ? open : undefined}
      data-capture-id={c.id}
      data-verdict={c.verdict}
      data-event-id={c.eventId}
      data-attempts={c.attempts}
      data-group-attempts={c.groupAttempts}
      className={`capture-row${selected ? " selected" : ""}`}
      style={{ height: ROW_HEIGHT, transform: `translateY(${top}px)` }}
      onClick={() => onSelect(c.id)}
    >
      <span className="mono">{shortTime(c.receivedAt)}</span>
      <span><span className={`pill ${c.verdict}`}>{c.verdict}</span></span>
      <span>{c.eventType}{c.replayed ? " ↻ replay" : ""}</span>
      <span>{shortResource(c.resourceType)}</span>
      <span>{c.instanceId}</span>
      <Id value={c.resourceId} compact className="mono" />
      <span>
        {folded ? (
          <button
            type="button"
            className="link fold"
            data-testid="fold"
            aria-label={`${open ? "Fold" : "Show"} ${c.groupAttempts} attempts`}
            onClick={(e) => {
              e.stopPropagation();
              onToggle();
            }}
          >
            {open ? "▾" : "▸"} {c.groupAttempts}
          </button>
        ) : grouped ? c.groupAttempts : c.attempts}
      </span>
    </div>
  );
});

function AttemptRow({ capture: c, number, top, selected, onSelect }: { capture: CaptureSummary; number: number; top: number; selected: boolean; onSelect: (id: number) => void }) {
  return (
    <div
      role="option"
      aria-selected={selected}
      data-attempt-of={c.id}
      data-capture-id={c.id}
      data-verdict={c.verdict}
      className={`capture-row attempt${selected ? " selected" : ""}`}
      style={{ height: ROW_HEIGHT, transform: `translateY(${top}px)` }}
      onClick={() => onSelect(c.id)}
    >
      <span className="mono">{shortTime(c.receivedAt)}</span>
      <span><span className={`pill ${c.verdict}`}>{c.verdict}</span></span>
      <span className="muted attempt-label">attempt {number}{c.replayed ? " ↻ replay" : ""}</span>
      <span className="attempt-number">{c.attempts}</span>
    </div>
  );
}

/**
 * "Clear all" and "Clear shown", each through a confirmation that names how many go. Only what
 * was there when the button was pressed goes: captures arriving while the user reads the
 * confirmation are kept.
 */
function ClearCaptures({ filter, shown, shownCapped, stored, newestShown, onCleared }: { filter: CaptureFilter | null; shown: number; shownCapped: boolean; stored: number; newestShown: number | null; onCleared: () => void }) {
  const [asked, setAsked] = useState<{ filter: CaptureFilter | null; count: number; atLeast: boolean; upToId: number } | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const ask = (which: CaptureFilter | null, count: number, atLeast = false) => {
    setDone(null);
    setError(null);
    const top = which === null ? api.inspectorPage({ filter: storeFilter(NO_FILTER), grouped: false, offset: 0, limit: 1, countPastPage: true }).then((p) => p.items[0]?.id ?? 0) : Promise.resolve(newestShown ?? 0);
    top.then((upToId) => setAsked({ filter: which, count, atLeast, upToId }), setError);
  };
  const confirm = () => {
    if (!asked) return;
    setBusy(true);
    api
      .clearCaptures({ filter: asked.filter, upToId: asked.upToId })
      .then(
        (result) => {
          setDone(`Deleted ${captureCount(result.cleared)}.`);
          setAsked(null);
          onCleared();
        },
        setError,
      )
      .finally(() => setBusy(false));
  };
  const team = useTeam().data;
  // A team workspace's captures are cleared for the whole team: developer and up.
  const why = refusal(team, "clear");
  const canClearShown = why === null && filter !== null && shown > 0;
  return (
    <>
      <span className="clear-bar">
        <button type="button" className="danger" data-testid="clear-shown" disabled={!canClearShown} onClick={() => ask(filter, shown, shownCapped)} title={why === null && filter === null ? "The filter shows every capture: use Clear all." : undefined}>
          Clear shown
        </button>
        <button type="button" className="danger" data-testid="clear-all" disabled={why !== null || stored === 0} onClick={() => ask(null, stored)}>
          Clear all
        </button>
        {why !== null && <span className="muted small" data-testid="clear-refused">{why}</span>}
        {done && <span className="ok small" role="status" data-testid="clear-result">{done}</span>}
      </span>
      {asked && (
        <div className="confirm-bar" role="alertdialog" aria-label="Delete captures" data-testid="clear-confirm">
          <span>
            {asked.filter === null
              ? `Delete every capture (${captureCount(asked.count)}) from ${team?.joined ? "the team workspace" : "the capture store"}?`
              : `Delete the ${captureCount(asked.count, asked.atLeast)} the filter shows?`}{" "}
            <span className="muted">{team?.joined ? "They are gone for good, for every member of the workspace." : <>They are gone for good, for <code>partner listen</code> too.</>}</span>
          </span>
          <button type="button" className="primary danger-fill" onClick={confirm} disabled={busy}>
            Delete {captureCount(asked.count, asked.atLeast)}
          </button>
          <button type="button" onClick={() => setAsked(null)} disabled={busy}>Cancel</button>
        </div>
      )}
      {error !== null && <ErrorPanel error={error} compact />}
    </>
  );
}

/** Export the shown (or the selected) captures as JSON Lines or HAR 1.2, and import JSON Lines,
 * through the desktop's dialogs, with progress and Cancel (on a line of their own below). */
function CaptureFiles({ filter, filtered, shown, capped, selectedId, onImported }: { filter: CaptureFilter; filtered: boolean; shown: number; capped: boolean; selectedId: number | null; onImported: () => void }) {
  const [choice, setChoice] = useState<`${CaptureFileFormat} ${"shown" | "selected"}`>("jsonl shown");
  const exporting = useFileJob("export-captures");
  const importing = useFileJob("import-captures");
  const busy = exporting.running || importing.running;
  const [format, which] = choice.split(" ") as [CaptureFileFormat, "shown" | "selected"];
  const onlySelected = which === "selected" && selectedId !== null;
  const finished = importing.result;
  useEffect(() => {
    if (finished && finished.count > 0) onImported();
  }, [finished, onImported]);
  const shownLabel = filtered ? `the ${shown.toLocaleString("en-US")}${capped ? "+" : ""} shown` : "all";
  return (
    <>
      <span className="export-bar">
        <select aria-label="Capture export" value={choice} onChange={(e) => setChoice(e.target.value as typeof choice)} disabled={busy}>
          <option value="jsonl shown">JSON Lines: {shownLabel}</option>
          <option value="har shown">HAR 1.2: {shownLabel}</option>
          <option value="jsonl selected" disabled={selectedId === null}>JSON Lines: the selected one</option>
          <option value="har selected" disabled={selectedId === null}>HAR 1.2: the selected one</option>
        </select>
        <button type="button" disabled={busy} onClick={() => exporting.run((jobId) => api.exportCaptures({ jobId, format, filter, ids: onlySelected ? [selectedId] : null }))}>
          Export…
        </button>
        <button type="button" disabled={busy} onClick={() => importing.run((jobId) => api.importCaptures(jobId))}>
          Import…
        </button>
      </span>
      {(exporting.running || exporting.result || exporting.error !== null || importing.running || importing.result || importing.error !== null) && (
        <span className="job-line">
          <FileJobStatus job={exporting} unit="captures" verb="exported" />
          <FileJobStatus job={importing} unit="captures" verb="imported" />
        </span>
      )}
    </>
  );
}
