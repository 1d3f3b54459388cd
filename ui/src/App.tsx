import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect } from "react";
import { api, events } from "./platform";
import { ErrorPanel } from "./components/ErrorPanel";
import { navigate, routeHref, SCREENS, useRoute, type Screen } from "./lib/router";
import { ProductsScreen } from "./features/products/ProductsScreen";
import { ProductDetail } from "./features/products/ProductDetail";
import { TransactionsScreen } from "./features/transactions/TransactionsScreen";
import { TransactionDetail } from "./features/transactions/TransactionDetail";
import { WebhooksScreen } from "./features/webhooks/WebhooksScreen";
import { TokenScreen } from "./features/token/TokenScreen";
import { ConnectionsScreen } from "./features/connections/ConnectionsScreen";
import { DemoScreen } from "./features/demo/DemoScreen";
import { ErrorBoundary } from "./components/ErrorBoundary";

export function App() {
  const client = useQueryClient();
  const route = useRoute();
  const status = useQuery({ queryKey: ["status"], queryFn: api.appStatus, refetchInterval: (q) => (q.state.data?.phase === "starting" ? 500 : false) });

  useEffect(
    () =>
      events.onStatus((s) => {
        client.setQueryData(["status"], s);
        void client.invalidateQueries({ predicate: (q) => q.queryKey[0] !== "status" });
      }),
    [client],
  );

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (!e.altKey) return;
      const target = SCREENS.find((s) => s.key === e.key);
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
            <span className="conn-label">{s.active.label}</span>
            <span className="muted mono small">{s.active.baseUrl}</span>
          </>
        ) : (
          <span className="muted">{s?.phase === "starting" ? "Starting the embedded sandbox…" : "No connection"}</span>
        )}
        <span className="spacer" />
        <span className="muted small">Alt+1…6 switch screens · arrows move in tables</span>
      </header>
      <nav className="sidebar" aria-label="Screens">
        {SCREENS.map((item) => (
          <a key={item.screen} href={routeHref(item.screen)} className={route.screen === item.screen ? "active" : undefined} aria-current={route.screen === item.screen ? "page" : undefined}>
            <span>{item.label}</span>
            <kbd>Alt+{item.key}</kbd>
          </a>
        ))}
      </nav>
      <main className="content">
        {status.isError ? (
          <ErrorPanel error={status.error} onRetry={() => void status.refetch()} />
        ) : !s ? (
          <p className="muted pad">Loading…</p>
        ) : s.phase === "starting" ? (
          <div className="startup" role="status">
            <div className="spinner" aria-hidden />
            <p>Starting the embedded sandbox, signing in with its demo client and starting the webhook listener…</p>
          </div>
        ) : (
          <>
            {s.startupError && <ErrorPanel error={s.startupError} compact />}
            <ErrorBoundary key={`${route.screen}/${route.id ?? ""}`}>
              <ScreenView screen={route.screen} id={route.id} embedded={s.active?.embedded ?? false} connected={s.active !== null} />
            </ErrorBoundary>
          </>
        )}
      </main>
    </div>
  );
}

function ScreenView({ screen, id, embedded, connected }: { screen: Screen; id: string | null; embedded: boolean; connected: boolean }) {
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
      return id ? <TransactionDetail id={id} /> : <TransactionsScreen />;
    case "webhooks":
      return <WebhooksScreen />;
    case "token":
      return <TokenScreen />;
    case "connections":
      return <ConnectionsScreen />;
    case "demo":
      return <DemoScreen embedded={embedded} />;
  }
}
