//! Writes the TypeScript declarations of every type that crosses the bridge into
//! `ui/src/bindings/`, and checks that the committed files match the Rust.
//!
//! The check is a test (`cargo test -p partner-console-core bindings`): it generates into a scratch
//! folder and compares file by file, so a Rust change that forgets to regenerate fails CI.
//! `PARTNER_WRITE_BINDINGS=1` makes the same test rewrite the committed files instead.
//!
//! Beside the types it writes `Commands.ts`, from the one list of the commands
//! ([`crate::for_each_command!`]): the map `name → [arguments, result]` the UI's `call` is typed
//! over, so a wrong command name or argument is a `tsc` error, and `INVALIDATES`, the query keys
//! each command makes stale once it succeeded (the UI's platform layer reads them again); and
//! `Events.ts`, from the one list of the events ([`crate::for_each_event!`]): the map `name →
//! payload` and the names the UI listens by. The types exported are found from the same lists
//! (each command's arguments and result, each event's payload, with what they contain): a new
//! view type needs no line here once a command or an event carries it.

use crate::error::{AppError, ErrorKind};
use std::path::{Path, PathBuf};
use ts_rs::TS;

/// Exports what a type's TypeScript name refers to: the type itself if it has a file of its
/// own, and its generic arguments (each with their dependencies).
fn export_reachable<T: TS + 'static + ?Sized>(dir: &Path) -> Result<(), ts_rs::ExportError> {
    struct Visit<'a> {
        dir: &'a Path,
        outcome: Result<(), ts_rs::ExportError>,
    }
    impl ts_rs::TypeVisitor for Visit<'_> {
        fn visit<T: TS + 'static + ?Sized>(&mut self) {
            if self.outcome.is_ok() && T::output_path().is_some() {
                self.outcome = T::export_all_to(self.dir);
            }
            T::visit_generics(self);
        }
    }
    let mut visit = Visit {
        dir,
        outcome: Ok(()),
    };
    ts_rs::TypeVisitor::visit::<T>(&mut visit);
    visit.outcome
}

/// A function that exports one type of the bridge into a folder.
type Export = fn(&Path) -> Result<(), ts_rs::ExportError>;

/// The exports of every argument and result type of the command list.
macro_rules! command_types {
    ($(
        $(#[doc = $doc:literal])*
        $name:ident ( $($arg:ident : $ty:ty),* ) -> $ret:ty,
        invalidates [ $( [ $($key:expr),+ ] ),* ],
        $kind:ident |$c:ident| $body:expr;
    )*) => {{
        use crate::commands::prelude::*;
        let exports: Vec<Export> = vec![$($(export_reachable::<$ty>,)* export_reachable::<$ret>,)*];
        exports
    }};
}

/// The exports of every payload type of the event list.
macro_rules! event_types {
    ($( $(#[doc = $doc:literal])* $variant:ident($name:literal) => $payload:ty; )*) => {{
        use crate::commands::prelude::*;
        let exports: Vec<Export> = vec![$(export_reachable::<$payload>,)*];
        exports
    }};
}

/// Exports every bridge type (and the `partner-api` types they contain) into `dir`: every type
/// a command or an event carries (found from their lists), and the few no command carries.
pub fn export_all(dir: &Path) -> Result<(), ts_rs::ExportError> {
    // What no command answers nor event carries: a failed command's error, and the strict
    // transaction the support desk's copy keeps (inside an export's rows), with its status.
    AppError::export_all_to(dir)?;
    ErrorKind::export_all_to(dir)?;
    partner_api::Transaction::export_all_to(dir)?;
    partner_api::ResponseStatus::export_all_to(dir)?;
    // Every type a command or an event carries, whether or not it is listed above: a new view
    // type needs no line here once a command answers it.
    for export in crate::for_each_command!(command_types) {
        export(dir)?;
    }
    for export in crate::for_each_event!(event_types) {
        export(dir)?;
    }
    std::fs::write(dir.join("Commands.ts"), commands_ts())?;
    std::fs::write(dir.join("Events.ts"), events_ts())?;
    Ok(())
}

/// How one command of the list is seen from TypeScript.
struct CommandTs {
    name: &'static str,
    doc: Vec<&'static str>,
    /// Each argument's name as the window sends it (camelCase) and its TypeScript type.
    args: Vec<(String, String)>,
    result: String,
    /// Each key's parts, as TypeScript expressions over `args`.
    invalidates: Vec<Vec<String>>,
}

/// The imports a TypeScript type name needs: the type itself and its generic arguments, each
/// by its file in `ui/src/bindings/`.
fn imports_of<T: TS + 'static + ?Sized>(imports: &mut std::collections::BTreeMap<String, String>) {
    struct Visit<'a>(&'a mut std::collections::BTreeMap<String, String>);
    impl ts_rs::TypeVisitor for Visit<'_> {
        fn visit<T: TS + 'static + ?Sized>(&mut self) {
            if let Some(dep) = ts_rs::Dependency::from_ty::<T>() {
                let file = dep.output_path.with_extension("");
                self.0
                    .insert(dep.ts_name, format!("./{}", file.to_string_lossy()));
            }
            T::visit_generics(self);
        }
    }
    ts_rs::TypeVisitor::visit::<T>(&mut Visit(imports));
}

/// A type's name in TypeScript, as the bridge carries it: the bridge's integers are JSON
/// numbers, which ts-rs names `bigint` when they are 64-bit.
fn ts_name<T: TS + 'static + ?Sized>() -> String {
    T::name().replace("bigint", "number")
}

/// `snake_case` → `camelCase`, as Tauri names a command's arguments on the window's side.
fn camel(name: &str) -> String {
    let mut out = String::new();
    let mut upper = false;
    for ch in name.chars() {
        if ch == '_' {
            upper = true;
        } else if upper {
            out.extend(ch.to_uppercase());
            upper = false;
        } else {
            out.push(ch);
        }
    }
    out
}

/// One part of an invalidated key: a string as it is, an argument's path (`form.product_id`)
/// as the window's (`args.form.productId`).
fn key_part(part: &str) -> String {
    if part.starts_with('"') {
        part.to_owned()
    } else {
        let path: Vec<String> = part
            .split('.')
            .map(|segment| camel(segment.trim()))
            .collect();
        format!("args.{}", path.join("."))
    }
}

/// Gathers the list into [`CommandTs`] and the imports its types need.
macro_rules! ts_commands {
    ($(
        $(#[doc = $doc:literal])*
        $name:ident ( $($arg:ident : $ty:ty),* ) -> $ret:ty,
        invalidates [ $( [ $($key:expr),+ ] ),* ],
        $kind:ident |$c:ident| $body:expr;
    )*) => {{
        use crate::commands::prelude::*;
        let mut imports = std::collections::BTreeMap::new();
        let mut commands = Vec::new();
        $(
            $( imports_of::<$ty>(&mut imports); )*
            imports_of::<$ret>(&mut imports);
            commands.push(CommandTs {
                name: stringify!($name),
                doc: vec![$($doc),*],
                args: vec![$((camel(stringify!($arg)), ts_name::<$ty>())),*],
                result: ts_name::<$ret>(),
                invalidates: vec![$(vec![$(key_part(stringify!($key))),+]),*],
            });
        )*
        (imports, commands)
    }};
}

/// `ui/src/bindings/Commands.ts`.
pub fn commands_ts() -> String {
    let (imports, commands) = crate::for_each_command!(ts_commands);
    let mut out = String::from(
        "// This file was generated from `partner_console_core::for_each_command!` by the bindings test. Do not edit this file manually.\n",
    );
    for (name, file) in &imports {
        out.push_str(&format!("import type {{ {name} }} from \"{file}\";\n"));
    }
    out.push_str(
        "\n/** Every command the shell serves: its name → [its arguments as the window sends them, its result]. */\nexport type Commands = {\n",
    );
    for command in &commands {
        let doc: Vec<&str> = command.doc.iter().map(|line| line.trim()).collect();
        out.push_str(&format!(
            "  /** {} */\n",
            doc.join(" ").replace("*/", "* /")
        ));
        let args = if command.args.is_empty() {
            "Record<string, never>".to_owned()
        } else {
            let fields: Vec<String> = command
                .args
                .iter()
                .map(|(name, ty)| format!("{name}: {ty}"))
                .collect();
            format!("{{ {} }}", fields.join(", "))
        };
        out.push_str(&format!(
            "  {}: [{args}, {}];\n",
            command.name, command.result
        ));
    }
    out.push_str("};\n\n/** The query keys (each a prefix) a command makes stale once it succeeded. */\nexport const INVALIDATES: { readonly [K in keyof Commands]?: (args: Commands[K][0]) => ReadonlyArray<ReadonlyArray<string | number>> } = {\n");
    for command in commands.iter().filter(|c| !c.invalidates.is_empty()) {
        let keys: Vec<String> = command
            .invalidates
            .iter()
            .map(|key| format!("[{}]", key.join(", ")))
            .collect();
        let param = if keys.iter().any(|k| k.contains("args.")) {
            "(args)"
        } else {
            "()"
        };
        out.push_str(&format!(
            "  {}: {param} => [{}],\n",
            command.name,
            keys.join(", ")
        ));
    }
    out.push_str("};\n");
    out
}

/// `ui/src/bindings/` of this checkout.
pub fn committed_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../ui/src/bindings")
}

/// Gathers the event list: (its doc, its variant, its name, its payload's TypeScript type),
/// and the imports the payloads need.
macro_rules! ts_events {
    ($( $(#[doc = $doc:literal])* $variant:ident($name:literal) => $payload:ty; )*) => {{
        use crate::commands::prelude::*;
        let mut imports = std::collections::BTreeMap::new();
        let mut events: Vec<(Vec<&'static str>, &'static str, &'static str, String)> = Vec::new();
        $(
            imports_of::<$payload>(&mut imports);
            events.push((vec![$($doc),*], stringify!($variant), $name, ts_name::<$payload>()));
        )*
        (imports, events)
    }};
}

/// `ui/src/bindings/Events.ts`.
pub fn events_ts() -> String {
    let (imports, events) = crate::for_each_event!(ts_events);
    let mut out = String::from(
        "// This file was generated from `partner_console_core::for_each_event!` by the bindings test. Do not edit this file manually.\n",
    );
    for (name, file) in &imports {
        out.push_str(&format!("import type {{ {name} }} from \"{file}\";\n"));
    }
    out.push_str(
        "\n/** Every event the window hears: its name → its payload. */\nexport type Events = {\n",
    );
    for (doc, _, name, payload) in &events {
        let doc: Vec<&str> = doc.iter().map(|line| line.trim()).collect();
        out.push_str(&format!(
            "  /** {} */\n",
            doc.join(" ").replace("*/", "* /")
        ));
        out.push_str(&format!("  \"{name}\": {payload};\n"));
    }
    out.push_str("};\n\n/** The events' names, by the camelCase of their Rust variant. */\nexport const EVENT_NAMES = {\n");
    for (_, variant, name, _) in &events {
        let mut key = variant.to_string();
        key[..1].make_ascii_lowercase();
        out.push_str(&format!("  {key}: \"{name}\",\n"));
    }
    out.push_str("} as const;\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn read_dir(dir: &Path) -> BTreeMap<String, String> {
        let mut files = BTreeMap::new();
        for entry in std::fs::read_dir(dir).unwrap() {
            let entry = entry.unwrap();
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.ends_with(".ts") {
                files.insert(name, std::fs::read_to_string(entry.path()).unwrap());
            }
        }
        files
    }

    #[test]
    fn bindings_match_the_rust_types() {
        if std::env::var_os("PARTNER_WRITE_BINDINGS").is_some() {
            let dir = committed_dir();
            if dir.exists() {
                std::fs::remove_dir_all(&dir).unwrap();
            }
            std::fs::create_dir_all(&dir).unwrap();
            export_all(&dir).unwrap();
            return;
        }
        let scratch = std::env::temp_dir().join(format!("partner-bindings-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&scratch);
        std::fs::create_dir_all(&scratch).unwrap();
        export_all(&scratch).unwrap();
        let fresh = read_dir(&scratch);
        let committed = read_dir(&committed_dir());
        let _ = std::fs::remove_dir_all(&scratch);
        assert!(
            fresh.len() > 30,
            "expected the bridge types, got {}",
            fresh.len()
        );
        for (name, text) in &fresh {
            assert_eq!(
                committed.get(name),
                Some(text),
                "ui/src/bindings/{name} is out of date: run `PARTNER_WRITE_BINDINGS=1 cargo test -p partner-console-core bindings`"
            );
        }
        for name in committed.keys() {
            assert!(
                fresh.contains_key(name),
                "ui/src/bindings/{name} no longer comes from any Rust type: delete it"
            );
        }
    }
}
