//! A team workspace for the core's tests: a throwaway PostgreSQL with the workspace's schema and
//! one real `partner-server` in-process over HTTP, its members added straight into the database.
//! Shared by the tests of the support desk's, the inspector's and the audit log's sides of a
//! workspace (`workspace`, `team_inspector`, `team_audit`), so that the server is started and
//! joined one way.
use crate::harness::{form, Headless};
use partner_api::Secret;
use partner_console_core::services::workspace;
use partner_seal::DataKey;
use partner_server::intake::IntakeConfig;
use partner_server::{database, members, Role, RunningServer, ServerConfig};
use partner_testkit::postgres::Postgres;
use partner_workspace::WorkspaceClient;

/// A team: its database and one server.
pub struct Team {
    _pg: Postgres,
    pub pool: database::Pool,
    pub server: RunningServer,
    /// The server key the workspace's secrets are sealed with.
    pub key: DataKey,
    /// The first admin's client (its token as `partner server init` prints it).
    pub admin: WorkspaceClient,
}

impl Team {
    pub async fn start() -> Self {
        let pg = tokio::task::spawn_blocking(Postgres::start)
            .await
            .expect("the task")
            .expect("a throwaway PostgreSQL");
        let url = pg.create_database("team").expect("a database");
        let pool = database::connect(&url, 4).await.expect("connected");
        let key = DataKey::generate();
        let admin_token = database::init(&pool, &key)
            .await
            .expect("init")
            .admin_token
            .expect("the first admin's token");
        let server = partner_server::start(
            pool.clone(),
            key.clone(),
            ServerConfig {
                addr: "127.0.0.1:0".parse().expect("an address"),
                intake: IntakeConfig::default(),
                junk_rate: Some(20),
                retention: partner_listener::Retention::default(),
                sync_every: None,
                tls: None,
            },
        )
        .await
        .expect("a server");
        let admin = WorkspaceClient::new(
            partner_workspace::client::parse_url(&format!("http://{}", server.local_addr))
                .expect("url"),
            Secret::new(admin_token.expose()),
        )
        .expect("the admin's client");
        Self {
            _pg: pg,
            pool,
            server,
            key,
            admin,
        }
    }

    /// The workspace's URL, as a console joins it.
    pub fn url(&self) -> String {
        format!("http://{}", self.server.local_addr)
    }

    /// Adds a member; their personal token.
    pub async fn member(&self, name: &str, role: Role) -> String {
        members::add(&self.pool, name, role, Some("test"))
            .await
            .expect("a member")
            .expose()
            .to_string()
    }

    /// A console, started as the app starts, joined to the workspace with `token`.
    pub async fn joined(&self, token: &str) -> Headless {
        let app = Headless::start().await;
        let view = workspace::join(
            &app.console,
            form(serde_json::json!({ "url": self.url(), "token": token })),
        )
        .await
        .expect("joined");
        assert!(view.joined, "{view:?}");
        app
    }

    /// Stops the server (its connections drained); the database goes with the drop.
    pub async fn stop(self) {
        self.server.stop().await.expect("stopped");
    }
}
