/**
 * The one module of the UI that talks to Tauri. Every command and event the shell offers is a
 * typed function here, so screens never see `invoke` or event names, and the tests of a screen
 * mock exactly one layer (`mockIPC`) underneath it.
 *
 * The commands are declared once, in the core's list (`partner_console_core::for_each_command!`),
 * from which `../bindings/Commands.ts` is generated: `call` is typed over its map `name → [args,
 * result]`, so a wrong name or argument is a `tsc` error (`commands.typecheck.ts`), and after a
 * call succeeds the query keys its declaration lists are made stale (`onStale`, which
 * `lib/useDeclaredInvalidations.ts` hands to React Query): the screens do not invalidate by hand.
 * The events are declared the same way (`for_each_event!` → `../bindings/Events.ts`): each
 * `events.on…` listens by a generated name and is typed by its payload.
 */
import { invoke } from "@tauri-apps/api/core";
import { listen, type UnlistenFn } from "@tauri-apps/api/event";
import { INVALIDATES, type Commands } from "../bindings/Commands";
import { EVENT_NAMES, type Events } from "../bindings/Events";
import type {
  AppError,
  AppStatus,
  CallBatch,
  NetworkChange,
  CaptureBatch,
  ClearCapturesForm,
  ConnectionView,
  CheckStepEvent,
  ScenarioStartForm,
  EvidenceForm,
  ExportFormat,
  ExportRequest,
  FaultForm,
  CaptureExportForm,
  ForwardRuleView,
  JoinWorkspaceForm,
  CaptureFilter,
  InspectorQuery,
  Progress,
  ListenerAddressForm,
  MissedForm,
  RecoverForm,
  SendAgainForm,
  DesktopNotices,
  UpdateView,
  PictureFormat,
  PictureOf,
  NewConnection,
  NewProductForm,
  NewSubscriptionForm,
  NoteForm,
  NoteKind,
  PageQuery,
  ReceiverCheckForm,
  ReplayForm,
  RespondForm,
  RetentionForm,
  RotateKeyForm,
  SearchProgress,
  SearchRequest,
  SubscriptionChangeForm,
  SupportExportForm,
  SupportFilter,
  SupportQuery,
  SupportSyncForm,
  TestMode,
  TokenView,
} from "./types";

export * from "./types";

/** A failed command, with the shell's words for what failed and what to do. */
export class CommandError extends Error {
  readonly kind: AppError["kind"];
  readonly hint: string;
  readonly status: number | null;
  readonly errorCode: string | null;

  constructor(error: AppError) {
    super(error.message);
    this.name = "CommandError";
    this.kind = error.kind;
    this.hint = error.hint;
    this.status = error.status;
    this.errorCode = error.errorCode;
  }
}

function isAppError(value: unknown): value is AppError {
  return (
    typeof value === "object" &&
    value !== null &&
    "kind" in value &&
    "message" in value &&
    "hint" in value
  );
}

/** Turns whatever a rejected command gave into a `CommandError`. */
export function toCommandError(raw: unknown): CommandError {
  if (raw instanceof CommandError) return raw;
  if (isAppError(raw)) return new CommandError(raw);
  const message = raw instanceof Error ? raw.message : String(raw);
  return new CommandError({
    kind: "internal",
    message: message || "The app did not answer.",
    hint: "Try again; if it keeps failing, restart the app.",
    status: null,
    errorCode: null,
  });
}

/**
 * A command's timing and arguments, recorded while `window.partnerCallTrace` is an array (the
 * benchmark sets one): the arguments tell a read a change asked for from one that only refreshed.
 */
interface CallTiming {
  command: string;
  args?: Record<string, unknown>;
  started: number;
  ended: number;
}

/** A command's name, as declared in the core's list. */
export type CommandName = keyof Commands;
/** A command's arguments, as the window sends them. */
export type CommandArgs<K extends CommandName> = Commands[K][0];
/** What a command answers. */
export type CommandResult<K extends CommandName> = Commands[K][1];
/** The arguments `call` takes after the name: none for a command without any. */
type CallArgs<K extends CommandName> = CommandArgs<K> extends Record<string, never> ? [] : [args: CommandArgs<K>];

/** Query keys (each a prefix) a successful call made stale, per its declaration. */
export type StaleKeys = ReadonlyArray<ReadonlyArray<string | number>>;
const staleListeners = new Set<(keys: StaleKeys) => void>();

/** Runs `listener` with the keys each successful call made stale; answers the unsubscribe. */
export function onStale(listener: (keys: StaleKeys) => void): () => void {
  staleListeners.add(listener);
  return () => {
    staleListeners.delete(listener);
  };
}

/** Calls a command of the shell by its declared name and arguments. */
export async function call<K extends CommandName>(command: K, ...rest: CallArgs<K>): Promise<CommandResult<K>> {
  const args = rest[0] as Record<string, unknown> | undefined;
  const trace = (window as { partnerCallTrace?: CallTiming[] }).partnerCallTrace;
  const started = trace ? performance.now() : 0;
  let result: CommandResult<K>;
  try {
    result = await invoke<CommandResult<K>>(command, args);
  } catch (raw) {
    throw toCommandError(raw);
  } finally {
    trace?.push({ command, args, started, ended: performance.now() });
  }
  const declared = INVALIDATES[command] as ((args: unknown) => StaleKeys) | undefined;
  if (declared) {
    const keys = declared(args);
    for (const listener of staleListeners) listener(keys);
  }
  return result;
}

export const api = {
  appStatus: () => call("app_status"),
  /** The status once start-up has ended: answers the moment it does (no polling). */
  waitForStart: () => call("wait_for_start"),
  /** The first screen is drawn: the shell opens the capture store it held back for it. */
  firstScreenShown: () => call("first_screen_shown"),
  addConnection: (form: NewConnection) => call("add_connection", { form }),
  selectConnection: (id: string) => call("select_connection", { id }),
  removeConnection: (id: string) => call("remove_connection", { id }),
  /** Marks a saved connection read-only (every write refused before sending), or not. */
  setConnectionReadOnly: (id: string, readOnly: boolean) => call("set_connection_read_only", { id, readOnly }),
  /** New company-network settings for a saved connection, tried by signing in before they are kept. */
  changeConnectionNetwork: (change: NetworkChange) => call("change_connection_network", { change }),
  /** Checks a connection step by step; each step also arrives as a `connection-check` event. */
  checkConnection: (id: string) => call("check_connection", { id }),
  /** The active connection's calls after call `since` (0 for every call kept), oldest first. */
  listCalls: (since: number) => call("list_calls", { since }),
  /** One call as a curl command: its secrets are `$PARTNER_TOKEN`-style variables, never values. */
  callAsCurl: (seq: number) => call("call_as_curl", { seq }),
  /** The newest writes of the audit log (every connection, the CLI's too), newest first. */
  auditLog: () => call("audit_log"),
  /** The whole audit log written where the user chooses: JSON Lines or CSV. */
  exportAuditLog: (format: ExportFormat) => call("export_audit_log", { format }),
  /** Runs the demo product's subscription again after it failed (a locked keychain, say). */
  retryDemoSubscription: () => call("retry_demo_subscription"),
  /** Starts the embedded sandbox again from its demo data: what the user made in it is lost. */
  resetSandbox: () => call("reset_sandbox"),
  /** Reads the keychain again, after the user unlocked it. */
  retryKeychain: () => call("retry_keychain"),
  /** Forgets the notice at this index of `AppStatus.notices`. */
  dismissNotice: (index: number) => call("dismiss_notice", { index }),

  tokenState: () => call("token_state"),
  tokenRefresh: () => call("token_refresh"),
  tokenRevoke: () => call("token_revoke"),
  tokenIntrospect: () => call("token_introspect"),

  sortKeys: () => call("sort_keys"),
  listProducts: (query: PageQuery) => call("list_products", { query }),
  listTransactions: (query: PageQuery) =>
    call("list_transactions", { query }),
  searchListing: (request: SearchRequest) => call("search_listing", { request }),
  cancelSearch: (searchId: string) => call("cancel_search", { searchId }),
  /** Exports every page through the save dialog, as job `request.jobId` (progress, cancel). */
  exportListing: (request: ExportRequest) => call("export_listing", { request }),
  /** The route a link asked for before the page listened, once (then null). */
  takePendingLink: () => call("take_pending_link"),
  /** Stops an export or import started under this id. */
  cancelJob: (jobId: string) => call("cancel_job", { jobId }),

  getProduct: (id: string) => call("get_product", { id }),
  createProduct: (form: NewProductForm) => call("create_product", { form }),
  addSubscription: (form: NewSubscriptionForm) => call("add_subscription", { form }),
  rotateSigningKey: (form: RotateKeyForm) => call("rotate_signing_key", { form }),
  subscriptionKeys: (subscriptionId: string) =>
    call("subscription_keys", { subscriptionId }),
  retirePreviousKey: (subscriptionId: string) =>
    call("retire_previous_key", { subscriptionId }),
  /**
   * A subscription the service shows without an id, by its url and resource: its keys in the
   * keychain, the id the listener bound to it (none while it waits for its first notification),
   * and the name (`RESOURCE=URL`) to rotate, edit or delete it by.
   */
  elementKeys: (productId: string, url: string, resource: string) =>
    call("element_keys", { productId, url, resource }),
  retirePreviousElementKey: (productId: string, url: string, resource: string) =>
    call("retire_previous_element_key", { productId, url, resource }),
  /** Changes a subscription's URL, events or resource (each left as it is when null). */
  updateSubscription: (form: SubscriptionChangeForm) =>
    call("update_subscription", { form }),
  /** Deletes a subscription and its keys (keychain and listener); answers the updated product. */
  deleteSubscription: (productId: string, subscriptionId: string) =>
    call("delete_subscription", { productId, subscriptionId }),
  /** Moves the subscriptions whose URL starts with `from` to start with `to` instead. */
  repointSubscriptions: (from: string, to: string) =>
    call("repoint_subscriptions", { from, to }),
  /** Checks a subscription's receiver against the spec's webhook rules, as the service meets it. */
  checkReceiver: (form: ReceiverCheckForm) => call("check_receiver", { form }),
  /** The subscriptions that reach the console's own listener, through the tunnel or directly. */
  listenerSubscriptions: () => call("listener_subscriptions"),
  /** The notifications the service should have sent the listener and that never arrived. */
  /** Writes a redacted evidence bundle (HAR 1.2 and a Markdown summary) for a support ticket. */
  evidenceBundle: (form: EvidenceForm) => call("evidence_bundle", { form }),
  /** A sandbox's own delivery records, newest first, with the captures of each. */
  sandboxDeliveries: () => call("sandbox_deliveries"),
  findMissed: (form: MissedForm) => call("find_missed", { form }),
  cancelMissed: () => call("cancel_missed"),
  recoverMissed: (form: RecoverForm) => call("recover_missed", { form }),
  /** Sends the captures again to a receiver as job `form.jobId` (progress events, `cancelJob`). */
  sendCapturesAgain: (form: SendAgainForm) => call("send_captures_again", { form }),
  cancelReceiverCheck: (subscriptionId: string) => call("cancel_receiver_check", { subscriptionId }),
  signingKeyProblems: (key: string) => call("signing_key_problems", { key }),
  generateSigningKey: () => call("generate_signing_key"),

  getTransaction: (id: string) => call("get_transaction", { id }),
  transactionEvents: (id: string) => call("transaction_events", { id }),
  transactionNotifications: (id: string) => call("transaction_notifications", { id }),
  /** The team's notes on a transaction or a capture, oldest first (a team workspace's only). */
  notes: (kind: NoteKind, targetId: string) => call("notes", { kind, targetId }),
  /** Writes a note as the workspace's member (support and up). */
  addNote: (form: NoteForm) => call("add_note", { form }),
  /** The transaction, its events and its notifications' timeline as one JSON file (save dialog). */
  saveTransactionEvidence: (id: string) => call("save_transaction_evidence", { id }),
  notificationPicture: (of: PictureOf) => call("notification_picture", { of }),
  desktopNotices: () => call("desktop_notices"),
  setDesktopNotices: (notices: DesktopNotices) => call("set_desktop_notices", { notices }),
  /** Where the app's update stands (each change also arrives as the `update` event). */
  updateState: () => call("update_state"),
  /** Asks the release page now. */
  checkForUpdate: () => call("check_for_update"),
  /** The user's yes: downloads, verifies and installs the update, then the app restarts. */
  installUpdate: () => call("install_update"),
  /** Turns the check at start on or off. */
  setUpdateChecks: (atStart: boolean) => call("set_update_checks", { atStart }),
  exportNotificationPicture: (of: PictureOf, format: PictureFormat) => call("export_notification_picture", { of, format }),
  respond: (form: RespondForm) => call("respond_transaction", { form }),

  listenerStatus: () => call("listener_status"),
  /** Starts the listener on the address kept in the settings. */
  listenerStart: () => call("listener_start"),
  listenerStop: () => call("listener_stop"),
  /** Moves the listener (kept in the settings); refused with a free address offered when taken. */
  setListenerAddress: (form: ListenerAddressForm) =>
    call("set_listener_address", { form }),
  setRetention: (form: RetentionForm) => call("set_retention", { form }),
  /** Deletes these captures, or every one with `ids: null`. */
  clearCaptures: (form: ClearCapturesForm) => call("clear_captures", { form }),
  /** Saves the tunnel URL; `repoint` lists the subscriptions still on the URL it replaced. */
  setTunnelUrl: (url: string | null) => call("set_tunnel_url", { url }),
  checkTunnel: () => call("check_tunnel"),
  setTestMode: (mode: TestMode) => call("set_test_mode", { mode }),
  /** One window of the inspector's list, read from the capture store. */
  inspectorPage: (query: InspectorQuery) => call("inspector_page", { query }),
  /** The filter's choices and the verdict counts under the rest of the filter. */
  inspectorFacets: (filter: CaptureFilter) => call("inspector_facets", { filter }),
  /** Readies the store's read connections for the first searches (answers when done). */
  inspectorWarmUp: () => call("inspector_warm_up"),
  /** Every attempt of a capture's notification, first first. */
  captureAttempts: (id: number) => call("capture_attempts", { id }),
  /** Saves the forward rules (first match wins) and applies them at once. */
  setForwardRules: (rules: ForwardRuleView[]) => call("set_forward_rules", { rules }),
  captureDetail: (id: number) => call("capture_detail", { id }),
  compareCaptures: (first: number, second: number) => call("compare_captures", { first, second }),
  signatureReport: (id: number, pastedKey: string | null) =>
    call("signature_report", { id, pastedKey }),
  replay: (form: ReplayForm) => call("replay_capture", { form }),
  /** Exports the chosen or filtered captures through the save dialog (progress, cancel). */
  exportCaptures: (form: CaptureExportForm) => call("export_captures", { form }),
  /** Imports captures from JSON Lines through the open dialog (progress, cancel). */
  importCaptures: (jobId: string) => call("import_captures", { jobId }),

  /** What the active connection's local index holds (`exists: false` before the first sync). */
  supportIndex: () => call("support_index"),
  /** Fills or refreshes the local index as job `form.jobId` (progress events, `cancelJob`). */
  supportSync: (form: SupportSyncForm) => call("support_sync", { form }),
  /** One page of the index's answers to a filter, newest first. */
  supportFind: (query: SupportQuery) => call("support_find", { query }),
  /** How many transactions the filter selects, per status and per product. */
  supportCounts: (filter: SupportFilter) => call("support_counts", { filter }),
  /** Exports the filtered set through the save dialog (progress as `job-progress`, cancel). */
  supportExport: (form: SupportExportForm) => call("support_export", { form }),
  /** Deletes the active connection's local index and its key. */
  supportForget: () => call("support_forget"),
  /** The team workspace the app works with (asking it again who the member is, and what their role allows). */
  workspaceStatus: () => call("workspace_status"),
  /** Joins a team workspace with the member's personal token (checked first; kept in the OS's secret store). */
  joinWorkspace: (form: JoinWorkspaceForm) => call("join_workspace", { form }),
  /** Leaves the team workspace: the support desk answers from this machine's own store again. */
  leaveWorkspace: () => call("leave_workspace"),
  /** Where a pasted id, link or event id leads on the active connection. */
  goTo: (text: string) => call("go_to", { text }),
  /** A `partner-console://` link that opens this resource on the active connection. */
  resourceLink: (screen: "transactions" | "products", id: string, eventId: string | null) =>
    call("resource_link", { screen, id, eventId }),

  demoNewTransaction: (productId: string) =>
    call("demo_new_transaction", { productId }),
  demoUpdateTransaction: (transactionId: string) =>
    call("demo_update_transaction", { transactionId }),
  demoCustomEvent: (transactionId: string, text: string) =>
    call("demo_custom_event", { transactionId, text }),
  demoAdvanceClock: (minutes: number) => call("demo_advance_clock", { minutes }),
  /** The faults on demand in force on the embedded sandbox. */
  demoFaults: () => call("demo_faults"),
  /** A fault for the next calls of an endpoint; the faults in force after it. */
  demoAddFault: (form: FaultForm) => call("demo_add_fault", { form }),
  demoClearFaults: () => call("demo_clear_faults"),
  /** Revokes every token of the embedded sandbox: the console's next call gets a new one. */
  demoRevokeTokens: () => call("demo_revoke_tokens"),

  /** The scenarios the Demo offers (built in, and the user's files), and the files that did not parse. */
  listScenarios: () => call("list_scenarios"),
  /** Starts playing a scenario on the embedded sandbox: nothing is played yet (`next` is 0). */
  scenarioStart: (form: ScenarioStartForm) => call("scenario_start", { form }),
  /** Plays the next step and answers once it has settled (an error once the play is finished). */
  scenarioNext: () => call("scenario_next"),
  /** The play under way, if any (the Demo screen opened again). */
  scenarioCurrent: () => call("scenario_current"),
  /** Ends the play; the listener is put back as it was. */
  scenarioStop: () => call("scenario_stop"),
};

export type Api = typeof api;

/** Event names the shell emits (generated from the core's list of events); live data arrives batched. */
export const EVENTS = EVENT_NAMES;

/**
 * Listens for an event. Registering takes a round trip, and what the shell sends before it is
 * done is not delivered: `onListening` runs once it is, so a caller can read the state again
 * and miss nothing sent in between.
 */
function subscribe<K extends keyof Events>(event: K, handler: (payload: Events[K]) => void, onListening?: () => void): () => void {
  let unlisten: UnlistenFn | null = null;
  let stopped = false;
  listen<Events[K]>(event, (e) => handler(e.payload))
    .then((fn) => {
      if (stopped) fn();
      else {
        unlisten = fn;
        onListening?.();
      }
    })
    .catch(() => {
      // No event bridge (e.g. a plain browser): the screen still works from commands.
    });
  return () => {
    stopped = true;
    if (unlisten) unlisten();
  };
}

export const events = {
  /** New captures of the listener; `onListening` runs once they are heard. */
  onCaptures: (handler: (batch: CaptureBatch) => void, onListening?: () => void) => subscribe(EVENTS.captures, handler, onListening),
  /** New calls of the active connection, a few batches a second at most. */
  onCalls: (handler: (batch: CallBatch) => void, onListening?: () => void) => subscribe(EVENTS.calls, handler, onListening),
  onToken: (handler: (view: TokenView) => void) => subscribe(EVENTS.token, handler),
  /** A step of a connection check that just ended. */
  onConnectionCheck: (handler: (step: CheckStepEvent) => void) => subscribe(EVENTS.connectionCheck, handler),
  onSearchProgress: (handler: (progress: SearchProgress) => void) =>
    subscribe(EVENTS.searchProgress, handler),
  /** A `partner-console://` link asked for this route (`#/…`); `onListening` runs once events are heard. */
  onOpenLink: (handler: (route: string) => void, onListening?: () => void) => subscribe(EVENTS.openLink, handler, onListening),
  onJobProgress: (handler: (progress: Progress) => void) => subscribe(EVENTS.jobProgress, handler),
  onSupportSyncProgress: (handler: (progress: Progress) => void) =>
    subscribe(EVENTS.supportSyncProgress, handler),
  onMissedProgress: (handler: (progress: Progress) => void) => subscribe(EVENTS.missedProgress, handler),
  onStatus: (handler: (status: AppStatus) => void, onListening?: () => void) =>
    subscribe(EVENTS.status, handler, onListening),
  /** The app's update state, each time it changes; `onListening` once events are heard. */
  onUpdate: (handler: (view: UpdateView) => void, onListening?: () => void) => subscribe(EVENTS.update, handler, onListening),
};

/** Copies text for the user; the webview's clipboard, with the old fallback. */
export async function copyText(text: string): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    const area = document.createElement("textarea");
    area.value = text;
    document.body.appendChild(area);
    area.select();
    const ok = document.execCommand("copy");
    area.remove();
    return ok;
  }
}

export type { ConnectionView };
