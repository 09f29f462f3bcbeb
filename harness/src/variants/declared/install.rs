//! `navbench variant install NAME`: the declared package, at its pinned version, into
//! `<cache>/variants/<name>/` and nowhere else — npm with `--prefix` (the programs
//! land in `node_modules/.bin/`), PyPI into a virtual environment of its own
//! (`venv/bin/`). A marker, `installed.json`, records what was installed, how long it
//! took and its size; a run only checks the marker ([`check`]), so runs never install.

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use anyhow::Context;
use serde::{Deserialize, Serialize};

use super::{Declared, Package};

/// What `installed.json` holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Installed {
    pub package: String,
    pub version: String,
    pub seconds: f64,
    pub bytes: u64,
}

fn spec_of(pkg: &Package) -> (String, String) {
    match pkg {
        Package::Npm { name, version, .. } | Package::Pip { name, version, .. } => {
            (name.clone(), version.clone())
        }
    }
}

fn marker(d: &Declared, cache: &Path) -> std::path::PathBuf {
    d.install_dir(cache).join("installed.json")
}

/// What is installed for `d`, if anything.
pub fn installed(d: &Declared, cache: &Path) -> Option<Installed> {
    let text = std::fs::read_to_string(marker(d, cache)).ok()?;
    serde_json::from_str(&text).ok()
}

/// Fails unless `pkg` is installed at its pinned version, saying what to run.
pub fn check(d: &Declared, pkg: &Package, cache: &Path) -> anyhow::Result<()> {
    let (name, version) = spec_of(pkg);
    match installed(d, cache) {
        Some(i) if i.package == name && i.version == version => Ok(()),
        Some(i) => anyhow::bail!(
            "variant '{}' has {}@{} installed but declares {name}@{version}: run `navbench variant install {}`",
            d.name,
            i.package,
            i.version,
            d.name
        ),
        None => anyhow::bail!(
            "variant '{}' needs {name}@{version}, not installed under {}: run `navbench variant install {}`",
            d.name,
            d.install_dir(cache).display(),
            d.name
        ),
    }
}

fn run(cmd: &mut Command) -> anyhow::Result<()> {
    let shown = format!("{cmd:?}");
    let out = cmd
        .output()
        .with_context(|| format!("cannot run {shown}: is the tool installed?"))?;
    if !out.status.success() {
        anyhow::bail!(
            "{shown} failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(())
}

/// Total size of the files under `dir`.
pub fn dir_size(dir: &Path) -> u64 {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return 0;
    };
    rd.filter_map(Result::ok)
        .map(|e| match e.file_type() {
            Ok(t) if t.is_dir() => dir_size(&e.path()),
            Ok(t) if t.is_file() => e.metadata().map_or(0, |m| m.len()),
            _ => 0,
        })
        .sum()
}

/// Installs `d`'s package (again, from scratch) and writes the marker.
pub fn install(d: &Declared, cache: &Path) -> anyhow::Result<Installed> {
    let Some(pkg) = &d.package else {
        anyhow::bail!(
            "variant '{}' declares no [install] package: nothing to install",
            d.name
        );
    };
    let dir = d.install_dir(cache);
    if dir.exists() {
        std::fs::remove_dir_all(&dir)
            .with_context(|| format!("cannot clear {} before installing", dir.display()))?;
    }
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let t = Instant::now();
    match pkg {
        Package::Npm {
            name,
            version,
            with,
        } => run(Command::new("npm")
            .arg("install")
            .arg("--prefix")
            .arg(&dir)
            .args(["--no-audit", "--no-fund", "--loglevel=error"])
            .arg(format!("{name}@{version}"))
            .args(with))?,
        Package::Pip {
            name,
            version,
            with,
        } => {
            let venv = dir.join("venv");
            run(Command::new("python3").args(["-m", "venv"]).arg(&venv))?;
            run(Command::new(venv.join("bin").join("pip"))
                .args(["install", "--quiet", "--disable-pip-version-check"])
                .arg(format!("{name}=={version}"))
                .args(with))?;
        }
    }
    let (package, version) = spec_of(pkg);
    let done = Installed {
        package,
        version,
        seconds: t.elapsed().as_secs_f64(),
        bytes: dir_size(&dir),
    };
    std::fs::write(marker(d, cache), serde_json::to_string_pretty(&done)?)
        .with_context(|| format!("cannot write {}", marker(d, cache).display()))?;
    Ok(done)
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = r#"name = "pinned"
[install]
pip = "some-server"
version = "1.2.3"
[server]
command = "{install}/venv/bin/some-server"
[[step]]
tool = "t"
extract = { regex = '(?P<path>\S+)' }
"#;

    #[test]
    fn a_run_refuses_a_missing_or_other_version_with_the_command_to_run() {
        let d = Declared::from_str(FILE, Path::new("pinned.toml")).unwrap();
        let cache = tempfile::tempdir().unwrap();
        let pkg = d.package.clone().unwrap();
        let e = check(&d, &pkg, cache.path()).unwrap_err().to_string();
        assert!(
            e.contains("navbench variant install pinned") && e.contains("some-server@1.2.3"),
            "{e}"
        );
        std::fs::create_dir_all(d.install_dir(cache.path())).unwrap();
        let old = Installed {
            package: "some-server".into(),
            version: "1.0.0".into(),
            seconds: 1.0,
            bytes: 1,
        };
        std::fs::write(
            marker(&d, cache.path()),
            serde_json::to_string(&old).unwrap(),
        )
        .unwrap();
        let e = check(&d, &pkg, cache.path()).unwrap_err().to_string();
        assert!(e.contains("has some-server@1.0.0 installed"), "{e}");
        let ok = Installed {
            version: "1.2.3".into(),
            ..old
        };
        std::fs::write(
            marker(&d, cache.path()),
            serde_json::to_string(&ok).unwrap(),
        )
        .unwrap();
        check(&d, &pkg, cache.path()).unwrap();
        assert_eq!(installed(&d, cache.path()), Some(ok));
    }
}
