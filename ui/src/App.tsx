import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { Suspense, useEffect, useRef } from "react";
import { api, events, type AppStatus, type DemoSubscription } from "./platform";
import { ErrorPanel } from "./components/ErrorPanel";
import { navigate, routeHref, SCREENS, useRoute, type Screen } from "./lib/router";
import { ProductsScreen } from "./features/products/ProductsScreen";
import { ErrorBoundary } from "./components/ErrorBoundary";
import { connectionIdentity, newerStatus, showStatus, STATUS_KEY } from "./startup";
import { ShellBanners } from "./shell/Banners";
import { ListenerBadge, TeamBadge, TunnelBadge } from "./shell/TopBarStatus";
import { GoToBox } from "./shell/GoToBox";
import { CommandPalette } from "./shell/CommandPalette";
import { chunkedScreen } from "./lib/chunkedScreen";
import { DisplayMenu } from "./shell/DisplayMenu";
import { Updates } from "./shell/Updates";
import { useStageMode } from "./lib/useDisplay";
import { STAGE_SHORTCUT_LABEL } from "./lib/presentation";
import { screenShortcut, SHORTCUTS } from "./lib/shortcuts";
import { useDeclaredInvalidations } from "./lib/useDeclaredInvalidations";

// The products table is the first screen; every other screen is its own chunk, loaded when
// first opened, so the bundle parsed before the first table is small.
const { Screen: ProductDetail } = chunkedScreen(() => import("./features/products/ProductDetail"), (m) => m.ProductDetail);
const { Screen: TransactionsScreen } = chunkedScreen(() => import("./features/transactions/TransactionsScreen"), (m) => m.TransactionsScreen);
const { Screen: TransactionDetail } = chunkedScreen(() => import("./features/transactions/TransactionDetail"), (m) => m.TransactionDetail);
const { Screen: WebhooksScreen, preload: preloadWebhooks } = chunkedScreen(() => import("./features/webhooks/WebhooksScreen"), (m) => m.WebhooksScreen);
const { Screen: TokenScreen } = chunkedScreen(() => import("./features/token/TokenScreen"), (m) => m.TokenScreen);
const { Screen: ConnectionsScreen } = chunkedScreen(() => import("./features/connections/ConnectionsScreen"), (m) => m.ConnectionsScreen);
const { Screen: CallsScreen } = chunkedScreen(() => import("./features/calls/CallsScreen"), (m) => m.CallsScreen);
const { Screen: AuditScreen } = chunkedScreen(() => import("./features/audit/AuditScreen"), (m) => m.AuditScreen);
const { Screen: SupportScreen } = chunkedScreen(() => import("./features/support/SupportScreen"), (m) => m.SupportScreen);
const { Screen: DemoScreen } = chunkedScreen(() => import("./features/demo/DemoScreen"), (m) => m.DemoScreen);

export function App() {
  const client = useQueryClient();
  // After each command, the query keys its declaration makes stale.
  useDeclaredInvalidations();
  const route = useRoute();
  const stage = useStageMode();
  const status = useQuery({
    queryKey: STATUS_KEY,
    queryFn: api.appStatus,
    structuralSharing: (shown, arrived) => newerStatus(shown as AppStatus | undefined, arrived as AppStatus),
  });
  const starting = status.data?.phase === "starting";
  const { refetch } = status;
  const retryDemo = useMutation({
    mutationFn: api.retryDemoSubscription,
    onSuccess: (next) => showStatus(client, next),
  });

  // While the shell starts, one call waits for the end of start-up and answers at once then:
  // no polling delay between "ready" and the first listing.
  useEffect(() => {
    if (!starting) return;
    let live = true;
    api.waitForStart().then(
      (next) => {
        if (live) showStatus(client, next);
      },
      () => {
        if (live) void refetch();
      },
    );
    return () => {
      live = false;
    };
  }, [starting, client, refetch]);

  // A status sent while the listener was still being registered (the demo subscription can
  // finish within a second of start) would be lost: read it again once listening.
  useEffect(
    () =>
      events.onStatus(
        (s) => {
          showStatus(client, s);
          void client.invalidateQueries({ predicate: (q) => q.queryKey[0] !== STATUS_KEY[0] });
        },
        () => void refetch(),
      ),
    [client, refetch],
  );

  // Another connection, or the same one served anew (the embedded sandbox reset or restarted):
  // what was read from the old one is dropped, not shown while a refetch fails (a product the
  // reset removed would otherwise stay on screen from the cache).
  const connection = connectionIdentity(status.data);
  const shownConnection = useRef(connection);
  useEffect(() => {
    if (shownConnection.current !== null && connection !== null && shownConnection.current !== connection) {
      void client.resetQueries({ predicate: (q) => q.queryKey[0] !== STATUS_KEY[0] });
    }
    if (connection !== null) shownConnection.current = connection;
  }, [connection, client]);

  // After the first frame is painted, the shell is told, and opens the capture store it held
  // back: on two cores the store's opening (its map of the notifications inside the redelivery
  // window, about 200 ms of CPU when a million are) delayed this first frame.
  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const frame = requestAnimationFrame(() => {
      timer = setTimeout(() => void api.firstScreenShown().catch(() => {}), 0);
    });
    return () => {
      cancelAnimationFrame(frame);
      if (timer !== undefined) clearTimeout(timer);
    };
  }, []);

  // Once the shell is ready and has painted, while the user reads the first screen, the
  // Webhooks screen (the largest chunk, and the capture store behind it) is made ready: its code
  // fetched and compiled, the store's first block and counts read once, so its first open costs
  // what a later one does instead of several times that.
  const ready = status.data?.phase === "ready";
  useEffect(() => {
    if (!ready) return;
    // Passive effects run after the commit is painted; the timer yields once more to the
    // event loop, so the first screen's own work goes first.
    const timer = setTimeout(() => {
      preloadWebhooks()
        .then((m) => {
          // For the benchmark: when the screen was made ready (tests/e2e/bench.mjs).
          performance.mark("webhooks-warm-loaded");
          m.warmWebhooks();
        })
        .catch(() => {});
    }, 0);
    return () => clearTimeout(timer);
  }, [ready]);

  // `partner-console://` links: the route the shell sends (the link opened its connection first),
  // and the one a link that started the app left before this page listened.
  useEffect(() => {
    const go = (hash: string | null) => {
      if (hash) window.location.hash = hash;
    };
    return events.onOpenLink(go, () => {
      api.takePendingLink().then(go, () => {});
    });
  }, []);

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      const digit = screenShortcut(e);
      if (digit === null) return;
      const target = SCREENS.find((s) => s.key === String(digit));
      if (target) {
        e.preventDefault();
        navigate(target.screen);
      }
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, []);

  const s = status.data;
  const env = s?.active?.environment ?? "sandbox";

  return (
    <div className={`app env-${env}`}>
      <header className="topbar">
        <span className="brand">Partner Console</span>
        {s?.active ? (
          <>
            <span className={`env-badge ${env}`} data-testid="env-badge">{env}</span>
            {s.active.environment !== s.active.labelled && (
              <span className="env-disagree small" data-testid="env-disagree" title={`Saved as ${s.active.labelled}; the service's tokens say "${s.active.serviceEnvironment ?? ""}", so the console treats it as ${env} and asks before changing anything.`}>
                service says {s.active.serviceEnvironment}
              </span>
            )}
            <span className="conn-label">{s.active.label}</span>
            {s.active.readOnly && (
              <span className="readonly-badge" data-testid="read-only-badge" title="Every write (respond, products, subscriptions, keys) is refused before it is sent. Change it in Connections.">read-only</span>
            )}
            <span className="muted mono small shrink" title={s.active.baseUrl}>{s.active.baseUrl}</span>
            {/* The demo subscription is the embedded sandbox's: not said over another connection. */}
            {s.demoSubscription && s.active.embedded && <DemoSubscriptionBadge subscription={s.demoSubscription} />}
          </>
        ) : (
          <span className="muted">{s?.phase === "starting" ? "Starting the embedded sandbox…" : "No connection"}</span>
        )}
        <span className="spacer" />
        {s && s.phase !== "starting" && <TeamBadge />}
        {s?.active && s.phase !== "starting" && <GoToBox />}
        {s && s.phase !== "starting" && <ListenerBadge listener={s.listener} />}
        {s?.tunnel && <TunnelBadge tunnel={s.tunnel} />}
        <span className="muted small shortcuts">{SHORTCUTS.screens} switch screens · {SHORTCUTS.palette} go to · arrows move in tables · {STAGE_SHORTCUT_LABEL} stage mode</span>
        <DisplayMenu />
      </header>
      {stage && <StageStrip status={s} env={env} />}
      <nav className="sidebar" aria-label="Screens">
        {SCREENS.map((item) => (
          <a key={item.screen} href={routeHref(item.screen)} className={route.screen === item.screen ? "active" : undefined} aria-current={route.screen === item.screen ? "page" : undefined}>
            <span>{item.label}</span>
            <kbd>{SHORTCUTS.screen(item.key)}</kbd>
          </a>
        ))}
      </nav>
      <main className="content">
        {status.isError ? (
          <ErrorPanel error={status.error} onRetry={() => void status.refetch()} />
        ) : !s ? (
          <p className="muted pad">Loading…</p>
        ) : (
          <>
            <Updates />
            <ShellBanners status={s} />
            {s.phase === "starting" ? (
              <div className="startup" role="status">
                <div className="spinner" aria-hidden />
                <p>Starting the embedded sandbox, signing in with its demo client and starting the webhook listener…</p>
              </div>
            ) : (
              <>
                {s.startupError && <ErrorPanel error={s.startupError} compact />}
                {s.demoSubscription?.error && (
                  <ErrorPanel
                    error={s.demoSubscription.error}
                    compact
                    onRetry={retryDemo.isPending ? undefined : () => retryDemo.mutate()}
                  />
                )}
                {retryDemo.isError && <ErrorPanel error={retryDemo.error} compact />}
                <ErrorBoundary key={`${route.screen}/${route.id ?? ""}`}>
                  <Suspense fallback={<p className="muted pad">Loading…</p>}>
                    <ScreenView screen={route.screen} id={route.id} eventId={route.eventId} embedded={s.active?.embedded ?? false} sandbox={(s.active?.embedded ?? false) || s.active?.environment === "sandbox"} connected={s.active !== null} />
                  </Suspense>
                </ErrorBoundary>
              </>
            )}
          </>
        )}
      </main>
      {s?.active && s.phase !== "starting" && <CommandPalette />}
    </div>
  );
}

/**
 * Stage mode's connection banner: a strip across the window, in the environment's colour, naming
 * the environment and the connection, so nobody watching a projector can miss which it is.
 */
function StageStrip({ status, env }: { status: AppStatus | undefined; env: string }) {
  const active = status?.active;
  return (
    <div className={`stage-strip ${env}`} data-testid="stage-strip" role="status" aria-label="Connection">
      {active ? (
        <>
          <span className="stage-env">{env}</span>
          <span className="stage-conn">{active.label}</span>
          {active.readOnly && <span className="stage-note">read-only</span>}
          {active.environment !== active.labelled && <span className="stage-note">saved as {active.labelled}, the service says {active.serviceEnvironment}</span>}
        </>
      ) : (
        <span className="stage-conn">{status?.phase === "starting" ? "Starting the embedded sandbox…" : "No connection"}</span>
      )}
    </div>
  );
}

/** The first run's demo subscription, which finishes after the tables are already usable. */
function DemoSubscriptionBadge({ subscription }: { subscription: DemoSubscription }) {
  const product = subscription.productName ?? "the demo product";
  const text =
    subscription.phase === "running"
      ? "Subscribing the demo product to the listener…"
      : subscription.phase === "done"
        ? `Demo webhooks: ${product} → listener`
        : "Demo webhooks not set up";
  return (
    <span className={`small demo-subscription shrink ${subscription.phase}`} data-testid="demo-subscription" aria-live="polite" title={text}>
      {text}
    </span>
  );
}

function ScreenView({ screen, id, eventId, embedded, sandbox, connected }: { screen: Screen; id: string | null; eventId: string | null; embedded: boolean; sandbox: boolean; connected: boolean }) {
  if (!connected && screen !== "connections") {
    return (
      <div className="page">
        <div className="notice">
          No connection is active. <a href={routeHref("connections")}>Open Connections</a> to add one or pick the embedded sandbox.
        </div>
      </div>
    );
  }
  switch (screen) {
    case "products":
      return id ? <ProductDetail id={id} /> : <ProductsScreen />;
    case "transactions":
      return id ? <TransactionDetail id={id} eventId={eventId} /> : <TransactionsScreen />;
    case "webhooks":
      return <WebhooksScreen selectedCapture={id !== null && /^\d+$/.test(id) ? Number(id) : null} sandbox={sandbox} />;
    case "token":
      return <TokenScreen />;
    case "connections":
      return <ConnectionsScreen />;
    case "demo":
      return <DemoScreen embedded={embedded} />;
    case "support":
      return <SupportScreen />;
    case "calls":
      return <CallsScreen />;
    case "audit":
      return <AuditScreen />;
  }
}
