//! Stamps the build into `partner --version`: the commit it was built from (`git rev-parse`),
//! or `unknown` outside a git checkout (a source package).
use std::process::Command;

fn main() {
    let commit = Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .output()
        .ok()
        .filter(|out| out.status.success())
        .and_then(|out| String::from_utf8(out.stdout).ok())
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=PARTNER_BUILD_COMMIT={commit}");
    // A new commit changes what HEAD points at: the stamp follows it.
    for path in ["../../../.git/HEAD", "../../../.git/refs/heads"] {
        println!("cargo:rerun-if-changed={path}");
    }
    println!("cargo:rerun-if-changed=build.rs");
}
