//! A throwaway PostgreSQL server for a test: its own cluster in a temporary folder, on its own
//! free port of 127.0.0.1, gone (process and files) when the value is dropped. The team server's
//! tests run against the real database, never a mock of it.
//!
//! Why it is built as it is:
//! - Blocking (`std::process`), not async: starting a cluster is a handful of short commands
//!   (`initdb`, `pg_ctl`, `createdb`), and a blocking API is callable from a plain test and from
//!   a `#[tokio::test]` alike (`Drop` cannot be async anyway).
//! - The server's own programs, not a library: `initdb` and `pg_ctl -w` know how to make a
//!   cluster and when it is ready; no new crate is needed. They are found in
//!   `$PARTNER_PG_BINDIR`, else Debian's newest `/usr/lib/postgresql/*/bin`, else
//!   `pg_config --bindir`, else `initdb` on `PATH` (its symlinks resolved, so `createdb` and
//!   `postgres` are found beside it). None: the error says to install Debian's `postgresql`
//!   (`scripts/setup.sh` does).
//! - One folder and one port per value, nothing shared: tests running in parallel each get an
//!   independent server. The Unix socket goes into that folder too (`-k`), not into
//!   `/var/run/postgresql`, which may not exist or belong to the system's cluster. The port is
//!   taken by binding 127.0.0.1:0 and letting go; should another process take it before the
//!   server does, the start is tried again on a new port.
//! - Trust authentication for the superuser `partner`, on 127.0.0.1 only: a test's server holds
//!   nothing secret and must be reachable with a plain URL.
//! - PostgreSQL refuses to run as root, and CI runs as root: then the folder is given to
//!   Debian's `postgres` user and the server's programs run through `runuser -u postgres --`.
//!   Where that user does not exist (PostgreSQL not from Debian's package), a system user
//!   `partner-pg` is created once with `useradd --system --no-create-home` and used instead.
//!   Root is told by `id -u` (the workspace forbids `unsafe`, so no `geteuid`). The clients
//!   (`createdb`, a test's `psql`) connect over TCP and run as whoever runs the test.
//! - The temporary folder lives under `/tmp` when running as root (the other user must be able
//!   to reach it, and `$TMPDIR` may be inside root's home), else under the usual temp dir.
//! - Stopping is `pg_ctl stop -m immediate`: the data is thrown away, so there is nothing to
//!   shut down cleanly, and it is the fastest way to free the port.

use std::fmt::Write as _;
use std::io;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;
use tempfile::TempDir;

/// The cluster's superuser (trusted on 127.0.0.1, no password).
pub const SUPERUSER: &str = "partner";

/// How long `pg_ctl` waits for the server to start or stop, in seconds.
const PG_CTL_TIMEOUT_SECS: &str = "60";

/// How many ports a start tries when the free port was taken in between.
const PORT_ATTEMPTS: usize = 3;

/// Where to get the server when none is found.
const INSTALL_HINT: &str = "install Debian's PostgreSQL (`apt-get install postgresql`, which \
     scripts/setup.sh does) or set PARTNER_PG_BINDIR to a folder holding initdb and pg_ctl";

/// A running throwaway PostgreSQL server; stopped and deleted on drop.
#[derive(Debug)]
pub struct Postgres {
    bindir: PathBuf,
    /// The OS user the server runs as when the test runs as root (else `None`: as ourselves).
    run_as: Option<String>,
    port: u16,
    running: bool,
    /// Last, so that the folder goes after the server has been stopped.
    dir: TempDir,
}

impl Postgres {
    /// Makes a new cluster in a temporary folder and starts it on a free port of 127.0.0.1;
    /// returns once it accepts connections. The error says what failed, with the end of the
    /// server's log when the server did not start.
    pub fn start() -> io::Result<Self> {
        let bindir = find_bindir()?;
        let run_as = if is_root()? {
            Some(server_user()?)
        } else {
            None
        };
        let builder = {
            let mut b = tempfile::Builder::new();
            b.prefix("partner-pg-");
            b
        };
        let dir = if run_as.is_some() {
            builder.tempdir_in("/tmp")?
        } else {
            builder.tempdir()?
        };
        if let Some(user) = &run_as {
            let mut chown = Command::new("chown");
            chown.arg(format!("{user}:")).arg(dir.path());
            run(&mut chown, "chown the temporary folder")?;
        }

        let mut pg = Postgres {
            bindir,
            run_as,
            port: 0,
            running: false,
            dir,
        };
        pg.initdb()?;
        pg.start_server()?;
        Ok(pg)
    }

    /// The server's port on 127.0.0.1.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `postgres://partner@127.0.0.1:PORT/postgres`: the superuser on the default database.
    pub fn url(&self) -> String {
        self.database_url("postgres")
    }

    /// The URL of database `name` on this server (whether or not it exists).
    pub fn database_url(&self, name: &str) -> String {
        format!("postgres://{SUPERUSER}@127.0.0.1:{}/{name}", self.port)
    }

    /// Creates database `name` (owned by `partner`) and returns its URL. Names are ASCII
    /// letters, digits and `_` (so that they need no quoting in SQL or in a URL).
    pub fn create_database(&self, name: &str) -> io::Result<String> {
        let valid = !name.is_empty()
            && name.len() <= 63
            && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
        if !valid {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("database name {name:?}: use 1 to 63 ASCII letters, digits or _"),
            ));
        }
        let mut createdb = Command::new(self.client("createdb"));
        createdb
            .args(["--no-password", "-h", "127.0.0.1", "-U", SUPERUSER, "-p"])
            .arg(self.port.to_string())
            .arg(name);
        run(&mut createdb, &format!("create database {name}"))?;
        Ok(self.database_url(name))
    }

    /// The temporary folder (the cluster is in `data/`, the server's log is `server.log`).
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// The server's log so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.log_path()).unwrap_or_default()
    }

    /// Stops the server now (`pg_ctl stop -m immediate`, waiting until it is gone); errors are
    /// ignored. The folder goes on drop. Stopping twice does nothing.
    pub fn stop(&mut self) {
        if !self.running {
            return;
        }
        self.running = false;
        let mut cmd = self.server_command("pg_ctl");
        cmd.args([
            "stop",
            "-m",
            "immediate",
            "-w",
            "-t",
            PG_CTL_TIMEOUT_SECS,
            "-D",
        ])
        .arg(self.data_path());
        let _ = cmd.output();
    }

    fn data_path(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    fn log_path(&self) -> PathBuf {
        self.dir.path().join("server.log")
    }

    fn initdb(&self) -> io::Result<()> {
        let mut cmd = self.server_command("initdb");
        cmd.arg("-D")
            .arg(self.data_path())
            .args(["-A", "trust", "-U", SUPERUSER, "--no-sync", "-E", "UTF8"])
            .arg("--locale=C");
        run(&mut cmd, "initdb").map(drop)
    }

    fn start_server(&mut self) -> io::Result<()> {
        // From here on a drop runs `pg_ctl stop`: should `pg_ctl start -w` give up while the
        // server is still starting, the server does not outlive the error.
        self.running = true;
        let mut last_error = None;
        for _ in 0..PORT_ATTEMPTS {
            let port = free_port()?;
            let options = format!(
                "-p {port} -c listen_addresses=127.0.0.1 -k '{}' -c fsync=on",
                self.dir.path().display()
            );
            let mut cmd = self.server_command("pg_ctl");
            cmd.args(["start", "-w", "-t", PG_CTL_TIMEOUT_SECS, "-D"])
                .arg(self.data_path())
                .arg("-l")
                .arg(self.log_path())
                .arg("-o")
                .arg(options);
            let output = cmd
                .output()
                .map_err(|e| io::Error::new(e.kind(), format!("run {}: {e}", describe(&cmd))))?;
            if output.status.success() {
                self.port = port;
                return Ok(());
            }
            let log = self.log();
            let port_taken = log.contains("could not bind") || log.contains("already in use");
            let error = io::Error::other(format!(
                "PostgreSQL did not start on port {port}: {}\n--- end of {} ---\n{}",
                failure(&cmd, &output),
                self.log_path().display(),
                tail(&log, 30),
            ));
            if !port_taken {
                return Err(error);
            }
            last_error = Some(error);
        }
        Err(last_error.unwrap_or_else(|| io::Error::other("PostgreSQL did not start")))
    }

    /// One of the server's programs, run as the server's user when we are root; in the
    /// temporary folder, since that user may not be able to enter the test's directory.
    fn server_command(&self, program: &str) -> Command {
        let path = self.bindir.join(program);
        let mut cmd = match &self.run_as {
            Some(user) => {
                let mut c = Command::new("runuser");
                c.args(["-u", user, "--"]).arg(path);
                c
            }
            None => Command::new(path),
        };
        cmd.current_dir(self.dir.path());
        cmd
    }

    /// A client program: the server's own version if beside it, else whatever is on `PATH`.
    fn client(&self, program: &str) -> PathBuf {
        let beside = self.bindir.join(program);
        if beside.is_file() {
            beside
        } else {
            PathBuf::from(program)
        }
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The folder of `initdb`, `pg_ctl` and `postgres` (see the notes at the top).
fn find_bindir() -> io::Result<PathBuf> {
    if let Some(dir) = std::env::var_os("PARTNER_PG_BINDIR") {
        let dir = PathBuf::from(dir);
        if dir.join("initdb").is_file() {
            return Ok(dir);
        }
        return Err(io::Error::new(
            io::ErrorKind::NotFound,
            format!(
                "PARTNER_PG_BINDIR={} holds no initdb: {INSTALL_HINT}",
                dir.display()
            ),
        ));
    }
    if let Some(dir) = newest_debian_bindir() {
        return Ok(dir);
    }
    if let Ok(out) = Command::new("pg_config").arg("--bindir").output() {
        let dir = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
        // Debian's pg_config (libpq-dev) names the server's folder even when no server is
        // installed there.
        if out.status.success() && dir.join("initdb").is_file() {
            return Ok(dir);
        }
    }
    if let Some(initdb) = on_path("initdb") {
        let real = std::fs::canonicalize(&initdb).unwrap_or(initdb);
        if let Some(dir) = real.parent() {
            return Ok(dir.to_path_buf());
        }
    }
    Err(io::Error::new(
        io::ErrorKind::NotFound,
        format!("no PostgreSQL server (initdb) found: {INSTALL_HINT}"),
    ))
}

/// `/usr/lib/postgresql/VERSION/bin` of the highest VERSION holding `initdb`.
fn newest_debian_bindir() -> Option<PathBuf> {
    let entries = std::fs::read_dir("/usr/lib/postgresql").ok()?;
    entries
        .filter_map(|entry| {
            let entry = entry.ok()?;
            let version: Vec<u32> = entry
                .file_name()
                .to_str()?
                .split('.')
                .map(|part| part.parse().ok())
                .collect::<Option<_>>()?;
            let bin = entry.path().join("bin");
            bin.join("initdb").is_file().then_some((version, bin))
        })
        .max()
        .map(|(_, bin)| bin)
}

fn on_path(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|candidate| candidate.is_file())
}

/// Whether the effective user is root (`id -u`; cached).
fn is_root() -> io::Result<bool> {
    static ROOT: OnceLock<bool> = OnceLock::new();
    if let Some(root) = ROOT.get() {
        return Ok(*root);
    }
    let out = run(Command::new("id").arg("-u"), "id -u")?;
    let root = String::from_utf8_lossy(&out.stdout).trim() == "0";
    Ok(*ROOT.get_or_init(|| root))
}

/// The OS user the server runs as under root: Debian's `postgres`, else `partner-pg` (created
/// on first use). Several tests may get here at once: whoever loses the `useradd` race finds
/// the user made by the winner.
fn server_user() -> io::Result<String> {
    const DEBIAN: &str = "postgres";
    const OURS: &str = "partner-pg";
    static USER: OnceLock<String> = OnceLock::new();
    if let Some(user) = USER.get() {
        return Ok(user.clone());
    }
    let exists = |user: &str| {
        Command::new("id")
            .args(["-u", user])
            .output()
            .is_ok_and(|out| out.status.success())
    };
    let user = if exists(DEBIAN) {
        DEBIAN
    } else {
        if !exists(OURS) {
            let mut useradd = Command::new("useradd");
            useradd.args(["--system", "--no-create-home", OURS]);
            if let Err(error) = run(&mut useradd, "create the user the server runs as") {
                if !exists(OURS) {
                    return Err(error);
                }
            }
        }
        OURS
    };
    Ok(USER.get_or_init(|| user.to_string()).clone())
}

/// A port of 127.0.0.1 free a moment ago.
fn free_port() -> io::Result<u16> {
    let listener = TcpListener::bind("127.0.0.1:0")?;
    Ok(listener.local_addr()?.port())
}

/// Runs `cmd` to its end; an error (naming `what`, the command and its output) unless it
/// succeeded.
fn run(cmd: &mut Command, what: &str) -> io::Result<Output> {
    let output = cmd
        .output()
        .map_err(|e| io::Error::new(e.kind(), format!("{what}: run {}: {e}", describe(cmd))))?;
    if output.status.success() {
        Ok(output)
    } else {
        Err(io::Error::other(format!(
            "{what}: {}",
            failure(cmd, &output)
        )))
    }
}

fn describe(cmd: &Command) -> String {
    let mut text = cmd.get_program().to_string_lossy().into_owned();
    for arg in cmd.get_args() {
        let _ = write!(text, " {}", arg.to_string_lossy());
    }
    text
}

fn failure(cmd: &Command, output: &Output) -> String {
    format!(
        "{} failed ({}): {}{}",
        describe(cmd),
        output.status,
        String::from_utf8_lossy(&output.stderr).trim(),
        match String::from_utf8_lossy(&output.stdout).trim() {
            "" => String::new(),
            stdout => format!("\n{stdout}"),
        }
    )
}

/// The last `lines` lines of `text`.
fn tail(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpStream;
    use std::time::Instant;

    fn psql(url: &str, sql: &str) -> String {
        let out = Command::new("psql")
            .args(["-X", "-A", "-t", "-v", "ON_ERROR_STOP=1"])
            .arg(url)
            .args(["-c", sql])
            .output()
            .expect("run psql");
        assert!(
            out.status.success(),
            "psql {url} -c {sql:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    #[test]
    fn postgres_starts_serves_and_is_gone_after_drop() {
        let started = Instant::now();
        let pg = Postgres::start().expect("start a throwaway PostgreSQL");
        eprintln!(
            "postgres: started on port {} in {:?}",
            pg.port(),
            started.elapsed()
        );
        let port = pg.port();
        let dir = pg.dir().to_path_buf();
        assert_eq!(
            pg.url(),
            format!("postgres://partner@127.0.0.1:{port}/postgres")
        );

        let url = pg.create_database("probe").expect("create database probe");
        assert_eq!(url, format!("postgres://partner@127.0.0.1:{port}/probe"));
        assert_eq!(psql(&url, "select 1"), "1");
        assert_eq!(psql(&url, "select current_database()"), "probe");
        assert!(pg.create_database("no; drop").is_err());

        let stopping = Instant::now();
        drop(pg);
        eprintln!("postgres: stopped in {:?}", stopping.elapsed());
        let refused = TcpStream::connect(("127.0.0.1", port));
        assert!(refused.is_err(), "port {port} still accepts after drop");
        assert!(!dir.exists(), "{} left behind", dir.display());
    }

    #[test]
    fn postgres_servers_side_by_side_are_independent() {
        let (a, b) = std::thread::scope(|s| {
            let a = s.spawn(Postgres::start);
            let b = s.spawn(Postgres::start);
            (
                a.join().expect("thread").expect("start a"),
                b.join().expect("thread").expect("start b"),
            )
        });
        assert_ne!(a.port(), b.port());
        assert_ne!(a.dir(), b.dir());
        a.create_database("only_in_a").expect("create in a");
        let count = "select count(*) from pg_database where datname = 'only_in_a'";
        assert_eq!(psql(&a.url(), count), "1");
        assert_eq!(psql(&b.url(), count), "0");

        let mut a = a;
        a.stop();
        a.stop();
        assert!(TcpStream::connect(("127.0.0.1", a.port())).is_err());
        assert_eq!(psql(&b.url(), "select 1"), "1");
    }
}
