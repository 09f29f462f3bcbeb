//! Stack-trace frames of the languages other than Python, as issues quote them. The
//! Python tracebacks (CPython's and IPython's) are read in [`super::terms`]; this
//! module adds:
//! - Java (and other JVM languages): `at com.pkg.Type.method(Type.java:12)`. The
//!   frame's path is the package as directories plus the file name
//!   (`com/pkg/Type.java`), which is a suffix of the repository path
//!   (`src/main/java/com/pkg/Type.java`); [`super::evidence::resolve_path`] finds it.
//!   The constructor frame `<init>` is kept with its name, so the term extraction
//!   skips it as it skips `<module>`.
//! - Go panics: a function line `pkg.(*Type).Method(...)` or `pkg.Func(...)`, then an
//!   indented `/abs/path/file.go:12 +0x1d`.
//! - Node (JavaScript and TypeScript): `at fn (file.ts:12:5)`, `at Type.method
//!   (/abs/file.js:12:5)`, `at async fn (…)`, `at new Type (…)`, and the anonymous
//!   `at /abs/file.js:12:5` (no function).
//! - Rust: the panic location `panicked at src/x.rs:12:5` (older releases:
//!   `panicked at 'msg', src/x.rs:12:5`; no function), and `RUST_BACKTRACE` frames
//!   `3: krate::module::function` followed by `at ./src/x.rs:12:5`.
//!
//! A frame without a function has an empty [`Frame::func`]; policies then map the
//! frame by its line alone.

use std::sync::LazyLock;

use regex::Regex;

use super::terms::Frame;

static JAVA: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"\bat\s+((?:[\w$]+\.)*)([\w$]+)\.([\w$<>]+)\(([\w$]+\.(?:java|kt|scala|groovy)):(\d+)\)",
    )
    .expect("valid regex")
});
static GO: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?m)^[ \t]*(?:[\w.-]+/)*[\w.-]+?\.(?:\(\*?([\w]+)(?:\[[^\]]*\])?\)\.)?([\w]+)(?:\.func\d+(?:\.\d+)*)?\([^\n]*\)\n[ \t]+(\S+\.go):(\d+)")
        .expect("valid regex")
});
static NODE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?m)^\s*at (?:(?:async |new )?([\w$.<>\[\] ]+?) \()?(?:file://)?([^\s()]+\.(?:[cm]?[jt]sx?)):(\d+):\d+\)?")
        .expect("valid regex")
});
static RUST_PANIC: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"panicked at (?:'[^'\n]*', )?([^\s:']+\.rs):(\d+):\d+").expect("valid regex")
});
static RUST_FRAME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?m)^\s*\d+:\s+(?:[\w<>{}\s]+::)*?(\w+)(?:::h[0-9a-f]{16})?\s*\n\s+at\s+(\S+\.rs):(\d+)",
    )
    .expect("valid regex")
});

/// The frames of the non-Python stack traces in `text`, with their byte positions.
pub fn frames(text: &str) -> Vec<(usize, Frame)> {
    let mut out = Vec::new();
    let mut push = |pos: usize, path: String, line: &str, func: &str| {
        let frame = Frame {
            path,
            line: line.parse().unwrap_or(0),
            func: func.to_string(),
        };
        out.push((pos, frame));
    };
    for c in JAVA.captures_iter(text) {
        let dirs = c[1].replace('.', "/");
        // `dirs` ends with `/` when there is a package; the type is the file's stem.
        push(start(&c), format!("{dirs}{}", &c[4]), &c[5], &c[3]);
    }
    for c in GO.captures_iter(text) {
        push(start(&c), c[3].to_string(), &c[4], &c[2]);
    }
    for c in NODE.captures_iter(text) {
        let func = c.get(1).map_or("", |m| m.as_str());
        let func = func.rsplit('.').next().unwrap_or(func);
        let func = if func.contains(['<', ' ', '[']) {
            ""
        } else {
            func
        };
        push(start(&c), c[2].to_string(), &c[3], func);
    }
    for c in RUST_PANIC.captures_iter(text) {
        push(start(&c), c[1].to_string(), &c[2], "");
    }
    for c in RUST_FRAME.captures_iter(text) {
        push(start(&c), c[2].to_string(), &c[3], &c[1]);
    }
    out
}

fn start(c: &regex::Captures<'_>) -> usize {
    c.get(0).map_or(0, |m| m.start())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Asserts the frames of `text`, in order of appearance, as (path, line, func).
    fn assert_frames(text: &str, want: &[(&str, usize, &str)]) {
        let mut f = frames(text);
        f.sort_by_key(|(p, _)| *p);
        let got: Vec<(String, usize, String)> = f
            .into_iter()
            .map(|(_, f)| (f.path, f.line, f.func))
            .collect();
        let want: Vec<(String, usize, String)> = want
            .iter()
            .map(|(p, l, f)| (p.to_string(), *l, f.to_string()))
            .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn java_frames_become_package_paths() {
        let text = "Exception in thread \"main\" java.lang.IllegalStateException: boom\n\
            \tat com.google.gson.internal.bind.TypeAdapters$7.read(TypeAdapters.java:229)\n\
            \tat com.google.gson.Gson.<init>(Gson.java:12)\n\
            \tat Main.main(Main.java:5)\n";
        assert_frames(
            text,
            &[
                (
                    "com/google/gson/internal/bind/TypeAdapters.java",
                    229,
                    "read",
                ),
                ("com/google/gson/Gson.java", 12, "<init>"),
                ("Main.java", 5, "main"),
            ],
        );
    }

    #[test]
    fn go_panics_pair_the_function_with_the_next_line() {
        let text = "panic: runtime error: index out of range [3] with length 3\n\n\
            goroutine 1 [running]:\n\
            github.com/gin-gonic/gin.(*Context).Next(...)\n\
            \t/home/u/go/pkg/mod/github.com/gin-gonic/gin/context.go:174 +0x1d\n\
            main.handler(0xc000010000)\n\
            \t/src/app/main.go:12 +0x65\n\
            github.com/x/y.(*Tree[...]).Get.func1()\n\
            \t/src/y/tree.go:40 +0x2\n";
        assert_frames(
            text,
            &[
                (
                    "/home/u/go/pkg/mod/github.com/gin-gonic/gin/context.go",
                    174,
                    "Next",
                ),
                ("/src/app/main.go", 12, "handler"),
                ("/src/y/tree.go", 40, "Get"),
            ],
        );
    }

    #[test]
    fn node_frames_with_and_without_names() {
        let text = "TypeError: Cannot read properties of undefined (reading 'length')\n    \
            at Router.handle (/app/node_modules/express/lib/router/index.js:284:7)\n    \
            at async parseAsync (file:///app/src/types.ts:812:20)\n    \
            at new ZodError (src/ZodError.ts:30:5)\n    \
            at /app/lib/app.mjs:9:3\n    \
            at Array.forEach (<anonymous>)\n";
        assert_frames(
            text,
            &[
                (
                    "/app/node_modules/express/lib/router/index.js",
                    284,
                    "handle",
                ),
                ("/app/src/types.ts", 812, "parseAsync"),
                ("src/ZodError.ts", 30, "ZodError"),
                ("/app/lib/app.mjs", 9, ""),
            ],
        );
    }

    #[test]
    fn rust_panics_and_backtraces() {
        let text = "thread 'main' panicked at crates/core/flags/parse.rs:97:14:\n\
            called `Option::unwrap()` on a `None` value\n\
            stack backtrace:\n   \
            3: grep_searcher::searcher::Searcher::search_path\n             \
            at ./crates/searcher/src/searcher/mod.rs:628:9\n\
            thread 'x' panicked at 'oops', src/lib.rs:3:5\n";
        assert_frames(
            text,
            &[
                ("crates/core/flags/parse.rs", 97, ""),
                ("./crates/searcher/src/searcher/mod.rs", 628, "search_path"),
                ("src/lib.rs", 3, ""),
            ],
        );
    }

    #[test]
    fn python_tracebacks_are_not_read_here() {
        let text = "Traceback (most recent call last):\n  File \"a.py\", line 3, in f\n";
        assert!(frames(text).is_empty());
    }
}
