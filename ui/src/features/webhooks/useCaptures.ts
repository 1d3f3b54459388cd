import { useEffect, useRef, useState } from "react";
import { api, events, type CaptureSummary } from "../../platform";
import { EMPTY_LIST, listOf, mergeBatch, withoutCaptures, type CaptureList } from "./inspectorModel";

/**
 * Loads every capture once, then adds the shell's batched `captures` events as they come.
 * Batches that arrive while a (re)load is on its way are kept aside too and merged into its
 * answer, which may have been read before they were stored.
 */
export function useCaptures() {
  const [captures, setCaptures] = useState<CaptureList>(EMPTY_LIST);
  const [error, setError] = useState<unknown>(null);
  const [loading, setLoading] = useState(true);
  const pending = useRef<CaptureSummary[]>([]);
  const loads = useRef(0);
  const inFlight = useRef(false);

  const reload = () => {
    loads.current += 1;
    const load = loads.current;
    pending.current = [];
    inFlight.current = true;
    setLoading(true);
    api
      .captures()
      .then((all) => {
        // An older load answering after a newer one started is dropped.
        if (load !== loads.current) return;
        setCaptures(mergeBatch(listOf(all), pending.current));
        setError(null);
      })
      .catch((e: unknown) => {
        if (load === loads.current) setError(e);
      })
      .finally(() => {
        if (load !== loads.current) return;
        pending.current = [];
        inFlight.current = false;
        setLoading(false);
      });
  };

  useEffect(() => {
    const stop = events.onCaptures((batch) => {
      if (inFlight.current) pending.current.push(...batch.captures);
      setCaptures((cur) => mergeBatch(cur, batch.captures));
      // The live feed dropped some (the page fell behind): the store has them all.
      if (batch.missed > 0) reload();
    });
    reload();
    return stop;
  }, []);

  /** Drops cleared captures from the page at once, then reads the store again. */
  const removed = (ids: number[] | null) => {
    setCaptures((cur) => withoutCaptures(cur, ids));
    reload();
  };

  return { captures, error, loading, reload, removed };
}
