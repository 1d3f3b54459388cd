//! The Tauri commands, generated from the one list of them in the core
//! (`partner_console_core::for_each_command!`): for each entry, a `#[tauri::command]` adapter
//! that hands its arguments to the core's function of the same name (`sync` ones at once,
//! the others awaited), and [`handler`], the list the builder registers. Nothing here is kept
//! in step by hand: a new command is an entry of the core's list and nothing in the shell.
//!
//! The adapters are private on purpose: `#[tauri::command]` on a public function exports a
//! macro of its own, and a macro exported from a macro's expansion cannot be named by path.
//! The commands the shell serves alone (kind `shell`: the app's updates, which need Tauri's
//! updater) are written by hand in [`updates`] and only listed here.

pub mod updates;

use partner_console_core::commands::prelude::*;
use tauri::State;
#[allow(unused_imports)]
use updates::*;

/// Every command's adapter, and [`handler`].
macro_rules! tauri_commands {
    ($(
        $(#[doc = $doc:literal])*
        $name:ident ( $($arg:ident : $ty:ty),* ) -> $ret:ty,
        invalidates [ $( [ $($key:expr),+ ] ),* ],
        $kind:ident |$c:ident| $body:expr;
    )*) => {
        $( tauri_command! { $(#[doc = $doc])* $kind $name ($($arg: $ty),*) -> $ret } )*

        /// Every command, for the builder's `invoke_handler`.
        pub fn handler() -> impl Fn(tauri::ipc::Invoke) -> bool + Send + Sync + 'static {
            tauri::generate_handler![$($name),*]
        }
    };
}

/// One adapter of [`tauri_commands`], shaped by the command's kind.
macro_rules! tauri_command {
    ($(#[doc = $doc:literal])* sync $name:ident ($($arg:ident: $ty:ty),*) -> $ret:ty) => {
        $(#[doc = $doc])*
        #[tauri::command]
        fn $name(state: State<'_, Console>, $($arg: $ty),*) -> Result<$ret> {
            partner_console_core::commands::$name(&state, $($arg),*)
        }
    };
    ($(#[doc = $doc:literal])* shell $name:ident ($($arg:ident: $ty:ty),*) -> $ret:ty) => {};
    ($(#[doc = $doc:literal])* $kind:ident $name:ident ($($arg:ident: $ty:ty),*) -> $ret:ty) => {
        $(#[doc = $doc])*
        #[tauri::command]
        async fn $name(state: State<'_, Console>, $($arg: $ty),*) -> Result<$ret> {
            partner_console_core::commands::$name(&state, $($arg),*).await
        }
    };
}

partner_console_core::for_each_command!(tauri_commands);
