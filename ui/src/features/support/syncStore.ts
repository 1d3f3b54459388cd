/**
 * The one sync of the local index, kept outside the support screen: a first fill of a large
 * connection takes minutes, and the user opens a transaction meanwhile. Coming back shows the
 * same job's progress and Cancel (not a second sync), and a sync that ended while the screen was
 * closed still updates the index's view and leaves its result to read.
 */
import { useSyncExternalStore } from "react";
import { api, events, type Progress, type SupportSyncResult } from "../../platform";

export interface SyncState {
  /** The running job, none when idle. */
  jobId: string | null;
  progress: Progress | null;
  result: SupportSyncResult | null;
  error: unknown;
}

const IDLE: SyncState = { jobId: null, progress: null, result: null, error: null };
let state: SyncState = IDLE;
const listeners = new Set<() => void>();
let started = 0;

function update(patch: Partial<SyncState>) {
  state = { ...state, ...patch };
  listeners.forEach((l) => l());
}

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** Starts a sync unless one runs; `onDone` gets what it did (also when no screen shows it). */
export function startSync(allowProduction: boolean, onDone: (result: SupportSyncResult) => void): void {
  if (state.jobId !== null) return;
  started += 1;
  const jobId = `support-sync-${Date.now()}-${started}`;
  update({ jobId, progress: null, result: null, error: null });
  const stopListening = events.onSupportSyncProgress((p) => {
    if (p.jobId === state.jobId) update({ progress: p });
  });
  api
    .supportSync({ jobId, allowProduction })
    .then(
      (result) => {
        update({ result });
        onDone(result);
      },
      (error: unknown) => update({ error }),
    )
    .finally(() => {
      stopListening();
      update({ jobId: null, progress: null });
    });
}

export function cancelSync(): void {
  if (state.jobId) void api.cancelJob(state.jobId);
}

/** What the last sync said, dropped once read (the screen closed) while none runs. */
export function forgetSyncOutcome(): void {
  if (state.jobId === null && (state.result !== null || state.error !== null)) update({ result: null, error: null });
}

export function useSyncState(): SyncState {
  return useSyncExternalStore(subscribe, () => state);
}
