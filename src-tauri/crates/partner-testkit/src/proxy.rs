//! A forward proxy as a company network has one, for tests: `CONNECT host:port` opens a tunnel
//! (how HTTPS goes through a proxy), and a request in absolute form (`GET http://host/...`, how
//! plain HTTP goes through one) is passed on. With [`ProxyAuth`] it asks for HTTP Basic proxy
//! credentials (`Proxy-Authorization`) and answers 407 without the right ones.
//!
//! It counts what it relayed ([`TestProxy::relayed`]) and what it refused, so a test proves the
//! traffic really went through it. Written on tokio alone: a proxy only reads one request head
//! and then copies bytes both ways, which is all a test needs from it.

use base64::Engine as _;
use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;

/// The credentials the proxy requires.
#[derive(Debug, Clone)]
pub struct ProxyAuth {
    pub user: String,
    pub password: String,
}

#[derive(Debug, Default)]
struct Counts {
    relayed: AtomicU64,
    refused: AtomicU64,
}

/// A proxy on 127.0.0.1 port 0; dropping it stops it.
#[derive(Debug)]
pub struct TestProxy {
    addr: SocketAddr,
    counts: Arc<Counts>,
    stop: CancellationToken,
}

impl TestProxy {
    /// Starts a proxy that requires `auth` (or nothing).
    pub async fn start(auth: Option<ProxyAuth>) -> io::Result<Self> {
        let listener = TcpListener::bind(("127.0.0.1", 0)).await?;
        let addr = listener.local_addr()?;
        let counts = Arc::new(Counts::default());
        let stop = CancellationToken::new();
        let expected = auth.map(|auth| {
            let pair = format!("{}:{}", auth.user, auth.password);
            format!(
                "Basic {}",
                base64::engine::general_purpose::STANDARD.encode(pair)
            )
        });
        let serving_counts = Arc::clone(&counts);
        let serving_stop = stop.clone();
        tokio::spawn(async move {
            loop {
                let (client, _) = tokio::select! {
                    () = serving_stop.cancelled() => return,
                    accepted = listener.accept() => match accepted {
                        Ok(accepted) => accepted,
                        Err(_) => continue,
                    },
                };
                let counts = Arc::clone(&serving_counts);
                let expected = expected.clone();
                let stop = serving_stop.clone();
                tokio::spawn(async move {
                    tokio::select! {
                        () = stop.cancelled() => {}
                        _ = relay(client, expected.as_deref(), &counts) => {}
                    }
                });
            }
        });
        Ok(Self { addr, counts, stop })
    }

    /// `http://127.0.0.1:PORT`
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Connections passed on to a service (tunnels opened and plain requests forwarded).
    pub fn relayed(&self) -> u64 {
        self.counts.relayed.load(Ordering::SeqCst)
    }

    /// Requests answered 407 (no or wrong credentials).
    pub fn refused(&self) -> u64 {
        self.counts.refused.load(Ordering::SeqCst)
    }
}

impl Drop for TestProxy {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

/// One client connection: read its request head, check the credentials, then tunnel or forward.
async fn relay(mut client: TcpStream, expected: Option<&str>, counts: &Counts) -> io::Result<()> {
    let (head, rest) = read_head(&mut client).await?;
    let mut lines = head.split("\r\n");
    let request_line = lines.next().unwrap_or_default().to_string();
    let headers: Vec<&str> = lines.filter(|l| !l.is_empty()).collect();
    let authorization = headers.iter().find_map(|line| {
        let (name, value) = line.split_once(':')?;
        name.trim()
            .eq_ignore_ascii_case("proxy-authorization")
            .then(|| value.trim().to_string())
    });
    if let Some(expected) = expected {
        if authorization.as_deref() != Some(expected) {
            counts.refused.fetch_add(1, Ordering::SeqCst);
            client
                .write_all(
                    b"HTTP/1.1 407 Proxy Authentication Required\r\n\
                      Proxy-Authenticate: Basic realm=\"test proxy\"\r\n\
                      Content-Length: 0\r\nConnection: close\r\n\r\n",
                )
                .await?;
            return Ok(());
        }
    }
    let mut parts = request_line.split(' ');
    let (method, target) = (
        parts.next().unwrap_or_default(),
        parts.next().unwrap_or_default(),
    );
    if method.eq_ignore_ascii_case("CONNECT") {
        let Ok(mut upstream) = TcpStream::connect(target).await else {
            client
                .write_all(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")
                .await?;
            return Ok(());
        };
        counts.relayed.fetch_add(1, Ordering::SeqCst);
        client
            .write_all(b"HTTP/1.1 200 Connection Established\r\n\r\n")
            .await?;
        upstream.write_all(&rest).await?;
        tokio::io::copy_bidirectional(&mut client, &mut upstream).await?;
        return Ok(());
    }
    // Absolute form: `GET http://host:port/path HTTP/1.1`, passed on in origin form.
    let Some(after_scheme) = target.strip_prefix("http://") else {
        client
            .write_all(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
            .await?;
        return Ok(());
    };
    let (authority, path) = match after_scheme.find('/') {
        Some(slash) => after_scheme.split_at(slash),
        None => (after_scheme, "/"),
    };
    let Ok(mut upstream) = TcpStream::connect(authority).await else {
        client
            .write_all(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")
            .await?;
        return Ok(());
    };
    counts.relayed.fetch_add(1, Ordering::SeqCst);
    let version = parts.next().unwrap_or("HTTP/1.1");
    let mut forwarded = format!("{method} {path} {version}\r\n");
    for line in &headers {
        let name = line.split(':').next().unwrap_or_default().trim();
        // This proxy passes on one client connection to one service, so each request is the
        // connection's last: the next one may be for another host.
        if name.eq_ignore_ascii_case("proxy-authorization")
            || name.eq_ignore_ascii_case("proxy-connection")
            || name.eq_ignore_ascii_case("connection")
        {
            continue;
        }
        forwarded.push_str(line);
        forwarded.push_str("\r\n");
    }
    forwarded.push_str("Connection: close\r\n\r\n");
    upstream.write_all(forwarded.as_bytes()).await?;
    upstream.write_all(&rest).await?;
    tokio::io::copy_bidirectional(&mut client, &mut upstream).await?;
    Ok(())
}

/// The request head (up to the blank line) and any bytes read past it.
async fn read_head(client: &mut TcpStream) -> io::Result<(String, Vec<u8>)> {
    let mut buffer = Vec::with_capacity(1024);
    let mut chunk = [0_u8; 1024];
    loop {
        let read = client.read(&mut chunk).await?;
        if read == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the client closed before its request head ended",
            ));
        }
        buffer.extend_from_slice(&chunk[..read]);
        if let Some(end) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buffer[..end]).into_owned();
            return Ok((head, buffer[end + 4..].to_vec()));
        }
        if buffer.len() > 64 * 1024 {
            return Err(io::Error::other("a request head over 64 KiB"));
        }
    }
}
