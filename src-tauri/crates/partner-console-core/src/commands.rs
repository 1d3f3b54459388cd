//! Every command the window can call, declared once: [`for_each_command!`](crate::for_each_command).
//!
//! Why one list: a command used to be written four times (the service, the shell's adapter, the
//! shell's `generate_handler!` list, the string the UI calls it by), and a mistyped name was
//! caught only by the end-to-end tests. Now each command is one entry of the list, and
//! everything else is generated from it by a macro handed to `for_each_command!` (as Yaak's
//! `with_commands!`):
//! - here, one function per command, `commands::<name>(&Console, args…) -> Result<T>`: the
//!   uniform shape any transport calls (the desktop shell today; an HTTP transport for the team
//!   workspace, #50, could call the same functions);
//! - in the shell (`src-tauri/src/commands/mod.rs`), its `#[tauri::command]` adapters and the
//!   handler list;
//! - in [`crate::bindings`], `ui/src/bindings/Commands.ts`: the TypeScript map `name → [args,
//!   result]` the UI's `call` is typed over, and the query keys each command invalidates.
//!
//! An entry reads
//! ```text
//! /// What it does (the doc comment goes on the generated function).
//! name(arg: Type, …) -> Result, invalidates [["key", arg.field], …], kind |console| body;
//! ```
//! - The arguments are named as in Rust; the window sends them in camelCase (`product_id` is
//!   `productId`), as Tauri has always converted them.
//! - `invalidates`: the UI's query keys (prefixes) to read again once the call succeeded; a
//!   part is a string or an argument (`form.product_id`, sent as `form.productId`).
//! - The kind says how the call runs: `sync` (at once, on the caller's thread: cheap reads),
//!   `async` (awaits I/O), `blocking` (blocking work, moved off the runtime's threads by
//!   [`Console::blocking`]), `shell` (served by the shell alone, as the app's updates are: no
//!   function here, the body is not used).
//! - The body is the one call to the services that serves it, with the console named by the
//!   closure-like `|console|`; it gives a `Result<T>`.
//!
//! The types named in the list are those of [`prelude`]: each consumer of the list brings it
//! into scope where it expands the list.

/// The types the command list names, for whatever expands it.
pub mod prelude {
    pub use crate::bridge::*;
    pub use crate::{Console, Result};
    pub use partner_api::read::{EventView, ProductView, SubscriptionView, TransactionView};
    pub use partner_api::Introspection;
    pub use partner_conformance::Report;
    pub use partner_local::missed::MissedReport;
    pub use partner_local::recover::RecoveryReport;
    pub use partner_local::updates::UpdateView;
    pub use partner_local::DesktopNotices;
}

/// The one list of the commands: calls `$callback! { entries }` with every entry (see the
/// module's notes for the form of an entry). `$callback` is a `macro_rules!` macro in scope
/// where this is invoked.
#[macro_export]
macro_rules! for_each_command {
    ($callback:ident) => {
        $callback! {
            // Start-up, connections, the keychain, notices (`services::connections`,
            // `services::startup`, `services::keys`, `services::demo`).
            /// The app's status now.
            app_status() -> AppStatus, invalidates [], sync |c| Ok(c.status());
            /// The app's status once start-up has ended (ready or failed): the UI awaits this
            /// instead of polling `app_status`, so the first listing is asked for the moment it
            /// can be answered.
            wait_for_start() -> AppStatus, invalidates [], async |c| {
                c.started().await;
                Ok(c.status())
            };
            /// The page drew its first screen: the capture store, held back until then, opens.
            first_screen_shown() -> (), invalidates [], sync |c| {
                services::startup::first_screen_shown(c);
                Ok(())
            };
            /// Adds a connection and opens it.
            add_connection(form: NewConnection) -> AppStatus, invalidates [], async |c| {
                c.status_after(services::connections::add(c, form).await)
            };
            /// Opens a saved connection.
            select_connection(id: String) -> AppStatus, invalidates [], async |c| {
                c.status_after(services::connections::open(c, &id).await)
            };
            /// Forgets a saved connection (and its secrets).
            remove_connection(id: String) -> AppStatus, invalidates [], blocking |c| {
                c.status_after(services::connections::remove(c, &id))
            };
            /// Marks a saved connection read-only, or not.
            set_connection_read_only(id: String, read_only: bool) -> AppStatus, invalidates [],
                blocking |c| c.status_after(services::connections::set_read_only(c, &id, read_only));
            /// New company-network settings for a saved connection, tried by signing in first.
            change_connection_network(change: NetworkChange) -> AppStatus, invalidates [],
                async |c| c.status_after(services::connections::change_network(c, change).await);
            /// Checks a connection step by step (`connection-check` events as each step ends).
            check_connection(id: String) -> ConnectionCheckView, invalidates [],
                async |c| services::connection_check::check(c, &id).await;
            /// Starts the embedded sandbox again from its demo data.
            reset_sandbox() -> AppStatus, invalidates [],
                async |c| c.status_after(services::demo::reset(c).await);
            /// Reads the keychain again (after the user unlocked it).
            retry_keychain() -> AppStatus, invalidates [],
                async |c| c.status_after(services::keys::retry(c).await);
            /// Forgets a notice the user has read.
            dismiss_notice(index: usize) -> AppStatus, invalidates [],
                sync |c| Ok(services::startup::dismiss_notice(c, index));
            /// Runs the demo product's subscription again after it failed.
            retry_demo_subscription() -> AppStatus, invalidates [],
                sync |c| services::demo::retry_subscription(c);

            // The call log and the audit log (`services::calls`, `services::audit`).
            /// The active connection's calls after call `since` (0 for all kept).
            list_calls(since: u64) -> CallList, invalidates [], sync |c| services::calls::list(c, since);
            /// One call as a curl command, its secrets as shell variables.
            call_as_curl(seq: u64) -> String, invalidates [], sync |c| services::calls::curl(c, seq);
            /// The newest writes of the audit log (every connection, the CLI's too); while
            /// joined, the team workspace's (every member's writes there).
            audit_log() -> AuditLogView, invalidates [], async |c| services::audit::list(c).await;
            /// The whole audit log (the team workspace's while joined), written where the user
            /// chooses.
            export_audit_log(format: ExportFormat) -> FileJobResult, invalidates [],
                async |c| services::audit::export(c, format).await;

            // The token (`services::token`).
            /// The token's state with its deadlines.
            token_state() -> TokenView, invalidates [], async |c| services::token::current(c);
            /// Replaces the token with a new one now: the old one is revoked, a fresh one issued.
            token_refresh() -> TokenView, invalidates [], async |c| services::token::refresh(c).await;
            /// Revokes the token.
            token_revoke() -> TokenView, invalidates [], async |c| services::token::revoke(c).await;
            /// What the service says of the token.
            token_introspect() -> Introspection, invalidates [],
                async |c| services::token::introspect(c).await;

            // Listings, search, export, jobs (`services::listings`, `services::jobs`).
            /// The keys the active service sorts by.
            sort_keys() -> SortKeys, invalidates [], sync |c| Ok(services::listings::sort_keys(c));
            /// One page of the products.
            list_products(query: PageQuery) -> PageView<Received<ProductView>>, invalidates [],
                async |c| services::listings::products(c, &query).await;
            /// One page of the transactions.
            list_transactions(query: PageQuery) -> PageView<Received<TransactionView>>, invalidates [],
                async |c| services::listings::transactions(c, &query).await;
            /// A search across a listing's pages (`search-progress` events).
            search_listing(request: SearchRequest) -> SearchResult, invalidates [],
                async |c| services::listings::search(c, request).await;
            /// Stops a search.
            cancel_search(search_id: String) -> (), invalidates [], sync |c| {
                services::listings::cancel_search(c, &search_id);
                Ok(())
            };
            /// Exports a whole listing (every page, in the current sort) to a file the user
            /// picks in the save dialog, as a job the user can stop; nothing is written when
            /// stopped.
            export_listing(request: ExportRequest) -> FileJobResult, invalidates [],
                async |c| services::listings::export(c, request).await;
            /// Stops an export or import.
            cancel_job(job_id: String) -> (), invalidates [], sync |c| {
                services::jobs::cancel(c, &job_id);
                Ok(())
            };

            // Products, subscriptions and their keys, the receiver check
            // (`services::products`, `services::subscriptions`, `services::receiver_check`).
            /// A product.
            get_product(id: String) -> Received<ProductView>, invalidates [],
                async |c| services::products::get(c, &id).await;
            /// Creates a product.
            create_product(form: NewProductForm) -> Received<ProductView>,
                invalidates [["listing", "products"]],
                async |c| services::products::create(c, form).await;
            /// Adds a subscription to a product; its key is shown once.
            add_subscription(form: NewSubscriptionForm) -> ShownOnceKey,
                invalidates [["product", form.product_id], ["elementKeys", form.product_id]],
                async |c| services::products::add_subscription(c, form).await;
            /// Rotates a subscription's signing key; the new one is shown once.
            rotate_signing_key(form: RotateKeyForm) -> ShownOnceKey,
                invalidates [
                    ["keys", form.subscription_id],
                    ["elementKeys", form.product_id],
                    ["product", form.product_id]
                ],
                async |c| services::products::rotate_key(c, form).await;
            /// The keys the keychain holds for a subscription.
            subscription_keys(subscription_id: String) -> SubscriptionKeys, invalidates [],
                async |c| services::products::keys_held(c, subscription_id).await;
            /// Forgets a subscription's previous key.
            retire_previous_key(subscription_id: String) -> SubscriptionKeys, invalidates [],
                blocking |c| services::products::retire_previous_key(c, subscription_id);
            /// A subscription the service shows without an id, by its product, url and resource.
            element_keys(product_id: String, url: String, resource: String) -> ElementKeys,
                invalidates [],
                async |c| services::products::element_keys(c, product_id, url, resource).await;
            /// Forgets the previous key of a subscription shown without an id.
            retire_previous_element_key(product_id: String, url: String, resource: String)
                -> ElementKeys, invalidates [],
                blocking |c| services::products::retire_previous_element_key(c, product_id, url, resource);
            /// What a signing key lacks to be accepted.
            signing_key_problems(key: String) -> Vec<String>, invalidates [],
                sync |_c| Ok(services::products::signing_key_problems(&key));
            /// A new compliant signing key.
            generate_signing_key() -> String, invalidates [],
                sync |_c| Ok(services::products::generate_signing_key());
            /// Changes a subscription's URL, events or resource.
            update_subscription(form: SubscriptionChangeForm) -> SubscriptionView,
                invalidates [["product", form.product_id], ["elementKeys", form.product_id]],
                async |c| services::subscriptions::update(c, form).await;
            /// Deletes a subscription and its keys; answers the product as it is after.
            delete_subscription(product_id: String, subscription_id: String) -> Received<ProductView>,
                invalidates [["elementKeys", product_id]],
                async |c| services::subscriptions::delete(c, &product_id, &subscription_id).await;
            /// Moves the subscriptions whose URL starts with `from` to start with `to`.
            repoint_subscriptions(from: String, to: String) -> RepointResult,
                invalidates [["product"]],
                async |c| services::subscriptions::repoint(c, &from, &to).await;
            /// Checks a subscription's receiver against the spec's webhook rules.
            check_receiver(form: ReceiverCheckForm) -> Report, invalidates [],
                async |c| services::receiver_check::check(c, form).await;
            /// Stops a receiver check.
            cancel_receiver_check(subscription_id: String) -> (), invalidates [], sync |c| {
                services::receiver_check::cancel(c, &subscription_id);
                Ok(())
            };
            /// The subscriptions that reach the console's own listener.
            listener_subscriptions() -> Vec<ListenerSubscription>, invalidates [],
                async |c| services::receiver_check::listener_subscriptions(c).await;

            // Missed notifications, sending again, evidence, deliveries (`services::missed`,
            // `services::send_again`, `services::evidence`, `services::deliveries`).
            /// The notifications the service should have sent the listener and that never
            /// arrived.
            find_missed(form: MissedForm) -> MissedReport, invalidates [],
                async |c| services::missed::find(c, form).await;
            /// Stops the missed-notification check.
            cancel_missed() -> (), invalidates [], sync |c| {
                services::missed::cancel(c);
                Ok(())
            };
            /// Sends missed notifications again, built and signed as the service would have.
            recover_missed(form: RecoverForm) -> RecoveryReport,
                invalidates [["transaction-notifications"]],
                async |c| services::missed::resend(c, form).await;
            /// Sends the chosen or filtered captures again to a receiver, paced, as a job; each
            /// answer is kept beside its capture.
            send_captures_again(form: SendAgainForm) -> SendReport,
                invalidates [["capture"], ["transaction-notifications"]],
                async |c| services::send_again::send_again(c, form).await;
            /// Writes a redacted evidence bundle (HAR 1.2 and a Markdown summary).
            evidence_bundle(form: EvidenceForm) -> EvidenceResult, invalidates [],
                async |c| services::evidence::bundle(c, form).await;
            /// What the service did: the sandbox's delivery records, with the captures of each.
            sandbox_deliveries() -> Vec<DeliveryView>, invalidates [],
                async |c| services::deliveries::list(c).await;

            // Transactions and their notifications (`services::transactions`,
            // `services::transaction_notifications`, `services::picture`).
            /// A transaction.
            get_transaction(id: String) -> Received<TransactionView>, invalidates [],
                async |c| services::transactions::get(c, &id).await;
            /// A transaction's events.
            transaction_events(id: String) -> Vec<Received<EventView>>, invalidates [],
                async |c| services::transactions::events(c, &id).await;
            /// Every notification the console knows about for the transaction, each as a
            /// timeline.
            transaction_notifications(id: String) -> TransactionNotifications, invalidates [],
                async |c| services::transaction_notifications::timeline(c, &id).await;
            /// The transaction, its events and its notifications' timeline, saved as one JSON
            /// file for a support ticket (through the save dialog).
            save_transaction_evidence(id: String) -> FileJobResult, invalidates [],
                async |c| services::transaction_notifications::save_evidence(c, &id).await;
            /// The partner's response to a transaction.
            respond_transaction(form: RespondForm) -> Received<TransactionView>,
                invalidates [["events", form.transaction_id], ["listing", "transactions"]],
                async |c| services::transactions::respond(c, form).await;
            /// The picture of a notification; none while the console knows nothing of it.
            notification_picture(of: PictureOf) -> Option<NotificationPicture>, invalidates [],
                async |c| services::picture::draw(c, of).await;
            /// The picture saved as an SVG or PNG file, through the save dialog.
            export_notification_picture(of: PictureOf, format: PictureFormat) -> FileJobResult,
                invalidates [],
                async |c| services::picture::export(c, of, format).await;
            /// Which desktop notifications are on.
            desktop_notices() -> DesktopNotices, invalidates [],
                sync |c| Ok(services::desktop_notices::get(c));
            /// Turns desktop notifications on or off, each kind on its own.
            set_desktop_notices(notices: DesktopNotices) -> DesktopNotices, invalidates [],
                blocking |c| services::desktop_notices::set(c, notices);

            // The listener, the tunnel, the inspector's captures, the signature debugger
            // (`services::listener`, `services::tunnel`, `services::captures`,
            // `services::signatures`).
            /// The listener's state.
            listener_status() -> ListenerView, invalidates [],
                sync |c| Ok(services::listener::view(c));
            /// Starts the listener on the address kept in the settings.
            listener_start() -> ListenerView, invalidates [["status"]],
                async |c| services::listener::view_after(c, services::listener::start(c).await);
            /// Stops the listener.
            listener_stop() -> ListenerView, invalidates [["status"]],
                sync |c| Ok(services::listener::stop(c));
            /// Saves the active connection's tunnel URL, checks it in the background, and
            /// offers to re-point the subscriptions that still use the URL it replaced.
            set_tunnel_url(url: Option<String>) -> TunnelSaved, invalidates [],
                async |c| services::tunnel::save_url(c, url).await;
            /// Moves the listener to another address and path (kept in the settings).
            set_listener_address(form: ListenerAddressForm) -> ListenerView,
                invalidates [["status"]],
                async |c| services::listener::view_after(c, services::listener::move_to(c, form).await);
            /// How many captures the store keeps, and for how long.
            set_retention(form: RetentionForm) -> ListenerView, invalidates [["status"]],
                async |c| services::listener::view_after(c, services::listener::set_retention(c, form).await);
            /// Deletes the given captures (what the inspector's filter shows), or all of them.
            clear_captures(form: ClearCapturesForm) -> ClearResult, invalidates [],
                async |c| services::captures::clear(c, form).await.map(|cleared| ClearResult { cleared });
            /// Checks the tunnel now.
            check_tunnel() -> TunnelCheck, invalidates [],
                async |c| services::tunnel::check_now(c).await;
            /// How the listener answers the service (test mode).
            set_test_mode(mode: TestMode) -> ListenerView, invalidates [],
                blocking |c| services::listener::view_after(c, services::listener::set_test_mode(c, mode));
            /// Saves the forward rules and applies them to the running listener.
            set_forward_rules(rules: Vec<ForwardRuleView>) -> ListenerView, invalidates [],
                blocking |c| services::listener::view_after(c, services::listener::set_forward_rules(c, rules));
            /// One window of the inspector's list, read from the store.
            inspector_page(query: InspectorQuery) -> InspectorPage, invalidates [],
                async |c| services::captures::page(c, query).await;
            /// The inspector filter's choices and the verdict counts.
            inspector_facets(filter: CaptureFilter) -> InspectorFacets, invalidates [],
                async |c| services::captures::facets(c, filter).await;
            /// Readies the store's read connections for the inspector's first searches.
            inspector_warm_up() -> (), invalidates [], async |c| services::captures::warm_up(c).await;
            /// The attempts folded under a notification's row.
            capture_attempts(id: i64) -> Vec<CaptureSummary>, invalidates [],
                async |c| services::captures::attempts(c, id).await;
            /// Imports captures from JSON Lines through the open dialog.
            import_captures(job_id: String) -> FileJobResult, invalidates [],
                async |c| services::captures::import(c, job_id).await;
            /// A capture with its body and headers (the workspace's while joined).
            capture_detail(id: i64) -> CaptureDetail, invalidates [],
                async |c| services::captures::detail_shown(c, id).await;
            /// Two captures side by side.
            compare_captures(first: i64, second: i64) -> Comparison, invalidates [],
                async |c| services::captures::compare_shown(c, first, second).await;
            /// The signature debugger: `partner_listener::debugger`'s diagnosis over the
            /// subscription's keys and an optional pasted key (never stored).
            signature_report(id: i64, pasted_key: Option<String>) -> SignatureReport,
                invalidates [],
                blocking |c| services::signatures::report(c, id, pasted_key);
            /// Replays a capture to this listener or to any URL: unchanged, or with an edited
            /// body re-signed with the subscription's current key. Either way it carries
            /// `Svc-Replay: 1` and is kept as a replay, never counted as the service's attempt.
            replay_capture(form: ReplayForm) -> ReplayResult,
                invalidates [["capture", form.capture_id]],
                async |c| services::listener::replay(c, form).await;
            /// Exports the chosen or filtered captures (JSON Lines or HAR 1.2) through the save
            /// dialog.
            export_captures(form: CaptureExportForm) -> FileJobResult, invalidates [],
                async |c| services::captures::export(c, form).await;

            // Notes on a transaction or a capture, kept by the team workspace
            // (`services::notes`).
            /// The notes on a transaction or a capture, oldest first; refused when no team
            /// workspace is joined (notes are the team's).
            notes(kind: NoteKind, target_id: String) -> Vec<NoteView>, invalidates [],
                async |c| services::notes::list(c, kind, &target_id).await;
            /// Writes a note as the workspace's member (support and up).
            add_note(form: NoteForm) -> NoteView,
                invalidates [["notes", form.kind, form.target_id]],
                async |c| services::notes::add(c, form).await;

            // The support desk's local index and "Go to" (`services::support`,
            // `services::links`).
            /// What the active connection's local index holds.
            support_index() -> SupportIndexView, invalidates [],
                async |c| services::support::view(c).await;
            /// Fills or refreshes the local index as a job.
            support_sync(form: SupportSyncForm) -> SupportSyncResult,
                invalidates [["support", "find"], ["support", "counts"]],
                async |c| services::support::sync(c, form).await;
            /// One page of the index's answers to a filter.
            support_find(query: SupportQuery) -> SupportPage, invalidates [],
                async |c| services::support::find(c, query).await;
            /// How many transactions the filter selects, per status and per product.
            support_counts(filter: SupportFilter) -> SupportCounts, invalidates [],
                async |c| services::support::counts(c, filter).await;
            /// Exports the filtered set through the save dialog.
            support_export(form: SupportExportForm) -> FileJobResult, invalidates [],
                async |c| services::support::export(c, form).await;
            /// Deletes the active connection's local index and its key.
            support_forget() -> SupportIndexView,
                invalidates [["support", "find"], ["support", "counts"]],
                async |c| services::support::forget(c).await;
            /// Opens anything by its id or `resourceRef`, on the active connection.
            go_to(text: String) -> GoToTarget, invalidates [],
                async |c| services::go_to::go_to(c, &text).await;
            /// The `partner-console://` link to a transaction (or one of its events) or a
            /// product on the active connection.
            resource_link(screen: String, id: String, event_id: Option<String>) -> String,
                invalidates [],
                sync |c| services::links::link_to(c, &screen, &id, event_id.as_deref());
            /// The route a link asked for before the page was listening, once.
            take_pending_link() -> Option<String>, invalidates [],
                sync |c| Ok(services::links::take_pending(c));

            // The team workspace (`services::workspace`).
            /// The team workspace the app works with, after asking it again who the member is.
            workspace_status() -> WorkspaceView, invalidates [],
                async |c| Ok(services::workspace::status(c).await);
            /// Joins a team workspace with the member's personal token (checked with the
            /// workspace first; the token kept in the OS's secret store).
            join_workspace(form: JoinWorkspaceForm) -> WorkspaceView,
                invalidates [
                    ["workspace"], ["support"], ["transaction"],
                    ["capture"], ["compare"], ["notes"], ["audit-log"]
                ],
                async |c| services::workspace::join(c, form).await;
            /// Leaves the team workspace (its saved login deleted): the support desk answers
            /// from this machine's own store again.
            leave_workspace() -> WorkspaceView,
                invalidates [
                    ["workspace"], ["support"], ["transaction"],
                    ["capture"], ["compare"], ["notes"], ["audit-log"]
                ],
                async |c| services::workspace::leave(c).await;

            // The Demo screen: the embedded sandbox's lender, its clock, faults, scenarios
            // (`services::embedded`, `services::faults`, `services::scenarios`).
            /// The lender makes a new transaction.
            demo_new_transaction(product_id: String) -> DemoOutcome,
                invalidates [["listing", "transactions"], ["token"]],
                async |c| services::embedded::new_transaction(c, product_id).await;
            /// The lender updates a transaction.
            demo_update_transaction(transaction_id: String) -> DemoOutcome,
                invalidates [["listing", "transactions"], ["token"]],
                async |c| services::embedded::update_transaction(c, transaction_id).await;
            /// The lender adds an event of its own words.
            demo_custom_event(transaction_id: String, text: String) -> DemoOutcome,
                invalidates [["listing", "transactions"], ["token"]],
                async |c| services::embedded::custom_event(c, transaction_id, text).await;
            /// Moves the sandbox's clock.
            demo_advance_clock(minutes: u32) -> DemoOutcome,
                invalidates [["listing", "transactions"], ["token"]],
                sync |c| services::embedded::advance_clock(c, minutes);
            /// The faults in force on the embedded sandbox.
            demo_faults() -> Vec<FaultView>, invalidates [],
                async |c| services::faults::list(c).await;
            /// A fault for the next calls of an endpoint.
            demo_add_fault(form: FaultForm) -> Vec<FaultView>, invalidates [],
                async |c| services::faults::add(c, form).await;
            /// Ends every fault.
            demo_clear_faults() -> Vec<FaultView>, invalidates [],
                async |c| services::faults::clear(c).await;
            /// Revokes every token of the embedded sandbox.
            demo_revoke_tokens() -> DemoOutcome,
                invalidates [["listing", "transactions"], ["token"]],
                async |c| services::faults::revoke_tokens(c).await;
            /// The scenarios the Demo offers, and the files that did not parse.
            list_scenarios() -> ScenarioList, invalidates [],
                async |c| Ok(services::scenarios::list(c).await);
            /// Starts playing a scenario on the embedded sandbox.
            scenario_start(form: ScenarioStartForm) -> ScenarioPlayView, invalidates [],
                async |c| services::scenarios::start(c, form).await;
            /// Plays the next step and answers once it has settled.
            scenario_next() -> ScenarioPlayView, invalidates [],
                async |c| services::scenarios::next(c).await;
            /// The play under way, if any.
            scenario_current() -> Option<ScenarioPlayView>, invalidates [],
                async |c| Ok(services::scenarios::current(c).await);
            /// Ends the play; the listener is put back as it was.
            scenario_stop() -> (), invalidates [], async |c| {
                services::scenarios::stop(c).await;
                Ok(())
            };

            // The app's updates: the shell's alone (`src-tauri/src/updates.rs`).
            /// Where the update stands (the window also hears each change as `update`).
            update_state() -> UpdateView, invalidates [], shell |_c| ();
            /// Asks the release page now (unless the fleet turned checks off).
            check_for_update() -> UpdateView, invalidates [], shell |_c| ();
            /// The user's yes: downloads, verifies and installs the update, then restarts.
            install_update() -> UpdateView, invalidates [], shell |_c| ();
            /// Turns the check at start on or off.
            set_update_checks(at_start: bool) -> UpdateView, invalidates [], shell |_c| ();
        }
    };
}

/// Makes one function per command of the list (the `shell` ones have none).
macro_rules! core_functions {
    ($(
        $(#[doc = $doc:literal])*
        $name:ident ( $($arg:ident : $ty:ty),* ) -> $ret:ty,
        invalidates [ $( [ $($key:expr),+ ] ),* ],
        $kind:ident |$c:ident| $body:expr;
    )*) => {
        $( core_function! { $(#[doc = $doc])* $kind $name ($($arg: $ty),*) -> $ret, |$c| $body } )*
    };
}

/// One function of [`core_functions`], shaped by its kind.
macro_rules! core_function {
    ($(#[doc = $doc:literal])* sync $name:ident ($($arg:ident: $ty:ty),*) -> $ret:ty, |$c:ident| $body:expr) => {
        $(#[doc = $doc])*
        pub fn $name($c: &Console, $($arg: $ty),*) -> Result<$ret> {
            $body
        }
    };
    ($(#[doc = $doc:literal])* async $name:ident ($($arg:ident: $ty:ty),*) -> $ret:ty, |$c:ident| $body:expr) => {
        $(#[doc = $doc])*
        pub async fn $name($c: &Console, $($arg: $ty),*) -> Result<$ret> {
            $body
        }
    };
    ($(#[doc = $doc:literal])* blocking $name:ident ($($arg:ident: $ty:ty),*) -> $ret:ty, |$c:ident| $body:expr) => {
        $(#[doc = $doc])*
        ///
        /// Blocking work: run off the runtime's threads ([`Console::blocking`]).
        pub async fn $name($c: &Console, $($arg: $ty),*) -> Result<$ret> {
            $c.blocking(move |$c| $body).await
        }
    };
    ($(#[doc = $doc:literal])* shell $name:ident ($($arg:ident: $ty:ty),*) -> $ret:ty, |$c:ident| $body:expr) => {};
}

use crate::services;
use prelude::*;

crate::for_each_command!(core_functions);
