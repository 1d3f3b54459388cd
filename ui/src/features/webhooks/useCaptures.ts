import { useEffect, useRef, useState } from "react";
import { api, events, type CaptureSummary } from "../../platform";
import { mergeBatch } from "./inspectorModel";

/** Loads every capture once, then adds the shell's batched `captures` events as they come. */
export function useCaptures() {
  const [captures, setCaptures] = useState<CaptureSummary[]>([]);
  const [error, setError] = useState<unknown>(null);
  const [loading, setLoading] = useState(true);
  const pending = useRef<CaptureSummary[]>([]);

  const reload = () => {
    setLoading(true);
    api
      .captures()
      .then((all) => {
        setCaptures(mergeBatch(all, pending.current));
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

  return { captures, error, loading, reload, clear: () => setCaptures([]) };
}
