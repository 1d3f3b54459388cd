#!/usr/bin/env python3
"""The package managers' manifests of one release, written from its SHA256SUMS.

    manifests.py write VERSION --sums FILE --base-url URL --out DIR [--homepage URL]
    manifests.py check DIR

`write` finds each file a manifest needs among the release's sums (by the names the release
workflow gives them, whatever the GitHub release did to spaces) and writes, under DIR:

    Casks/partner-console.rb                     Homebrew cask: the app, arm64 and x64 .dmg
    winget/manifests/p/PartnerConsole/PartnerConsole/VERSION/
        PartnerConsole.PartnerConsole.yaml             winget, schema 1.6.0: version,
        PartnerConsole.PartnerConsole.installer.yaml   installer (the NSIS setup, per user or
        PartnerConsole.PartnerConsole.locale.en-US.yaml  machine) and default locale
    bucket/partner.json                          Scoop: the `partner` command (its Windows zip)

laid out as a tap, winget-pkgs and a bucket lay them out, so publishing is a copy and a pull
request. `check` validates what `write` wrote: each winget file against the rules of its 1.6.0
schema (required fields, patterns, enumerations, lengths), the Scoop manifest against Scoop's
required fields, the cask's stanzas (and its Ruby syntax with `ruby -c`, where Ruby is there).
Only the Python standard library and PyYAML (for `check`) are used.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

PACKAGE_ID = "PartnerConsole.PartnerConsole"
PUBLISHER = "Partner Console"
APP_NAME = "Partner Console"
APP_BUNDLE = "Partner Console.app"
APP_ID = "dev.partnerconsole.app"
CASK = "partner-console"
SCOOP = "partner"
LICENSE = "MIT OR Apache-2.0"
COPYRIGHT = "Copyright (c) Partner Console contributors"
SHORT = "Console for the lending platform's partner API"
DESCRIPTION = (
    "Partner Console manages OAuth client-credentials tokens, browses products and transactions, "
    "rotates webhook signing keys and inspects incoming webhooks through a local listener, with a "
    "local sandbox of the service."
)
CLI_DESCRIPTION = "partner: the command-line tool of Partner Console, for the lending platform's partner API"
WINGET_SCHEMA = "1.6.0"

# What each manifest needs, found among the release's files by the end of their names (the
# bundler's names: "Partner Console_0.1.0_x64-setup.exe", which a GitHub release stores as
# "Partner.Console_0.1.0_x64-setup.exe"; the CLI's from scripts/cli-archive.sh).
WANTED = {
    "dmg-arm64": r"_{version}_aarch64\.dmg",
    "dmg-x64": r"_{version}_x64\.dmg",
    "nsis-x64": r"_{version}_x64-setup\.exe",
    "cli-windows-x64": r"partner-cli_{version}_x86_64-pc-windows-msvc\.zip",
}


def read_sums(path: Path) -> dict[str, str]:
    """`sha256sum` output: "HASH  NAME" or "HASH *NAME" per line."""
    sums = {}
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip():
            continue
        match = re.fullmatch(r"([0-9a-fA-F]{64}) [ *](.+)", line)
        if not match:
            sys.exit(f"{path}:{number}: not a sha256sum line: {line!r}")
        sums[match.group(2)] = match.group(1).lower()
    return sums


def pick(sums: dict[str, str], version: str) -> dict[str, tuple[str, str]]:
    found, missing = {}, []
    for key, pattern in WANTED.items():
        regex = re.compile(r"(?:^|.*)" + pattern.format(version=re.escape(version)) + "$")
        names = sorted(name for name in sums if regex.fullmatch(name))
        if len(names) != 1:
            missing.append(f"{key} ({pattern.format(version=version)}): {names or 'none'}")
        else:
            found[key] = (names[0], sums[names[0]])
    if missing:
        sys.exit("the sums do not have exactly one file for each of:\n  " + "\n  ".join(missing)
                 + "\nfiles in the sums:\n  " + "\n  ".join(sorted(sums)))
    return found


def url(base: str, name: str) -> str:
    from urllib.parse import quote
    return base.rstrip("/") + "/" + quote(name)


def cask(version: str, base: str, homepage: str, files: dict[str, tuple[str, str]]) -> str:
    arm_name, arm_sum = files["dmg-arm64"]
    x64_name, x64_sum = files["dmg-x64"]
    return f'''cask "{CASK}" do
  version "{version}"

  on_arm do
    sha256 "{arm_sum}"

    url "{url(base, arm_name)}"
  end
  on_intel do
    sha256 "{x64_sum}"

    url "{url(base, x64_name)}"
  end

  name "{APP_NAME}"
  desc "{SHORT}"
  homepage "{homepage}"

  depends_on macos: ">= :catalina"

  app "{APP_BUNDLE}"

  zap trash: [
    "~/Library/Application Support/{APP_ID}",
    "~/Library/Caches/{APP_ID}",
    "~/Library/Preferences/{APP_ID}.plist",
    "~/Library/Saved Application State/{APP_ID}.savedState",
    "~/Library/WebKit/{APP_ID}",
  ]
end
'''


def yaml_scalar(value) -> str:
    # JSON strings are valid YAML scalars: quoting everything keeps versions like 1.10 strings.
    return json.dumps(value, ensure_ascii=False)


def to_yaml(document: dict, indent: int = 0) -> str:
    """A small YAML writer for the manifests' shapes (maps, lists of maps, scalars)."""
    lines = []
    pad = " " * indent
    for key, value in document.items():
        if isinstance(value, dict):
            lines.append(f"{pad}{key}:")
            lines.append(to_yaml(value, indent + 2))
        elif isinstance(value, list):
            lines.append(f"{pad}{key}:")
            for item in value:
                if isinstance(item, dict):
                    body = to_yaml(item, indent + 4).splitlines()
                    lines.append(f"{pad}  - {body[0].lstrip()}")
                    lines.extend(body[1:])
                else:
                    lines.append(f"{pad}  - {yaml_scalar(item)}")
        else:
            lines.append(f"{pad}{key}: {yaml_scalar(value)}")
    return "\n".join(lines)


def winget(version: str, base: str, homepage: str, files: dict[str, tuple[str, str]]) -> dict[str, str]:
    nsis_name, nsis_sum = files["nsis-x64"]
    common = {"PackageIdentifier": PACKAGE_ID, "PackageVersion": version}
    installer = {
        **common,
        "InstallerType": "nullsoft",
        "InstallModes": ["interactive", "silent", "silentWithProgress"],
        # NSIS's /S, and Tauri's passive mode (progress, no questions) for silentWithProgress.
        "InstallerSwitches": {"Silent": "/S", "SilentWithProgress": "/P"},
        "UpgradeBehavior": "install",
        # Tauri's installer registers under the product's name.
        "ProductCode": APP_NAME,
        "Protocols": ["partner-console"],
        "Installers": [
            # The same "both"-mode installer, told its scope (MultiUser.nsh's switches).
            {"Architecture": "x64", "Scope": "user", "InstallerUrl": url(base, nsis_name),
             "InstallerSha256": nsis_sum.upper(), "InstallerSwitches": {"Custom": "/CurrentUser"}},
            {"Architecture": "x64", "Scope": "machine", "InstallerUrl": url(base, nsis_name),
             "InstallerSha256": nsis_sum.upper(), "InstallerSwitches": {"Custom": "/AllUsers"}},
        ],
        "ManifestType": "installer",
        "ManifestVersion": WINGET_SCHEMA,
    }
    locale = {
        **common,
        "PackageLocale": "en-US",
        "Publisher": PUBLISHER,
        "PackageName": APP_NAME,
        "PackageUrl": homepage,
        "License": LICENSE,
        "Copyright": COPYRIGHT,
        "ShortDescription": SHORT,
        "Description": DESCRIPTION,
        "Moniker": CASK,
        "Tags": ["api", "webhooks", "developer-tools", "tauri"],
        "ManifestType": "defaultLocale",
        "ManifestVersion": WINGET_SCHEMA,
    }
    version_manifest = {**common, "DefaultLocale": "en-US", "ManifestType": "version",
                        "ManifestVersion": WINGET_SCHEMA}
    header = "# Written by scripts/package-manifests.sh\n# yaml-language-server: $schema=https://aka.ms/winget-manifest.{}.{}.schema.json\n\n"
    return {
        f"{PACKAGE_ID}.yaml": header.format("version", WINGET_SCHEMA) + to_yaml(version_manifest) + "\n",
        f"{PACKAGE_ID}.installer.yaml": header.format("installer", WINGET_SCHEMA) + to_yaml(installer) + "\n",
        f"{PACKAGE_ID}.locale.en-US.yaml": header.format("defaultLocale", WINGET_SCHEMA) + to_yaml(locale) + "\n",
    }


def scoop(version: str, base: str, homepage: str, files: dict[str, tuple[str, str]]) -> str:
    name, digest = files["cli-windows-x64"]
    folder = name.removesuffix(".zip")
    manifest = {
        "version": version,
        "description": CLI_DESCRIPTION,
        "homepage": homepage,
        "license": "MIT|Apache-2.0",
        "architecture": {"64bit": {"url": url(base, name), "hash": digest, "extract_dir": folder}},
        "bin": "partner.exe",
        "notes": "The desktop app: winget install PartnerConsole.PartnerConsole",
    }
    return json.dumps(manifest, indent=4) + "\n"


def write(args) -> None:
    if not re.fullmatch(r"\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?", args.version):
        sys.exit(f"not a version: {args.version!r} (X.Y.Z)")
    base = args.base_url.rstrip("/")
    if not base.startswith("https://"):
        sys.exit(f"the download base URL must be https: {base}")
    homepage = args.homepage or base.split("/releases/")[0]
    files = pick(read_sums(Path(args.sums)), args.version)
    out = Path(args.out)
    (out / "Casks").mkdir(parents=True, exist_ok=True)
    (out / "Casks" / f"{CASK}.rb").write_text(cask(args.version, base, homepage, files))
    folder = out / "winget" / "manifests" / PACKAGE_ID[0].lower() / Path(*PACKAGE_ID.split(".")) / args.version
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    for file, text in winget(args.version, base, homepage, files).items():
        (folder / file).write_text(text)
    (out / "bucket").mkdir(exist_ok=True)
    (out / "bucket" / f"{SCOOP}.json").write_text(scoop(args.version, base, homepage, files))
    for path in sorted(p for p in out.rglob("*") if p.is_file()):
        print(path)


# --- check -------------------------------------------------------------------------------------
# The rules of the winget 1.6.0 schemas that these manifests touch (winget-cli's
# schemas/JSON/manifests/v1.6.0): required fields, patterns, enumerations and lengths.
IDENTIFIER = r"^[^\.\s\\/:\*\?\"<>\|\x01-\x1f]{1,32}(\.[^\.\s\\/:\*\?\"<>\|\x01-\x1f]{1,32}){1,7}$"
VERSION = r"^[^\\/:\*\?\"<>\|\x01-\x1f]+$"
LOCALE = r"^([a-zA-Z]{2,3}|[iI]-[a-zA-Z]+|[xX]-[a-zA-Z]{1,8})(-[a-zA-Z]{1,8})*$"
SHA256 = r"^[A-Fa-f0-9]{64}$"
URL = r"^([Hh][Tt][Tt][Pp][Ss]?)://.+$"
WINGET_RULES = {
    "version": {
        "required": ["PackageIdentifier", "PackageVersion", "DefaultLocale", "ManifestType", "ManifestVersion"],
        "fields": {"DefaultLocale": (LOCALE, 20)},
    },
    "installer": {
        "required": ["PackageIdentifier", "PackageVersion", "Installers", "ManifestType", "ManifestVersion"],
        "fields": {"ProductCode": (None, 255)},
    },
    "defaultLocale": {
        "required": ["PackageIdentifier", "PackageVersion", "PackageLocale", "Publisher", "PackageName",
                     "License", "ShortDescription", "ManifestType", "ManifestVersion"],
        "fields": {"PackageLocale": (LOCALE, 20), "Publisher": (None, 256), "PackageName": (None, 256),
                   "License": (None, 512), "ShortDescription": (None, 256), "Description": (None, 10000),
                   "Copyright": (None, 512), "PackageUrl": (URL, 2048), "Moniker": (r"^\S+$", 40)},
    },
}
INSTALLER_TYPES = {"msix", "msi", "appx", "exe", "zip", "inno", "nullsoft", "wix", "burn", "pwa", "portable"}
ARCHITECTURES = {"x86", "x64", "arm", "arm64", "neutral"}
SCOPES = {"user", "machine"}
INSTALL_MODES = {"interactive", "silent", "silentWithProgress"}
UPGRADE = {"install", "uninstallPrevious", "deny"}


class Problems(list):
    def need(self, ok: bool, where: str, what: str) -> None:
        if not ok:
            self.append(f"{where}: {what}")

    def text(self, value, where: str, pattern: str | None = None, maximum: int | None = None) -> None:
        if not isinstance(value, str) or not value:
            self.append(f"{where}: not a non-empty string: {value!r}")
            return
        if pattern and not re.search(pattern, value):
            self.append(f"{where}: {value!r} does not match {pattern}")
        if maximum and len(value) > maximum:
            self.append(f"{where}: longer than {maximum}")


def check_winget(folder: Path, problems: Problems) -> None:
    import yaml

    files = sorted(folder.glob("*.yaml"))
    problems.need(len(files) == 3, str(folder), f"three manifests expected, found {[f.name for f in files]}")
    seen = {}
    for file in files:
        document = yaml.safe_load(file.read_text())
        kind = document.get("ManifestType")
        where = file.name
        problems.need(kind in WINGET_RULES, where, f"unknown ManifestType {kind!r}")
        if kind not in WINGET_RULES:
            continue
        seen[kind] = document
        rules = WINGET_RULES[kind]
        for field in rules["required"]:
            problems.need(field in document, where, f"{field} is required")
        problems.need(document.get("ManifestVersion") == WINGET_SCHEMA, where, "ManifestVersion is not " + WINGET_SCHEMA)
        problems.text(document.get("PackageIdentifier"), f"{where} PackageIdentifier", IDENTIFIER, 128)
        problems.text(document.get("PackageVersion"), f"{where} PackageVersion", VERSION, 128)
        for field, (pattern, maximum) in rules["fields"].items():
            if field in document:
                problems.text(document[field], f"{where} {field}", pattern, maximum)
        expected_name = PACKAGE_ID + {"version": "", "installer": ".installer",
                                      "defaultLocale": f".locale.{document.get('PackageLocale')}"}[kind] + ".yaml"
        problems.need(file.name == expected_name, where, f"should be named {expected_name}")
        if kind == "installer":
            check_installers(document, where, problems)
        if kind == "defaultLocale":
            tags = document.get("Tags", [])
            problems.need(len(tags) <= 16 and all(isinstance(t, str) and 1 <= len(t) <= 40 and " " not in t for t in tags),
                          where, "Tags: at most 16, each 1-40 characters without spaces")
    problems.need(set(seen) == set(WINGET_RULES), str(folder), f"manifest types {sorted(seen)}")
    identities = {(d.get("PackageIdentifier"), d.get("PackageVersion")) for d in seen.values()}
    problems.need(len(identities) == 1, str(folder), f"the manifests disagree on the package: {identities}")
    problems.need(folder.name == next(iter(identities))[1], str(folder), "the folder is not named after the version")
    if "version" in seen and "defaultLocale" in seen:
        problems.need(seen["version"]["DefaultLocale"] == seen["defaultLocale"]["PackageLocale"], str(folder),
                      "DefaultLocale has no locale manifest")


def check_installers(document: dict, where: str, problems: Problems) -> None:
    installers = document.get("Installers")
    problems.need(isinstance(installers, list) and 1 <= len(installers) <= 1024, where, "Installers: 1 to 1024 entries")
    for index, installer in enumerate(installers or []):
        at = f"{where} Installers[{index}]"
        merged = {**document, **installer}
        problems.need(merged.get("Architecture") in ARCHITECTURES, at, f"Architecture {merged.get('Architecture')!r}")
        problems.need(merged.get("InstallerType") in INSTALLER_TYPES, at, f"InstallerType {merged.get('InstallerType')!r}")
        problems.need(merged.get("Scope", "user") in SCOPES, at, f"Scope {merged.get('Scope')!r}")
        problems.need(set(merged.get("InstallModes", [])) <= INSTALL_MODES, at, "InstallModes")
        problems.need(merged.get("UpgradeBehavior", "install") in UPGRADE, at, "UpgradeBehavior")
        problems.text(installer.get("InstallerUrl"), f"{at} InstallerUrl", URL, 2048)
        problems.text(installer.get("InstallerSha256"), f"{at} InstallerSha256", SHA256)
        for key, value in merged.get("InstallerSwitches", {}).items():
            problems.need(key in {"Silent", "SilentWithProgress", "Interactive", "InstallLocation", "Log",
                                  "Upgrade", "Custom", "Repair"}, at, f"unknown switch {key}")
            problems.text(value, f"{at} InstallerSwitches.{key}", None, 2048 if key == "Custom" else 512)
    keys = [(i.get("Architecture"), i.get("Scope"), document.get("InstallerType")) for i in installers or []]
    problems.need(len(keys) == len(set(keys)), where, "two installers with the same architecture, scope and type")


def check_scoop(path: Path, problems: Problems) -> None:
    manifest = json.loads(path.read_text())
    where = path.name
    for field in ("version", "description", "homepage", "license"):
        problems.text(manifest.get(field), f"{where} {field}")
    arch = manifest.get("architecture", {}).get("64bit", {})
    problems.text(arch.get("url") or manifest.get("url"), f"{where} url", r"^https://")
    problems.text(arch.get("hash") or manifest.get("hash"), f"{where} hash", r"^(sha256:)?[0-9a-f]{64}$")
    problems.need(isinstance(manifest.get("bin"), (str, list)), where, "bin names the command")
    known = {"version", "description", "homepage", "license", "architecture", "bin", "notes", "url", "hash",
             "extract_dir", "checkver", "autoupdate", "depends", "shortcuts", "persist"}
    problems.need(set(manifest) <= known, where, f"unknown fields {sorted(set(manifest) - known)}")


def check_cask(path: Path, problems: Problems) -> None:
    text = path.read_text()
    where = path.name
    problems.need(text.startswith(f'cask "{path.stem}" do\n') and text.rstrip().endswith("end"), where,
                  "a cask block named after the file")
    for stanza in ("version", "name", "desc", "homepage", "app"):
        problems.need(re.search(rf'^  {stanza} "[^"]+"$', text, re.M) is not None, where, f"{stanza} stanza")
    sums = re.findall(r'^\s+sha256 "([^"]*)"$', text, re.M)
    urls = re.findall(r'^\s+url "([^"]*)"$', text, re.M)
    problems.need(len(sums) == 2 and all(re.fullmatch(r"[0-9a-f]{64}", s) for s in sums), where,
                  "an arm and an intel sha256")
    problems.need(len(urls) == 2 and all(u.startswith("https://") for u in urls), where, "an arm and an intel https url")
    ruby = shutil.which("ruby")
    if ruby:
        result = subprocess.run([ruby, "-c", str(path)], capture_output=True, text=True)
        problems.need(result.returncode == 0, where, "ruby -c: " + (result.stderr or result.stdout).strip())
    else:
        print("manifests: no ruby here, the cask's Ruby syntax is not checked", file=sys.stderr)


def check(args) -> None:
    out = Path(args.dir)
    problems = Problems()
    casks = sorted((out / "Casks").glob("*.rb"))
    problems.need(len(casks) == 1, str(out), "one cask")
    for path in casks:
        check_cask(path, problems)
    folders = sorted(p.parent for p in (out / "winget" / "manifests").rglob(f"{PACKAGE_ID}.yaml"))
    problems.need(len(folders) >= 1, str(out), "a winget manifest set")
    for folder in folders:
        check_winget(folder, problems)
    buckets = sorted((out / "bucket").glob("*.json"))
    problems.need(len(buckets) == 1, str(out), "one Scoop manifest")
    for path in buckets:
        check_scoop(path, problems)
    if problems:
        sys.exit("manifests: " + "\n  ".join(["the manifests break their rules:", *problems]))
    print(f"manifests: {len(casks)} cask, {len(folders)} winget set, {len(buckets)} Scoop manifest: valid")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    w = commands.add_parser("write")
    w.add_argument("version")
    w.add_argument("--sums", required=True)
    w.add_argument("--base-url", required=True)
    w.add_argument("--out", required=True)
    w.add_argument("--homepage")
    c = commands.add_parser("check")
    c.add_argument("dir")
    args = parser.parse_args()
    write(args) if args.command == "write" else check(args)


if __name__ == "__main__":
    main()
