import { useCallback, useEffect, useLayoutEffect, useRef, useState } from "react";
import { api, events, type CaptureSummary, type InspectorFacets, type CaptureFilter } from "../../platform";
import { blockQuery, countedByFacets } from "./inspectorModel";

/** Live captures refresh the list at most this often, so a burst costs a few reads, not one per batch. */
const LIVE_REFRESH_MS = 250;
/**
 * Blocks kept either side of the one just read: the page holds what is on screen and a margin,
 * not every block a long scroll passed (a jump back further reads its block again). The first
 * block (the newest captures) is always kept.
 */
export const KEEP_BLOCKS_AROUND = 2;

export interface InspectorData {
  /** Rows the filter selects (notifications, grouped). */
  total: number;
  /** The store stopped counting a search or groups: at least `total`. */
  capped: boolean;
  /** Older captures a search did not look at yet: the store is still indexing them. */
  unsearched: number;
  blocks: ReadonlyMap<number, CaptureSummary[]>;
  facets: InspectorFacets | null;
  loading: boolean;
  error: unknown;
  /** Captures the live feed dropped while the page fell behind (the store has them all). */
  missed: number;
  /** Captures that arrived while the user was scrolled away from the top. */
  arrivedAway: number;
  /** Reads these blocks if they are not in the page yet. */
  want: (blocks: number[]) => void;
  /** Reads the list again from the top (new captures, a clear, "jump to newest"). */
  refresh: () => void;
}

/**
 * The inspector's rows, read from the capture store a block at a time for the part of the list
 * on screen, with the filter's choices and counts. A new filter starts a new generation: answers
 * for an older one are dropped. Live captures refresh the top of the list while the user follows
 * it, and are only counted while they are scrolled away (the rows under their eyes stay put).
 */
export function useInspector(filter: CaptureFilter, grouped: boolean, following: boolean): InspectorData {
  const [pageCount, setPageCount] = useState<Count>({ gen: 0, total: 0, capped: false });
  /** What the newest page of a generation said it left unsearched (the index catching up). */
  const [unsearchedIn, setUnsearchedIn] = useState({ gen: 0, count: 0 });
  const [blocks, setBlocks] = useState<ReadonlyMap<number, CaptureSummary[]>>(new Map());
  /** The blocks as last set (answers land one at a time, each building on the one before). */
  const blocksNow = useRef<ReadonlyMap<number, CaptureSummary[]>>(blocks);
  const [facets, setFacets] = useState<InspectorFacets | null>(null);
  /** The filter the facets were read for (a live refresh keeps its count until the next). */
  const [facetsFor, setFacetsFor] = useState<string | null>(null);
  const [loading, setLoading] = useState(true);
  const [error, setError] = useState<unknown>(null);
  const [missed, setMissed] = useState(0);
  const [arrivedAway, setArrivedAway] = useState(0);
  const generation = useRef(0);
  const requested = useRef(new Set<number>());
  const key = JSON.stringify([filter, grouped]);
  const query = useRef({ filter, grouped });
  const followingRef = useRef(following);
  // Before the effects below run: they read what the user asks for now.
  useLayoutEffect(() => {
    query.current = { filter, grouped };
    followingRef.current = following;
  });

  /** The blocks the list last asked for (under its window and around it). */
  const wanted = useRef<number[]>([0]);
  /** Whether block `b` is kept: the first one, and those near what the list last asked for. */
  const nearWanted = useCallback((b: number) => b === 0 || wanted.current.some((w) => Math.abs(b - w) <= KEEP_BLOCKS_AROUND), []);

  /** The generation each block in the page was read in: an answer of a newer one drops the rest. */
  const blockGen = useRef(new Map<number, number>());

  const load = useCallback((block: number, gen: number) => {
    requested.current.add(block);
    const { filter: f, grouped: g } = query.current;
    const asked = blockQuery(f, g, block);
    return api
      .inspectorPage(asked)
      .then((page) => {
        if (gen !== generation.current) return;
        const answered = { gen, total: page.total, capped: page.totalCapped };
        setPageCount((cur) => (asked.countPastPage ? answered : furthest(cur, answered)));
        setUnsearchedIn({ gen, count: page.unsearched });
        if (!nearWanted(block)) {
          // Scrolled far away while it was read: not kept (read again if the list comes back).
          requested.current.delete(block);
          return;
        }
        blockGen.current.set(block, gen);
        // The blocks of older generations and those far from the window go (read again if
        // the list comes back to them).
        const next = new Map<number, CaptureSummary[]>();
        for (const [b, rows] of blocksNow.current) {
          if (blockGen.current.get(b) === gen && nearWanted(b)) next.set(b, rows);
          else requested.current.delete(b);
        }
        next.set(block, page.items);
        blocksNow.current = next;
        setBlocks(next);
        setError(null);
      })
      .catch((e: unknown) => {
        if (gen !== generation.current) return;
        requested.current.delete(block);
        setError(e);
      });
  }, [nearWanted]);

  const loadFacets = useCallback((gen: number) => {
    const asked = query.current.filter;
    return api
      .inspectorFacets(asked)
      .then((f) => {
        if (gen !== generation.current) return;
        setFacets(f);
        setFacetsFor(JSON.stringify(asked));
      })
      .catch(() => {
        // The list's own error says what is wrong with the store.
      });
  }, []);

  /**
   * A new generation from the top: the rows on screen stay until the new first block replaces
   * them. One read of the top at a time: asked again while one runs (a burst of keystrokes, of
   * live captures), the answer on its way is dropped and one more read follows it, for what is
   * asked by then, so a slow search never queues a read per keystroke behind it. The counts and
   * choices are read beside the rows, on the same terms, and never hold the rows back: the list
   * is shown (not busy) as soon as its rows are in.
   */
  const running = useRef(false);
  const again = useRef(false);
  const facetsRunning = useRef(false);
  const facetsAgain = useRef(false);
  const refreshRef = useRef<() => void>(() => {});
  const facetsRef = useRef<() => void>(() => {});
  const refreshFacets = useCallback(() => {
    if (facetsRunning.current) {
      facetsAgain.current = true;
      return;
    }
    facetsRunning.current = true;
    void loadFacets(generation.current).finally(() => {
      facetsRunning.current = false;
      if (facetsAgain.current) {
        facetsAgain.current = false;
        facetsRef.current();
      }
    });
  }, [loadFacets]);
  const refresh = useCallback(() => {
    generation.current += 1;
    refreshFacets();
    if (running.current) {
      again.current = true;
      return;
    }
    running.current = true;
    const gen = generation.current;
    requested.current = new Set();
    setArrivedAway(0);
    setLoading(true);
    void load(0, gen).finally(() => {
      running.current = false;
      if (again.current) {
        again.current = false;
        refreshRef.current();
      } else if (gen === generation.current) {
        setLoading(false);
      }
    });
  }, [load, refreshFacets]);
  useLayoutEffect(() => {
    refreshRef.current = refresh;
    facetsRef.current = refreshFacets;
  }, [refresh, refreshFacets]);

  // A new filter or grouping: read from the top.
  useEffect(() => {
    refresh();
  }, [key, refresh]);

  // Live captures: refresh while following (throttled), count them while away.
  const due = useRef<ReturnType<typeof setTimeout> | null>(null);
  useEffect(() => {
    const stop = events.onCaptures((batch) => {
      if (batch.missed > 0) setMissed((m) => m + batch.missed);
      if (!followingRef.current) {
        setArrivedAway((n) => n + batch.captures.length + batch.missed);
        return;
      }
      if (due.current === null) {
        due.current = setTimeout(() => {
          due.current = null;
          refresh();
        }, LIVE_REFRESH_MS);
      }
    });
    return () => {
      stop();
      if (due.current !== null) clearTimeout(due.current);
    };
  }, [refresh]);

  const want = useCallback(
    (blocks: number[]) => {
      wanted.current = blocks;
      const gen = generation.current;
      for (const block of blocks) if (!requested.current.has(block)) void load(block, gen);
    },
    [load],
  );

  // A search's hits are counted once, by the facets (of this filter: while a live refresh reads
  // them again, the last count stands, so the count does not flicker down to the page's own);
  // its pages count only through themselves.
  const { total, capped } =
    countedByFacets(filter, grouped) && facets !== null && facetsFor === JSON.stringify(filter)
      ? furthest(pageCount, { gen: pageCount.gen, total: facets.total, capped: facets.capped })
      : pageCount;
  const unsearched = unsearchedIn.gen === pageCount.gen ? unsearchedIn.count : 0;
  return { total, capped, unsearched, blocks, facets, loading, error, missed, arrivedAway, want, refresh };
}

/** A count the store gave for one generation: `total` rows, or at least that many if `capped`. */
interface Count {
  gen: number;
  total: number;
  capped: boolean;
}

/**
 * The further of two counts of one generation (a page's "through here, and more", the facets'
 * count up to the cap): a later block never shortens the list an earlier one made. A count of
 * a newer generation replaces the other; at equal totals, an exact one wins.
 */
export function furthest(cur: Count, next: Count): Count {
  if (next.gen !== cur.gen || next.total > cur.total) return next;
  if (next.total < cur.total) return cur;
  return { ...cur, capped: cur.capped && next.capped };
}
