/**
 * A server-paged listing (products or transactions): the page comes from the shell with
 * `start`/`limit`/`sort`, the total from `X-Total-Count`; headers sort (shift-click adds a key)
 * where `partner-api` says the sandbox sorts by the key, and on any other service by any key,
 * each header saying what that service said of it (accepted, refused, not tried yet; a refused
 * key is sent again only when the user confirms); the sort string is shown and editable;
 * search walks every page with progress and cancel; export writes every page.
 *
 * The screen's default sort is sent marked as such (`defaultSort`) until the user picks one:
 * the shell then answers a service that does not sort by it with the page in the service's
 * own order and a note (`sortNote`), shown here quietly instead of an error. The rule is the
 * shell's (`services::listings`); this only says whose sort it is and shows the note.
 */
import { keepPreviousData, useQuery, useQueryClient } from "@tanstack/react-query";
import {
  flexRender,
  getCoreRowModel,
  useReactTable,
  type ColumnDef,
} from "@tanstack/react-table";
import { useEffect, useLayoutEffect, useMemo, useRef, useState, type KeyboardEvent, type ReactNode } from "react";
import { api, type ListingKind, type PageView } from "../../platform";
import { ErrorPanel } from "../../components/ErrorPanel";
import { Id } from "../../components/Id";
import { RecordView } from "../../components/JsonView";
import { isClickable, keyStanding, sortIndicator, standingMark, standingTitle, toggleSort } from "../../lib/sortModel";
import { FIRST_PAGE, listingQueryKey, PAGE_SIZES, pageCount, pageOf, parsePageJump, rangeLabel, startOfPage } from "../../lib/paging";
import { SearchBar } from "./SearchBar";
import { markStartup } from "../../startup";
import { ExportBar } from "./ExportBar";
import type { ListingColumn } from "./listingColumn";

// Its own file, so SearchBar shares it without importing this one; offered here too, beside the
// props that name it.
export type { ListingColumn };

export interface ListingProps<T> {
  kind: ListingKind;
  title: string;
  columns: ListingColumn<T>[];
  fetchPage: (query: { start: number; limit: number; sort: string; tryRefused?: boolean; defaultSort?: boolean }) => Promise<PageView<T>>;
  rowId: (row: T) => string;
  onOpen: (row: T) => void;
  defaultSort: string;
  toolbar?: ReactNode;
}

export function Listing<T extends { document: Record<string, unknown> }>({ kind, title, columns, fetchPage, rowId, onOpen, defaultSort, toolbar }: ListingProps<T>) {
  const [start, setStart] = useState<number>(FIRST_PAGE.start);
  const [limit, setLimit] = useState<number>(FIRST_PAGE.limit);
  const [sort, setSort] = useState(defaultSort);
  // The user picked a sort (even the default's string): theirs is never dropped.
  const [chosen, setChosen] = useState(false);
  const usingDefault = !chosen && sort === defaultSort;
  const [sortDraft, setSortDraft] = useState(defaultSort);
  const [jump, setJump] = useState("");
  const [jumpError, setJumpError] = useState<string | null>(null);
  const [selected, setSelected] = useState<number>(0);
  const bodyRef = useRef<HTMLTableSectionElement>(null);

  const [tryRefused, setTryRefused] = useState(false);
  const queryClient = useQueryClient();
  const sortKeys = useQuery({ queryKey: ["sortKeys"], queryFn: api.sortKeys, staleTime: Infinity });
  const standingOf = (key: string) => keyStanding(sortKeys.data, kind, key);

  const baseKey = listingQueryKey(kind, start, limit, sort);
  const page = useQuery({
    queryKey: tryRefused ? [...baseKey, "tryRefused"] : usingDefault || sort !== defaultSort ? baseKey : [...baseKey, "chosen"],
    queryFn: () => fetchPage(tryRefused ? { start, limit, sort, tryRefused } : usingDefault ? { start, limit, sort, defaultSort: true } : { start, limit, sort }),
    placeholderData: keepPreviousData,
    retry: false,
  });
  // Each answer may teach the app what this service sorts by: the headers ask again.
  useEffect(() => {
    void queryClient.invalidateQueries({ queryKey: ["sortKeys"] });
  }, [page.dataUpdatedAt, page.errorUpdatedAt, queryClient]);

  useEffect(() => setSelected(0), [start, limit, sort]);

  const items = page.data?.items ?? [];
  // A default sort the service does not take: the page is in the service's own order, and
  // search, export and the header arrows follow the page, not the default's string.
  const sortNote = usingDefault ? page.data?.sortNote : undefined;
  const shownSort = sortNote !== undefined && page.data ? page.data.sort : sort;
  useEffect(() => setSortDraft(shownSort), [shownSort]);
  const hasRows = items.length > 0;
  // Rows in the DOM, before WebKit styles, lays out and paints them (the bench's breakdown).
  useLayoutEffect(() => {
    if (hasRows) markStartup("first-rows-committed");
  }, [hasRows]);
  const total = page.data?.total ?? 0;
  const current = items[selected];

  const tableColumns = useMemo<ColumnDef<T>[]>(
    () =>
      columns.map((c) => ({
        id: c.id,
        header: c.header,
        cell: (ctx) => c.cell(ctx.row.original),
        size: c.width ?? 150,
        meta: { sortKey: c.sortKey },
      })),
    [columns],
  );
  const table = useReactTable({
    data: items,
    columns: tableColumns,
    getCoreRowModel: getCoreRowModel(),
    manualSorting: true,
    manualPagination: true,
  });

  const changeSort = (next: string, askAgain = false) => {
    setChosen(true);
    setTryRefused(askAgain);
    setSort(next);
    setStart(0);
  };

  const onHeader = (sortKey: string | undefined, shift: boolean) => {
    if (!sortKey) return;
    const standing = standingOf(sortKey);
    if (!isClickable(standing)) return;
    if (standing.kind === "refused") {
      const again = window.confirm(`This service refused sorting by ${sortKey}: ${standing.words}\n\nAsk it again?`);
      if (!again) return;
      changeSort(toggleSort(shownSort, sortKey, shift), true);
      return;
    }
    changeSort(toggleSort(shownSort, sortKey, shift));
  };

  const goToPage = (n: number) => setStart(startOfPage(n, limit, total));
  const lastPage = pageCount(total, limit);
  const currentPage = pageOf(start, limit);

  const onRowKey = (e: KeyboardEvent<HTMLTableSectionElement>) => {
    if (e.key === "ArrowDown") {
      e.preventDefault();
      setSelected((s) => Math.min(s + 1, items.length - 1));
    } else if (e.key === "ArrowUp") {
      e.preventDefault();
      setSelected((s) => Math.max(s - 1, 0));
    } else if (e.key === "Enter" && current) {
      onOpen(current);
    } else if (e.key === "PageDown" && currentPage < lastPage) {
      goToPage(currentPage + 1);
    } else if (e.key === "PageUp" && currentPage > 1) {
      goToPage(currentPage - 1);
    }
  };

  return (
    <div className="listing">
      <div className="toolbar">
        <h1>{title}</h1>
        <label className="sort-edit">
          Sort
          <input
            aria-label="Sort string"
            value={sortDraft}
            spellCheck={false}
            placeholder="e.g. status,-created"
            onChange={(e) => setSortDraft(e.target.value)}
            onKeyDown={(e) => {
              if (e.key === "Enter") changeSort(sortDraft.trim());
            }}
            onBlur={() => {
              if (sortDraft.trim() !== shownSort) changeSort(sortDraft.trim());
            }}
          />
        </label>
        <span className="muted small">Click a header to sort, shift-click to add a key.</span>
        <span className="spacer" />
        {toolbar}
      </div>
      <div className="toolbar secondary">
        <SearchBar kind={kind} sort={shownSort} onOpen={(row) => onOpen(row as T)} rowId={(row) => rowId(row as T)} columns={columns as ListingColumn<unknown>[]} />
        <span className="spacer" />
        <ExportBar kind={kind} sort={shownSort} />
      </div>
      {sortNote !== undefined && (
        <p className="muted small sort-note" role="status" data-testid="sort-note">
          {sortNote}
        </p>
      )}
      {page.isError && <ErrorPanel error={page.error} onRetry={() => void page.refetch()} />}
      {page.isError && !tryRefused && refusedBefore(page.error) && (
        <button type="button" className="try-anyway" onClick={() => setTryRefused(true)}>
          Try it anyway
        </button>
      )}
      <div className="split">
        <div className="grid-wrap">
          <table className="grid" aria-label={title} aria-rowcount={total}>
            <thead>
              {table.getHeaderGroups().map((group) => (
                <tr key={group.id}>
                  {group.headers.map((header) => {
                    const sortKey = (header.column.columnDef.meta as { sortKey?: string } | undefined)?.sortKey;
                    const standing = sortKey === undefined ? undefined : standingOf(sortKey);
                    const sortable = sortKey !== undefined && standing !== undefined && isClickable(standing);
                    return (
                      <th key={header.id} style={{ width: header.getSize() }} aria-sort={sortable && sortIndicator(shownSort, sortKey) ? (sortIndicator(shownSort, sortKey).startsWith("▼") ? "descending" : "ascending") : undefined}>
                        {sortable ? (
                          <button
                            type="button"
                            className={`th-sort ${standing.kind}`}
                            data-sort-key={sortKey}
                            data-standing={standing.kind}
                            title={standingTitle(standing)}
                            onClick={(e) => onHeader(sortKey, e.shiftKey)}
                          >
                            {flexRender(header.column.columnDef.header, header.getContext())}
                            {standingMark(standing) && <span className="sort-standing" aria-hidden="true">{standingMark(standing)}</span>}
                            <span className="sort-ind">{sortIndicator(shownSort, sortKey)}</span>
                          </button>
                        ) : (
                          <span className="th-plain">{flexRender(header.column.columnDef.header, header.getContext())}</span>
                        )}
                      </th>
                    );
                  })}
                </tr>
              ))}
            </thead>
            <tbody ref={bodyRef} tabIndex={0} onKeyDown={onRowKey} aria-label={`${title} rows`}>
              {table.getRowModel().rows.map((row, index) => (
                <tr
                  key={rowId(row.original)}
                  data-row-id={rowId(row.original)}
                  className={index === selected ? "selected" : undefined}
                  aria-selected={index === selected}
                  onClick={() => setSelected(index)}
                  onDoubleClick={() => onOpen(row.original)}
                >
                  {row.getVisibleCells().map((cell) => (
                    <td key={cell.id}>{flexRender(cell.column.columnDef.cell, cell.getContext())}</td>
                  ))}
                </tr>
              ))}
              {!page.isLoading && items.length === 0 && !page.isError && (
                <tr>
                  <td colSpan={columns.length} className="empty">
                    Nothing here yet.
                  </td>
                </tr>
              )}
              {page.isLoading && (
                <tr>
                  <td colSpan={columns.length} className="empty">
                    Loading…
                  </td>
                </tr>
              )}
            </tbody>
          </table>
          <div className="pager" role="navigation" aria-label="Pages">
            <button type="button" onClick={() => goToPage(1)} disabled={currentPage <= 1} aria-label="First page">«</button>
            <button type="button" onClick={() => goToPage(currentPage - 1)} disabled={currentPage <= 1} aria-label="Previous page">‹</button>
            <span className="page-label" data-testid="page-label">
              Page {currentPage} of {lastPage}
            </span>
            <button type="button" onClick={() => goToPage(currentPage + 1)} disabled={currentPage >= lastPage} aria-label="Next page">›</button>
            <button type="button" onClick={() => goToPage(lastPage)} disabled={currentPage >= lastPage} aria-label="Last page">»</button>
            <form
              className="jump"
              onSubmit={(e) => {
                e.preventDefault();
                const result = parsePageJump(jump, total, limit);
                if (typeof result === "string") setJumpError(result);
                else {
                  setJumpError(null);
                  goToPage(result);
                }
              }}
            >
              <input aria-label="Jump to page" value={jump} onChange={(e) => setJump(e.target.value)} placeholder="page" size={4} />
              <button type="submit">Go</button>
              {jumpError && <span className="field-error">{jumpError}</span>}
            </form>
            <label>
              Rows
              <select
                aria-label="Page size"
                value={limit}
                onChange={(e) => {
                  setLimit(Number(e.target.value));
                  setStart(0);
                }}
              >
                {PAGE_SIZES.map((n) => (
                  <option key={n} value={n}>{n}</option>
                ))}
              </select>
            </label>
            <span className="spacer" />
            <span className="muted" data-testid="range-label">
              {rangeLabel(start, items.length, total)}
              {page.isFetching && !page.isLoading ? " · loading" : ""}
            </span>
          </div>
        </div>
        <aside className="detail-panel" aria-label="Selected record">
          {current ? (
            <>
              <div className="detail-head">
                <strong><Id value={rowId(current)} /></strong>
                <button type="button" onClick={() => onOpen(current)}>Open</button>
              </div>
              <RecordView value={current.document} title="Record fields" />
            </>
          ) : (
            <p className="muted pad">Select a row to see every field and the raw JSON.</p>
          )}
        </aside>
      </div>
    </div>
  );
}

/** Whether the app held a sort back because this service refused one of its keys before. */
function refusedBefore(error: unknown): boolean {
  const message = (error as { message?: unknown } | null)?.message;
  return typeof message === "string" && message.includes("refused sorting by");
}
