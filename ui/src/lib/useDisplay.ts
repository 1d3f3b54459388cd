/** The display choice (lib/presentation.ts) for components: they re-render when it changes. */
import { useSyncExternalStore } from "react";
import { currentDisplay, subscribeDisplay, type DisplayChoice } from "./presentation";

export function useDisplay(): DisplayChoice {
  return useSyncExternalStore(subscribeDisplay, currentDisplay, currentDisplay);
}

/** Whether stage mode is on: ids shortened, secrets masked. */
export function useStageMode(): boolean {
  return useDisplay().stage;
}
