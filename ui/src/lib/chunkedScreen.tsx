/**
 * A screen whose code is a chunk of its own, loaded when first opened (or made ready before,
 * with `preload`), so the bundle parsed before the first screen stays small.
 *
 * Why not `React.lazy` alone: a lazy component suspends at its first render even when its
 * chunk was loaded already, and React then keeps the Suspense fallback up for at least 300 ms
 * (its reveal throttle). That was most of the Webhooks screen's first open (313 of 467 ms
 * measured) even after its chunk was made ready. So once the chunk is in, the screen's own
 * component is rendered directly; `React.lazy` only covers a chunk still on its way.
 */
import { lazy, useState, type ComponentType } from "react";

export function chunkedScreen<M, P extends object>(load: () => Promise<M>, pick: (module: M) => ComponentType<P>) {
  let loaded: ComponentType<P> | null = null;
  let loading: Promise<M> | null = null;
  /** Loads the chunk (once) and keeps its component for the next mount. */
  const preload = (): Promise<M> =>
    (loading ??= load().then((module) => {
      loaded = pick(module);
      return module;
    }));
  const Lazy = lazy(() => preload().then((module) => ({ default: pick(module) })));
  function Screen(props: P) {
    // Chosen once per mount: switching from the lazy one to the loaded one would remount it.
    const [Loaded] = useState(() => loaded);
    return Loaded ? <Loaded {...props} /> : <Lazy {...props} />;
  }
  return { Screen, preload };
}
