//! The refusals made before anything runs: a declaration that is wrong is refused
//! with `file:line:` and what to write instead. [`compile`] checks what the file alone
//! can show (TOML syntax and keys, templates naming missing fields, `for_each`
//! values, pointers, regexes, the launch); [`super::preflight`] checks what needs the
//! server (tool names after `tools/list`, extractors on the first instance).

use std::path::Path;

use regex::Regex;
use toml::Spanned;

use super::extract::{self, Extractor};
use super::schema::{FileDecl, FusionDecl, StepDecl};
use super::template::{self, Template};
use super::{Call, Launch, Package, Step};

/// What [`compile`] makes of a valid file.
#[derive(Debug)]
pub struct Compiled {
    pub name: String,
    pub about: String,
    pub package: Option<Package>,
    pub launch: Launch,
    pub setup: Vec<Call>,
    pub steps: Vec<Step>,
    pub fusion: FusionDecl,
}

/// 1-based line of byte `offset` in `text`.
pub fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

/// A refusal: `file:line: what; what to write`.
pub fn refuse(
    source: &Path,
    text: &str,
    offset: usize,
    msg: impl std::fmt::Display,
) -> anyhow::Error {
    anyhow::anyhow!("{}:{}: {msg}", source.display(), line_of(text, offset))
}

/// Parses and checks a declaration (see the module doc).
pub fn compile(text: &str, source: &Path) -> anyhow::Result<Compiled> {
    let decl: FileDecl = toml::from_str(text).map_err(|e| {
        let at = e.span().map_or(0, |s| s.start);
        refuse(
            source,
            text,
            at,
            format!(
                "{}; see variants/text.toml for every key a declaration may have",
                e.message().trim_end()
            ),
        )
    })?;
    let r = |at: usize, msg: String| refuse(source, text, at, msg);
    let name = decl.name.get_ref().clone();
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_".contains(c))
    {
        return Err(r(
            decl.name.span().start,
            format!(
                "name \"{name}\" must be letters, digits, '-' or '_' (it names a folder and a CSV column value)"
            ),
        ));
    }
    let package = match &decl.install {
        None => None,
        Some(i) => {
            let version = i.get_ref().version.get_ref().clone();
            let with = i.get_ref().with.clone();
            match (&i.get_ref().npm, &i.get_ref().pip) {
                (Some(n), None) => Some(Package::Npm {
                    name: n.clone(),
                    version,
                    with,
                }),
                (None, Some(p)) => Some(Package::Pip {
                    name: p.clone(),
                    version,
                    with,
                }),
                _ => {
                    return Err(r(
                        i.span().start,
                        "[install] needs exactly one of npm = \"package\" or pip = \"package\", with version = \"x.y.z\"".into(),
                    ));
                }
            }
        }
    };
    let launch = compile_launch(&decl, &r)?;
    let setup = decl
        .setup
        .iter()
        .map(|c| {
            let mut call = compile_call(&c.get_ref().tool, c.get_ref().args.as_ref(), None, &r)?;
            call.timeout = setup_timeout(c.get_ref().timeout_secs.as_ref(), &r)?;
            Ok(call)
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    if decl.step.is_empty() {
        return Err(r(
            text.len(),
            "no [[step]]: a policy needs at least one tool call with an extractor".into(),
        ));
    }
    let steps = decl
        .step
        .iter()
        .map(|s| compile_step(s, &r))
        .collect::<anyhow::Result<Vec<_>>>()?;
    Ok(Compiled {
        name,
        about: decl.about.clone(),
        package,
        launch,
        setup,
        steps,
        fusion: decl.fusion,
    })
}

type Refuse<'a> = dyn Fn(usize, String) -> anyhow::Error + 'a;

/// A template whose fields are all in `allowed`.
fn checked(s: &Spanned<String>, allowed: &[&str], r: &Refuse<'_>) -> anyhow::Result<Template> {
    check_str(s.get_ref(), s.span().start, allowed, r)
}

fn check_str(s: &str, at: usize, allowed: &[&str], r: &Refuse<'_>) -> anyhow::Result<Template> {
    let t = Template::parse(s).map_err(|e| r(at, e))?;
    if let Some(bad) = t.fields().find(|f| !allowed.contains(f)) {
        return Err(r(
            at,
            format!(
                "template \"{s}\" names {{{bad}}}, which is not a field here; write one of {}",
                allowed
                    .iter()
                    .map(|f| format!("{{{f}}}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ));
    }
    Ok(t)
}

fn compile_launch(decl: &FileDecl, r: &Refuse<'_>) -> anyhow::Result<Launch> {
    let s = decl.server.get_ref();
    let Some(command) = &s.command else {
        return Err(r(
            decl.server.span().start,
            "[server] needs command = \"program\" (a navbench server binary, a program on PATH, or \"{install}/bin/...\"); over HTTP too, navbench launches the server itself".into(),
        ));
    };
    let f = template::LAUNCH_FIELDS;
    let launch = Launch {
        command: checked(command, f, r)?,
        command_text: command.get_ref().clone(),
        args: s
            .args
            .iter()
            .map(|a| checked(a, f, r))
            .collect::<anyhow::Result<_>>()?,
        env: s
            .env
            .iter()
            .map(|(k, v)| Ok((k.clone(), checked(v, f, r)?)))
            .collect::<anyhow::Result<_>>()?,
        cwd: s.cwd.as_ref().map(|c| checked(c, f, r)).transpose()?,
        http: compile_transport(s, r)?,
    };
    if let (Some(url), Some(Some(t))) = (&s.url, &launch.http) {
        let passes_port = |t: &Template| t.fields().any(|f| f == "port");
        if t.fields().any(|f| f == "port")
            && !(launch.args.iter().any(passes_port)
                || launch.env.iter().any(|(_, t)| passes_port(t)))
        {
            return Err(r(
                url.span().start,
                "url names {port}, but no arg or env passes {port} to the server, so it cannot listen there; add it to args (e.g. \"--port\", \"{port}\")".into(),
            ));
        }
    }
    Ok(launch)
}

/// `transport` and `url`: `None` for stdio; `Some(url)` for Streamable HTTP, at the
/// declared URL or (`Some(None)`) the one the server prints.
fn compile_transport(
    s: &super::schema::ServerDecl,
    r: &Refuse<'_>,
) -> anyhow::Result<Option<Option<Template>>> {
    let http = match &s.transport {
        None => s.url.is_some(),
        Some(t) => match t.get_ref().as_str() {
            "stdio" => false,
            "http" => true,
            other => {
                return Err(r(
                    t.span().start,
                    format!(
                        "transport = \"{other}\" is not one navbench speaks; write \"stdio\" (the default) or \"http\" (Streamable HTTP)"
                    ),
                ));
            }
        },
    };
    let Some(url) = &s.url else {
        return Ok(http.then_some(None));
    };
    if !http {
        return Err(r(
            url.span().start,
            "url is for a server over Streamable HTTP, but transport = \"stdio\"; write transport = \"http\" (or leave transport out)".into(),
        ));
    }
    let text = url.get_ref();
    if !(text.starts_with("http://") || text.starts_with("https://")) {
        return Err(r(
            url.span().start,
            format!(
                "url = \"{text}\" must start with http:// or https://, e.g. \"http://127.0.0.1:{{port}}/mcp\""
            ),
        ));
    }
    Ok(Some(Some(checked(url, template::LAUNCH_FIELDS, r)?)))
}

/// A setup call's `timeout_secs`: a whole number of seconds from 1 to a day.
fn setup_timeout(
    secs: Option<&Spanned<i64>>,
    r: &Refuse<'_>,
) -> anyhow::Result<Option<std::time::Duration>> {
    let Some(secs) = secs else { return Ok(None) };
    match u64::try_from(*secs.get_ref()) {
        Ok(n @ 1..=86_400) => Ok(Some(std::time::Duration::from_secs(n))),
        _ => Err(r(
            secs.span().start,
            format!(
                "timeout_secs = {} is out of range: write a whole number of seconds from 1 to 86400, or leave it out to use the run's --index-timeout",
                secs.get_ref()
            ),
        )),
    }
}

fn compile_call(
    tool: &Spanned<String>,
    args: Option<&Spanned<toml::Table>>,
    for_each: Option<&str>,
    r: &Refuse<'_>,
) -> anyhow::Result<Call> {
    let allowed = template::step_fields(for_each);
    let table = args.map(|a| a.get_ref().clone()).unwrap_or_default();
    let at = args.map_or(tool.span().start, |a| a.span().start);
    let mut strings = Vec::new();
    template::strings_in(&toml::Value::Table(table.clone()), &mut strings);
    for s in &strings {
        check_str(s, at, &allowed, r)?;
    }
    Ok(Call {
        tool: tool.get_ref().clone(),
        tool_line: tool.span().start,
        args: table,
        timeout: None,
    })
}

fn compile_step(s: &Spanned<StepDecl>, r: &Refuse<'_>) -> anyhow::Result<Step> {
    let d = s.get_ref();
    let for_each = match &d.for_each {
        None => None,
        Some(f) => {
            if !template::FOR_EACH.iter().any(|(k, _)| k == f.get_ref()) {
                return Err(r(
                    f.span().start,
                    format!(
                        "for_each = \"{}\" is not an item kind; write one of {}",
                        f.get_ref(),
                        template::FOR_EACH
                            .iter()
                            .map(|(k, _)| format!("\"{k}\""))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                ));
            }
            Some(f.get_ref().clone())
        }
    };
    let call = compile_call(&d.tool, d.args.as_ref(), for_each.as_deref(), r)?;
    let e = d.extract.get_ref();
    let at = d.extract.span().start;
    let extractor = match (&e.regex, &e.path) {
        (Some(re), None) if e.items.is_none() && e.line.is_none() && e.symbol.is_none() => {
            let compiled = Regex::new(re.get_ref())
                .map_err(|err| r(re.span().start, format!("regex does not compile: {err}")))?;
            if !compiled.capture_names().any(|n| n == Some("path")) {
                return Err(r(
                    re.span().start,
                    "regex has no (?P<path>...) group; name the file path group `path` (and optionally `line` or `symbol`)".into(),
                ));
            }
            Extractor::Regex(compiled)
        }
        (None, Some(path)) => {
            let seg = |p: &str| extract::segments(p).map_err(|m| r(at, m));
            seg(path)?;
            for p in [&e.line, &e.symbol].into_iter().flatten() {
                seg(p)?;
            }
            Extractor::Pointer {
                items: seg(e.items.as_deref().unwrap_or(""))?,
                path: path.clone(),
                line: e.line.clone(),
                symbol: e.symbol.clone(),
            }
        }
        _ => {
            return Err(r(
                at,
                "extract needs either path = \"/pointer\" (with optional items, line, symbol) or regex = \"(?P<path>...)\" alone".into(),
            ));
        }
    };
    Ok(Step {
        call,
        for_each,
        limit: d.limit.unwrap_or(10),
        weight: d.weight.unwrap_or(1.0),
        extractor,
        extract_line: at,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"name = "t"
[server]
command = "navbench-text"
args = ["--root", "{root}"]

[[step]]
tool = "grep"
for_each = "identifiers"
args = { pattern = '\b{identifier_regex}\b' }
extract = { items = "/matches/*", path = "/path", line = "/line" }
"#;

    fn err(text: &str) -> String {
        format!("{:#}", compile(text, Path::new("v.toml")).unwrap_err())
    }

    #[test]
    fn a_good_file_compiles() {
        let c = compile(GOOD, Path::new("v.toml")).unwrap();
        assert_eq!(c.steps[0].for_each.as_deref(), Some("identifiers"));
        assert_eq!(c.steps[0].limit, 10);
        assert_eq!(line_of(GOOD, c.steps[0].call.tool_line), 7);
    }

    #[test]
    fn a_missing_template_field_is_refused_with_its_line() {
        let e = err(&GOOD.replace("{identifier_regex}", "{identifer}"));
        assert!(e.starts_with("v.toml:9: template"), "{e}");
        assert!(
            e.contains("names {identifer}") && e.contains("{identifier_regex}"),
            "{e}"
        );
        // {identifier} only exists in a step with for_each = "identifiers".
        let e = err(&GOOD.replace("for_each = \"identifiers\"\n", ""));
        assert!(
            e.contains("v.toml:8:") && e.contains("names {identifier_regex}"),
            "{e}"
        );
        let e = err(&GOOD.replace("{root}", "{workdir}"));
        assert!(
            e.starts_with("v.toml:4:") && e.contains("{root}, {cache}, {install}"),
            "{e}"
        );
    }

    #[test]
    fn a_setup_call_may_have_its_own_timeout_in_range() {
        let with = |t: &str| {
            GOOD.replace(
                "\n[[step]]",
                &format!("\n[[setup]]\ntool = \"list_files\"\ntimeout_secs = {t}\n\n[[step]]"),
            )
        };
        let c = compile(&with("90"), Path::new("v.toml")).unwrap();
        assert_eq!(c.setup[0].timeout, Some(std::time::Duration::from_secs(90)));
        let e = err(&with("0"));
        assert!(
            e.starts_with("v.toml:8:") && e.contains("1 to 86400"),
            "{e}"
        );
        let c = compile(GOOD, Path::new("v.toml")).unwrap();
        assert!(c.setup.is_empty());
    }

    #[test]
    fn unknown_keys_and_for_each_values_are_refused() {
        let e = err(&GOOD.replace("tool = \"grep\"", "tool = \"grep\"\nweigth = 2"));
        assert!(
            e.starts_with("v.toml:8:") && e.contains("unknown field `weigth`"),
            "{e}"
        );
        let e = err(&GOOD.replace("\"identifiers\"", "\"sentences\""));
        assert!(
            e.starts_with("v.toml:8:") && e.contains("\"frames\""),
            "{e}"
        );
    }

    /// `GOOD` with these lines added to `[server]`.
    fn server_with(lines: &str) -> String {
        GOOD.replace(
            "args = [\"--root\", \"{root}\"]",
            &format!("args = [\"--root\", \"{{root}}\"]\n{lines}"),
        )
    }

    #[test]
    fn http_launches_compile_to_a_url_or_the_printed_one() {
        let c = compile(&server_with("transport = \"http\""), Path::new("v.toml")).unwrap();
        assert!(matches!(c.launch.http, Some(None)), "{:?}", c.launch.http);
        let text =
            server_with("url = \"http://127.0.0.1:{port}/mcp\"\nenv = { PORT = \"{port}\" }");
        let c = compile(&text, Path::new("v.toml")).unwrap();
        let Some(Some(url)) = &c.launch.http else {
            panic!("{:?}", c.launch.http)
        };
        assert_eq!(url.fields().collect::<Vec<_>>(), ["port"]);
        assert!(
            compile(GOOD, Path::new("v.toml"))
                .unwrap()
                .launch
                .http
                .is_none()
        );
    }

    #[test]
    fn bad_http_launches_are_refused_with_their_line() {
        let e = err(&server_with("transport = \"sse\""));
        assert!(
            e.starts_with("v.toml:5:") && e.contains("write \"stdio\" (the default) or \"http\""),
            "{e}"
        );
        let e = err(&server_with(
            "transport = \"stdio\"\nurl = \"http://127.0.0.1:1/mcp\"",
        ));
        assert!(
            e.starts_with("v.toml:6:") && e.contains("transport = \"http\""),
            "{e}"
        );
        let e = err(&server_with("url = \"127.0.0.1:{port}/mcp\""));
        assert!(e.starts_with("v.toml:5:") && e.contains("http://"), "{e}");
        let e = err(&server_with("url = \"http://127.0.0.1:{port}/mcp\""));
        assert!(
            e.starts_with("v.toml:5:") && e.contains("no arg or env passes {port}"),
            "{e}"
        );
        let e = err(&server_with("url = \"http://{host}/mcp\""));
        assert!(
            e.starts_with("v.toml:5:") && e.contains("names {host}"),
            "{e}"
        );
    }

    #[test]
    fn bad_extractors_and_launches_are_refused() {
        let e = err(&GOOD.replace("\"/matches/*\"", "\"matches\""));
        assert!(
            e.starts_with("v.toml:10:") && e.contains("must start with '/'"),
            "{e}"
        );
        let e = err(&GOOD.replace(
            r#"{ items = "/matches/*", path = "/path", line = "/line" }"#,
            r#"{ regex = '(\S+):(\d+)' }"#,
        ));
        assert!(e.contains("(?P<path>...)"), "{e}");
        let e = err(&GOOD.replace("command = \"navbench-text\"", "url = \"http://x\""));
        assert!(
            e.starts_with("v.toml:2:") && e.contains("needs command"),
            "{e}"
        );
        let e = err(&GOOD.replace("name = \"t\"", "name = \"a b\""));
        assert!(e.starts_with("v.toml:1:"), "{e}");
        let e = err(GOOD.split("[[step]]").next().unwrap());
        assert!(e.contains("no [[step]]"), "{e}");
    }
}
