import { useEffect, useRef, useState } from "react";
import { api, events, type CaptureSummary } from "../../platform";
import { EMPTY_LIST, listOf, mergeBatch, type CaptureList } from "./inspectorModel";

/** Loads every capture once, then adds the shell's batched `captures` events as they come. */
export function useCaptures() {
  const [captures, setCaptures] = useState<CaptureList>(EMPTY_LIST);
  const [error, setError] = useState<unknown>(null);
  const [loading, setLoading] = useState(true);
  const pending = useRef<CaptureSummary[]>([]);

  const reload = () => {
    setLoading(true);
    api
      .captures()
      .then((all) => {
        setCaptures(mergeBatch(listOf(all), pending.current));
        pending.current = [];
        setError(null);
      })
      .catch(setError)
      .finally(() => setLoading(false));
  };

  useEffect(() => {
    const stop = events.onCaptures((batch) => {
      setCaptures((cur) => mergeBatch(cur, batch.captures));
    });
    reload();
    return stop;
  }, []);

  return { captures, error, loading, reload, clear: () => setCaptures(EMPTY_LIST) };
}
