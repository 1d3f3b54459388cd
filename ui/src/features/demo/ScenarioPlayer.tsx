import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect, useEffectEvent, useId, useRef, useState, type KeyboardEvent } from "react";
import { api, type ScenarioPlayView } from "../../platform";
import { ErrorPanel } from "../../components/ErrorPanel";
import { stageIdsIn } from "../../lib/presentation";
import { useStageMode } from "../../lib/useDisplay";
import {
  canPlay,
  captionOf,
  chosenScenario,
  clampPace,
  isNextKey,
  isTypingTarget,
  PACE_DEFAULT,
  PACE_MAX,
  progressText,
  SCENARIO_PLAY_KEY,
  SCENARIOS_KEY,
  stepCount,
  stepStates,
} from "./scenarioModel";

/**
 * The Demo's scenarios: a story the lender plays on the embedded sandbox one step at a time (Next),
 * or on its own at a pace (Play), each step with the caption a presenter reads. The play lives in
 * the shell; this card shows it, and after each step tells the Demo screen (`onStep`) so its live
 * picture draws the scenario's transaction.
 */
export function ScenarioPlayer({ onStep }: { onStep: (view: ScenarioPlayView) => void }) {
  const client = useQueryClient();
  const stage = useStageMode();
  const shown = (text: string) => (stage ? stageIdsIn(text) : text);
  const ids = useId();

  const list = useQuery({ queryKey: SCENARIOS_KEY, queryFn: api.listScenarios, staleTime: 0 });
  // The play under way, read afresh each time the screen opens; each step's answer replaces it.
  const current = useQuery({ queryKey: SCENARIO_PLAY_KEY, queryFn: api.scenarioCurrent, staleTime: 0, refetchOnWindowFocus: false });
  const view = current.data ?? null;

  const [choice, setChoice] = useState("");
  const [realTime, setRealTime] = useState(false);
  const [pace, setPace] = useState(PACE_DEFAULT);
  const [playing, setPlaying] = useState(false);
  const [running, setRunning] = useState(false);
  const [stepError, setStepError] = useState<unknown>(null);
  // A step answers after a while: one answered after Stop or a new Start is of a play that ended.
  const epoch = useRef(0);
  const busy = useRef(false);
  const listRef = useRef<HTMLOListElement>(null);

  const scenarios = list.data?.scenarios ?? [];
  const chosen = chosenScenario(scenarios, choice, view?.name);

  const showPlay = async (next: ScenarioPlayView | null) => {
    // A read of `scenario_current` still under way must not put back an older state.
    await client.cancelQueries({ queryKey: SCENARIO_PLAY_KEY });
    client.setQueryData(SCENARIO_PLAY_KEY, next);
  };

  /** Plays one step; the new state, or null when it failed (the error is shown) or was overtaken. */
  const playStep = async (): Promise<ScenarioPlayView | null> => {
    if (busy.current) return null;
    busy.current = true;
    const mine = epoch.current;
    setRunning(true);
    setStepError(null);
    try {
      const played = await api.scenarioNext();
      if (mine !== epoch.current) return null;
      await showPlay(played);
      onStep(played);
      return played;
    } catch (error) {
      if (mine === epoch.current) {
        setStepError(error);
        setPlaying(false);
      }
      return null;
    } finally {
      busy.current = false;
      setRunning(false);
    }
  };

  const start = useMutation({
    mutationFn: () => api.scenarioStart({ name: chosen?.name ?? "", realTime }),
    onMutate: () => {
      epoch.current += 1;
      setPlaying(false);
      setStepError(null);
    },
    onSuccess: (started) => showPlay(started),
  });
  const stop = useMutation({
    mutationFn: api.scenarioStop,
    onMutate: () => {
      epoch.current += 1;
      setPlaying(false);
    },
    onSuccess: async () => {
      setStepError(null);
      start.reset();
      await showPlay(null);
    },
  });

  // Play: a step, `pace` seconds, the next, … until the end, Pause, an error, Stop or leaving the
  // screen (the cleanup cancels the wait; a step under way still ends and is shown).
  const stepFromLoop = useEffectEvent(() => playStep());
  const paceNow = useEffectEvent(() => pace);
  useEffect(() => {
    if (!playing) return;
    let cancelled = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const loop = async () => {
      for (;;) {
        const played = await stepFromLoop();
        if (cancelled) return;
        if (!played || played.finished) {
          setPlaying(false);
          return;
        }
        await new Promise<void>((resolve) => {
          timer = setTimeout(resolve, paceNow() * 1000);
        });
        if (cancelled) return;
      }
    };
    void loop();
    return () => {
      cancelled = true;
      if (timer !== undefined) clearTimeout(timer);
    };
  }, [playing]);

  // The screen opened on a play under way: the picture draws its transaction.
  const resumed = useRef(false);
  const resume = useEffectEvent((play: ScenarioPlayView) => onStep(play));
  useEffect(() => {
    if (resumed.current || !current.isFetched) return;
    resumed.current = true;
    if (current.data?.transactionId) resume(current.data);
  }, [current.isFetched, current.data]);

  // The step just played stays in sight in the list (the list scrolls, never the page).
  useEffect(() => {
    const ol = listRef.current;
    const li = ol?.querySelector<HTMLElement>('[data-state="current"]');
    if (!ol || !li) return;
    if (li.offsetTop < ol.scrollTop || li.offsetTop + li.offsetHeight > ol.scrollTop + ol.clientHeight) {
      ol.scrollTop = Math.max(0, li.offsetTop - 8);
    }
  }, [view?.next, view?.name]);

  const mayStep = canPlay(view, running) && !playing;
  const next = () => {
    if (mayStep) void playStep();
  };
  const onKeyDown = (e: KeyboardEvent<HTMLElement>) => {
    if (!isNextKey(e) || isTypingTarget(e.target)) return;
    e.preventDefault();
    next();
  };

  const states = view ? stepStates(view) : [];
  const upNext = view && !view.finished ? view.next : -1;
  const problems = list.data?.problems ?? [];

  return (
    <section className="card scenario-card" aria-labelledby={`${ids}-title`} tabIndex={-1} onKeyDown={onKeyDown} data-testid="scenario-player">
      <div className="card-head">
        <h2 id={`${ids}-title`}>Scenarios</h2>
        <button type="button" className="link small" onClick={() => void list.refetch()} disabled={list.isFetching} title="Read the scenarios folder again">
          {list.isFetching ? "Reading…" : "Read again"}
        </button>
      </div>
      {list.isError && <ErrorPanel error={list.error} compact onRetry={() => void list.refetch()} />}
      <div className="form-row">
        <label className="grow">Scenario
          <select aria-label="Scenario" data-testid="scenario-select" value={chosen?.name ?? ""} onChange={(e) => setChoice(e.target.value)} disabled={scenarios.length === 0}>
            {scenarios.length === 0 && <option value="">{list.isPending ? "Reading…" : "No scenario"}</option>}
            {scenarios.map((s) => <option key={s.name} value={s.name}>{s.title}</option>)}
          </select>
        </label>
        <label className="inline" title="Waits are instant on the sandbox clock unless ticked">
          <input type="checkbox" data-testid="scenario-real-time" checked={realTime} onChange={(e) => setRealTime(e.target.checked)} aria-describedby={`${ids}-real-time`} />
          Real time
        </label>
        <label>Pace (seconds)
          <input type="number" data-testid="scenario-pace" min={0} max={PACE_MAX} step={1} value={pace} onChange={(e) => setPace(clampPace(e.target.value))} className="scenario-pace" title="How long Play waits between two steps (0 to 60 s)" />
        </label>
      </div>
      {chosen && (
        <p className="muted small scenario-about" data-testid="scenario-summary">
          {chosen.summary} <span className="nowrap">({stepCount(chosen.steps)})</span>
          {chosen.source !== "built-in" && <> · from <code className="scenario-source">{chosen.source}</code></>}
        </p>
      )}
      <p className="muted small" id={`${ids}-real-time`}>
        Waits are instant on the sandbox clock unless Real time is ticked (it applies from Start). Play waits the pace between steps.
      </p>
      <div className="actions">
        <button type="button" data-testid="scenario-start" onClick={() => start.mutate()} disabled={!chosen || start.isPending || running || playing}>
          {view ? "Start again" : "Start"}
        </button>
        <button type="button" className="primary" data-testid="scenario-next" onClick={next} disabled={!mayStep} aria-keyshortcuts="N ArrowRight" title="Play the next step (N or →)">
          {running && !playing ? "Playing…" : "Next"}
        </button>
        {playing ? (
          <button type="button" data-testid="scenario-pause" onClick={() => setPlaying(false)}>Pause</button>
        ) : (
          <button type="button" data-testid="scenario-play" onClick={() => setPlaying(true)} disabled={!canPlay(view, running)} title="Play the remaining steps, the pace apart">Play</button>
        )}
        <button type="button" data-testid="scenario-stop" onClick={() => stop.mutate()} disabled={!view || stop.isPending}>Stop</button>
      </div>
      {current.isError && <ErrorPanel error={current.error} compact onRetry={() => void current.refetch()} />}
      {[start, stop].map((m, i) => (m.isError ? <ErrorPanel key={i} error={m.error} compact /> : null))}
      {stepError !== null && <ErrorPanel error={stepError} compact />}
      {view && (
        <div className="scenario-play">
          <div className="scenario-caption" data-testid="scenario-caption" aria-live="polite" title={captionOf(view)}>
            {shown(captionOf(view))}
          </div>
          <p className="scenario-progress small" data-testid="scenario-progress">
            <strong>{view.title}</strong> · {progressText(view)}{view.realTime ? " · real time" : ""}
            {running && <span className="muted"> · playing a step…</span>}
          </p>
          {view.finished && <p className="ok small" data-testid="scenario-finished">Played to its end.</p>}
          <ol className="scenario-steps" data-testid="scenario-steps" ref={listRef} aria-label={`Steps of ${view.title}`}>
            {view.steps.map((step, i) => (
              <li key={i} data-testid="scenario-step" data-state={states[i]} aria-current={states[i] === "current" ? "step" : undefined}>
                <span className="scenario-step-caption" title={step.caption}>{shown(step.caption)}</span>
                {i === upNext && <span className="pill muted-pill">up next</span>}
                <span className="muted small scenario-step-does">{shown(step.does)}</span>
                {step.outcome !== null && (
                  <span className="small scenario-outcome" data-testid="scenario-outcome" title={step.outcome}>{shown(step.outcome)}</span>
                )}
              </li>
            ))}
          </ol>
        </div>
      )}
      {problems.length > 0 && (
        <ul className="notice small scenario-problems" data-testid="scenario-problems" aria-label="Scenario files that could not be read">
          {problems.map((p) => (
            <li key={p.file}><code>{p.file}</code>: {p.error}</li>
          ))}
        </ul>
      )}
      {list.data && (
        <p className="muted small scenario-folder" data-testid="scenario-folder">
          Your own scenarios go in <code>{list.data.folder}</code> — the format is in the README.
        </p>
      )}
    </section>
  );
}
