//! The summary part of `index.html`: `report.md` turned into HTML, so the page shows
//! exactly the tables (with their intervals), the paired "does the tool help?" table
//! and the cost tables that the Markdown shows. Only the Markdown that
//! [`crate::report::markdown`] writes is understood: `#` headings, pipe tables,
//! paragraphs with `` `code` ``, `**bold**` and `[text](link)`, and image lines, which
//! become the plot's SVG inlined (the page fetches nothing).

use std::collections::BTreeMap;

/// Escapes text for HTML element content and attribute values.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

/// Inline Markdown of one line: code spans, bold, links (kept as text: the Markdown's
/// links point at files beside it, which an emailed page does not have).
fn inline(s: &str) -> String {
    let mut out = String::new();
    let mut rest = s;
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix('`')
            && let Some(end) = r.find('`')
        {
            out.push_str(&format!("<code>{}</code>", escape(&r[..end])));
            rest = &r[end + 1..];
        } else if let Some(r) = rest.strip_prefix("**")
            && let Some(end) = r.find("**")
        {
            out.push_str(&format!("<b>{}</b>", inline(&r[..end])));
            rest = &r[end + 2..];
        } else if let Some(r) = rest.strip_prefix('[')
            && let Some(close) = r.find("](")
            && let Some(end) = r[close..].find(')')
        {
            out.push_str(&inline(&r[..close]));
            rest = &r[close + end + 1..];
        } else {
            let c = rest.chars().next().unwrap_or(' ');
            out.push_str(&escape(&c.to_string()));
            rest = &rest[c.len_utf8()..];
        }
    }
    out
}

/// The cells of a pipe-table line.
fn cells(line: &str) -> Vec<&str> {
    let t = line.trim();
    let t = t.strip_prefix('|').unwrap_or(t);
    let t = t.strip_suffix('|').unwrap_or(t);
    t.split('|').map(str::trim).collect()
}

/// True for a table's alignment line (`|---|---:|`).
fn is_rule(line: &str) -> bool {
    let t = line.trim();
    t.starts_with('|') && t.chars().all(|c| matches!(c, '|' | '-' | ':' | ' '))
}

/// A pipe table (header, rule, rows) as HTML; right-aligned columns get `num`.
fn table(lines: &[&str]) -> String {
    let header = cells(lines[0]);
    let right: Vec<bool> = lines
        .get(1)
        .filter(|l| is_rule(l))
        .map(|l| cells(l).iter().map(|c| c.ends_with(':')).collect())
        .unwrap_or_default();
    let class = |i: usize| {
        if right.get(i).copied().unwrap_or(false) {
            " class=\"num\""
        } else {
            ""
        }
    };
    let mut out = String::from("<table>\n<thead><tr>");
    for (i, h) in header.iter().enumerate() {
        out.push_str(&format!("<th{}>{}</th>", class(i), inline(h)));
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    let body = if right.is_empty() {
        &lines[1..]
    } else {
        &lines[2..]
    };
    for l in body {
        out.push_str("<tr>");
        for (i, c) in cells(l).iter().enumerate() {
            out.push_str(&format!("<td{}>{}</td>", class(i), inline(c)));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody></table>\n");
    out
}

/// The SVG of `![stem](stem.png)`, or a note when the report has none by that name.
fn image(line: &str, svgs: &BTreeMap<String, String>) -> String {
    let stem = line
        .trim_start_matches("![")
        .split(']')
        .next()
        .unwrap_or_default();
    match svgs.get(stem) {
        Some(svg) => format!(
            "<figure class=\"plots\" id=\"plot-{}\">{}<figcaption>{}</figcaption></figure>\n",
            escape(stem),
            strip_prolog(svg),
            escape(stem)
        ),
        None => format!("<p class=\"na\">plot {} not drawn</p>\n", escape(stem)),
    }
}

/// An SVG file's `<svg>` element, without an XML declaration or doctype before it.
fn strip_prolog(svg: &str) -> &str {
    svg.find("<svg").map_or(svg, |i| &svg[i..])
}

/// `report.md` as HTML; `svgs` maps a plot's stem to its SVG text.
pub fn to_html(markdown: &str, svgs: &BTreeMap<String, String>) -> String {
    let lines: Vec<&str> = markdown.lines().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < lines.len() {
        let l = lines[i];
        let t = l.trim();
        if t.is_empty() {
            i += 1;
        } else if let Some(h) = t.strip_prefix('#') {
            let level = 1 + h.chars().take_while(|c| *c == '#').count();
            let text = h.trim_start_matches('#').trim();
            // The page's own header says "navbench report"; sections start at h2.
            if level > 1 {
                let id: String = text
                    .chars()
                    .map(|c| {
                        if c.is_ascii_alphanumeric() {
                            c.to_ascii_lowercase()
                        } else {
                            '-'
                        }
                    })
                    .collect();
                out.push_str(&format!(
                    "<h{level} id=\"s-{id}\">{}</h{level}>\n",
                    inline(text)
                ));
            }
            i += 1;
        } else if t.starts_with('|') {
            let start = i;
            while i < lines.len() && lines[i].trim().starts_with('|') {
                i += 1;
            }
            out.push_str(&table(&lines[start..i]));
        } else if t.starts_with("![") {
            out.push_str(&image(t, svgs));
            // The "(also [x.svg](x.svg))" line under it names a file the page inlines.
            i += 1;
            if i < lines.len() && lines[i].trim().starts_with("(also ") {
                i += 1;
            }
        } else {
            let start = i;
            while i < lines.len()
                && !lines[i].trim().is_empty()
                && !lines[i].trim().starts_with(['|', '#'])
            {
                i += 1;
            }
            let text: Vec<String> = lines[start..i].iter().map(|l| inline(l.trim())).collect();
            out.push_str(&format!("<p>{}</p>\n", text.join(" ")));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_headings_paragraphs_and_plots() {
        let md = "# navbench report\n\n## Accuracy per variant\n\n| variant | n | File Acc@1 |\n|---|---:|---:|\n| **text** | 8 | 62.5 [25.0, 87.5] |\n\nNot scored: `x` <1>, see [a.svg](a.svg).\n\n## Plots\n\n![acc](acc.png)  \n(also [acc.svg](acc.svg))\n\n![gone](gone.png)  \n(also [gone.svg](gone.svg))\n";
        let mut svgs = BTreeMap::new();
        svgs.insert(
            "acc".to_string(),
            "<?xml version=\"1.0\"?>\n<svg width=\"1\"><text>a</text></svg>".to_string(),
        );
        let h = to_html(md, &svgs);
        assert!(!h.contains("<h1"), "{h}");
        assert!(h.contains("<h2 id=\"s-accuracy-per-variant\">"), "{h}");
        assert!(
            h.contains("<th class=\"num\">File Acc@1</th>")
                && h.contains("<td><b>text</b></td>")
                && h.contains("<td class=\"num\">62.5 [25.0, 87.5]</td>"),
            "{h}"
        );
        assert!(
            h.contains("<p>Not scored: <code>x</code> &lt;1&gt;, see a.svg.</p>"),
            "{h}"
        );
        assert!(
            h.contains("<svg width=\"1\"><text>a</text></svg>") && !h.contains("<?xml"),
            "{h}"
        );
        assert!(h.contains("plot gone not drawn"), "{h}");
        assert!(!h.contains("(also"), "{h}");
    }
}
