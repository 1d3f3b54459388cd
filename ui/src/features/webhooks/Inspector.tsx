/**
 * The live inspector: a virtualized list (TanStack Virtual) of every capture, newest first,
 * that follows new arrivals while the user is at the top and pauses when they scroll away.
 */
import { useVirtualizer } from "@tanstack/react-virtual";
import { memo, useEffect, useMemo, useRef, useState, type KeyboardEvent, type RefObject } from "react";
import { api, type CaptureSummary, type ExportFormat, type ExportResult } from "../../platform";
import { ErrorPanel } from "../../components/ErrorPanel";
import { shortTime, shortId } from "../../lib/format";
import { applyFilter, captureCount, countByVerdict, NO_FILTER, shortResource, shouldFollow, shownIds, VERDICTS, type InspectorFilter } from "./inspectorModel";
import { CaptureDetailPane } from "./CaptureDetailPane";
import { useCaptures } from "./useCaptures";

const ROW_HEIGHT = 28;
/** Rows drawn beyond the visible ones: enough for keyboard moves, few enough that a jump
 * (scrolling to the middle, a new filter) rebuilds little. */
const OVERSCAN = 3;

export function Inspector({ selectedCapture = null }: { selectedCapture?: number | null }) {
  const { captures: list, error, loading, reload, removed } = useCaptures();
  const captures = list.rows;
  const [filter, setFilter] = useState<InspectorFilter>(NO_FILTER);
  const [selectedId, setSelectedId] = useState<number | null>(selectedCapture);
  // A capture named by the route (`#/webhooks/<id>`, a delivery's link) is shown.
  const [routed, setRouted] = useState(selectedCapture);
  if (routed !== selectedCapture) {
    setRouted(selectedCapture);
    if (selectedCapture !== null) setSelectedId(selectedCapture);
  }
  const [following, setFollowing] = useState(true);
  const scrollRef = useRef<HTMLDivElement>(null);

  // Filtered in the same render as the keystroke (a few ms at 100,000 captures): one commit
  // shows the new input text, the new count and the new rows together.
  const visible = useMemo(() => applyFilter(list, filter), [list, filter]);
  const counts = useMemo(() => countByVerdict(captures), [captures]);
  const eventTypes = useMemo(() => Array.from(new Set(captures.slice(0, 2000).map((c) => c.eventType))).sort(), [captures]);

  /** A new filter shows its newest matches: back to the top in the same task, so the list's
   * first render after the change is already the right window (no clamped scroll, no second
   * frame with the old window's rows). */
  const changeFilter = (next: InspectorFilter) => {
    setFilter(next);
    if (scrollRef.current) scrollRef.current.scrollTop = 0;
  };

  return (
    <div className="inspector">
      <div className="toolbar secondary">
        <select aria-label="Verdict filter" value={filter.verdict} onChange={(e) => changeFilter({ ...filter, verdict: e.target.value as InspectorFilter["verdict"] })}>
          <option value="all">All verdicts</option>
          {VERDICTS.map((v) => <option key={v} value={v}>{v}</option>)}
        </select>
        <select aria-label="Event type filter" value={filter.eventType} onChange={(e) => changeFilter({ ...filter, eventType: e.target.value })}>
          <option value="all">All events</option>
          {eventTypes.map((t) => <option key={t} value={t}>{t}</option>)}
        </select>
        <input aria-label="Filter captures" placeholder="Filter: resource, event id, product…" value={filter.text} onChange={(e) => changeFilter({ ...filter, text: e.target.value })} />
        <div className="counts" aria-label="Counts by verdict">
          {VERDICTS.filter((v) => counts[v] > 0 || v === "valid" || v === "invalid-signature").map((v) => (
            <button type="button" key={v} className={`pill ${v} count`} data-verdict={v} onClick={() => changeFilter({ ...filter, verdict: filter.verdict === v ? "all" : v })}>
              {v} <b>{counts[v]}</b>
            </button>
          ))}
        </div>
        <span className="spacer" />
        <span className="muted small" data-testid="capture-count">{visible.length} of {captures.length}</span>
        {!following && (
          <button type="button" onClick={() => { setFollowing(true); if (scrollRef.current) scrollRef.current.scrollTop = 0; }}>
            Paused · jump to newest
          </button>
        )}
        <ExportCaptures />
        <ClearCaptures
          shown={shownIds(visible, captures.length)}
          total={captures.length}
          onCleared={(ids) => {
            if (selectedId !== null && (ids === null || ids.includes(selectedId))) setSelectedId(null);
            removed(ids);
          }}
        />
      </div>
      {error !== null && <ErrorPanel error={error} onRetry={reload} />}
      <div className="split">
        <CaptureList
          visible={visible}
          total={captures.length}
          loading={loading}
          following={following}
          selectedId={selectedId}
          scrollRef={scrollRef}
          onFollowingChange={setFollowing}
          onSelect={setSelectedId}
        />
        <aside className="detail-panel wide" aria-label="Capture detail">
          {selectedId !== null ? (
            <CaptureDetailPane id={selectedId} onSelect={setSelectedId} shownIds={visible.map((c) => c.id)} />
          ) : (
            <p className="muted pad">Select a notification to see its headers, body, signature check and attempts.</p>
          )}
        </aside>
      </div>
    </div>
  );
}

interface CaptureListProps {
  visible: CaptureSummary[];
  total: number;
  loading: boolean;
  following: boolean;
  selectedId: number | null;
  scrollRef: RefObject<HTMLDivElement | null>;
  onFollowingChange: (following: boolean) => void;
  onSelect: (id: number) => void;
}

/** The virtualized list on its own (and memoized): a scroll re-renders these rows only, not
 * the toolbar, the counts or the detail pane around them. */
const CaptureList = memo(function CaptureList({ visible, total, loading, following, selectedId, scrollRef, onFollowingChange, onSelect }: CaptureListProps) {
  const virtualizer = useVirtualizer({
    count: visible.length,
    getScrollElement: () => scrollRef.current,
    estimateSize: () => ROW_HEIGHT,
    overscan: OVERSCAN,
  });

  useEffect(() => {
    if (following && scrollRef.current) scrollRef.current.scrollTop = 0;
  }, [visible, following, scrollRef]);

  const virtualItems = virtualizer.getVirtualItems();
  const slots = Math.max(1, virtualItems.length);
  const selectedIndex = selectedId === null ? -1 : visible.findIndex((c) => c.id === selectedId);

  const onKey = (e: KeyboardEvent<HTMLDivElement>) => {
    if (e.key !== "ArrowDown" && e.key !== "ArrowUp" && e.key !== "Home" && e.key !== "End") return;
    e.preventDefault();
    let next = selectedIndex;
    if (e.key === "ArrowDown") next = Math.min(visible.length - 1, selectedIndex + 1);
    if (e.key === "ArrowUp") next = Math.max(0, selectedIndex - 1);
    if (e.key === "Home") next = 0;
    if (e.key === "End") next = visible.length - 1;
    const row = visible[next];
    if (row) {
      onSelect(row.id);
      virtualizer.scrollToIndex(next, { align: "auto" });
    }
  };

  return (
    <div className="capture-list">
      <div className="capture-row head" role="presentation">
        <span>Time</span><span>Verdict</span><span>Event</span><span>Resource</span><span>Instance</span><span>Resource id</span><span>Att.</span>
      </div>
      <div
        ref={scrollRef}
        className="capture-scroll"
        tabIndex={0}
        role="listbox"
        aria-label="Captured notifications"
        onKeyDown={onKey}
        onScroll={(e) => onFollowingChange(shouldFollow(e.currentTarget.scrollTop))}
      >
        <div style={{ height: virtualizer.getTotalSize(), position: "relative" }}>
          {virtualItems.map((item) => {
            const c = visible[item.index] as CaptureSummary;
            // Keyed by slot in the window, not by capture: a scroll or a new filter
            // updates the text of the rows already in the page instead of replacing them.
            return <CaptureRow key={item.index % slots} capture={c} top={item.start} selected={c.id === selectedId} onSelect={onSelect} />;
          })}
        </div>
        {!loading && visible.length === 0 && (
          <p className="muted pad">
            {total === 0
              ? "No notifications yet. Use Demo → New transaction to have the sandbox send one."
              : "No capture matches the filter."}
          </p>
        )}
      </div>
    </div>
  );
});

const CaptureRow = memo(function CaptureRow({ capture: c, top, selected, onSelect }: { capture: CaptureSummary; top: number; selected: boolean; onSelect: (id: number) => void }) {
  return (
    <div
      role="option"
      aria-selected={selected}
      data-capture-id={c.id}
      data-verdict={c.verdict}
      data-event-id={c.eventId}
      data-attempts={c.attempts}
      className={`capture-row${selected ? " selected" : ""}`}
      style={{ height: ROW_HEIGHT, transform: `translateY(${top}px)` }}
      onClick={() => onSelect(c.id)}
    >
      <span className="mono">{shortTime(c.receivedAt)}</span>
      <span><span className={`pill ${c.verdict}`}>{c.verdict}</span></span>
      <span>{c.eventType}{c.replayed ? " ↻" : ""}</span>
      <span>{shortResource(c.resourceType)}</span>
      <span>{c.instanceId}</span>
      <span className="mono" title={c.resourceId}>{shortId(c.resourceId)}</span>
      <span>{c.attempts}</span>
    </div>
  );
});

/**
 * "Clear all" and "Clear shown", each through a confirmation that names how many go. The ids
 * are taken when the button is pressed: captures arriving while the user reads the
 * confirmation are not deleted with them.
 */
function ClearCaptures({ shown, total, onCleared }: { shown: number[] | null; total: number; onCleared: (ids: number[] | null) => void }) {
  const [asked, setAsked] = useState<{ ids: number[] | null; count: number } | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const ask = (ids: number[] | null, count: number) => {
    setDone(null);
    setError(null);
    setAsked({ ids, count });
  };
  const confirm = () => {
    if (!asked) return;
    setBusy(true);
    api
      .clearCaptures({ ids: asked.ids })
      .then(
        (result) => {
          setDone(`Deleted ${captureCount(result.cleared)}.`);
          setAsked(null);
          onCleared(asked.ids);
        },
        setError,
      )
      .finally(() => setBusy(false));
  };
  return (
    <>
      <span className="clear-bar">
        <button type="button" className="danger" data-testid="clear-shown" disabled={shown === null} onClick={() => shown && ask(shown, shown.length)} title={shown === null ? "The filter shows every capture: use Clear all." : undefined}>
          Clear shown
        </button>
        <button type="button" className="danger" data-testid="clear-all" disabled={total === 0} onClick={() => ask(null, total)}>
          Clear all
        </button>
        {done && <span className="ok small" role="status" data-testid="clear-result">{done}</span>}
      </span>
      {asked && (
        <div className="confirm-bar" role="alertdialog" aria-label="Delete captures" data-testid="clear-confirm">
          <span>
            {asked.ids === null
              ? `Delete every capture (${captureCount(asked.count)}) from the capture store?`
              : `Delete the ${captureCount(asked.count)} the filter shows?`}{" "}
            <span className="muted">They are gone for good, for <code>partner listen</code> too.</span>
          </span>
          <button type="button" className="primary danger-fill" onClick={confirm} disabled={busy}>
            Delete {captureCount(asked.count)}
          </button>
          <button type="button" onClick={() => setAsked(null)} disabled={busy}>Cancel</button>
          {error !== null && <ErrorPanel error={error} compact />}
        </div>
      )}
    </>
  );
}

function ExportCaptures() {
  const [format, setFormat] = useState<ExportFormat>("json");
  const [result, setResult] = useState<ExportResult | null>(null);
  const [error, setError] = useState<unknown>(null);
  return (
    <span className="export-bar">
      <select aria-label="Capture export format" value={format} onChange={(e) => setFormat(e.target.value as ExportFormat)}>
        <option value="json">JSON</option>
        <option value="csv">CSV</option>
      </select>
      <button
        type="button"
        onClick={() => {
          setError(null);
          api.exportCaptures(format, null).then(setResult, setError);
        }}
      >
        Export captures
      </button>
      {result && <span className="ok small" role="status">{result.count} → {result.path}</span>}
      {error !== null && <ErrorPanel error={error} compact />}
    </span>
  );
}
