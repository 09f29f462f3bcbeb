//! A method inserted into an existing class as part of the edit of the method before
//! it: the class itself counts as edited, as in LocAgent's published gold.
//!
//! LocAgent's rules (see [`super::units`]) map an added line against the patched file,
//! so every line of a new method maps to that method, which did not exist: the method
//! is *added* and its class an added module, not an edited one. That holds for the
//! common shape git writes, where an unchanged blank line separates the new method
//! from the method before it. LocAgent's published gold (`czlll/SWE-bench_Lite`
//! `edit_functions`) lists the class itself as edited in two shapes where git attaches
//! the new method to the previous method's lines instead:
//! - a `def` inserted directly after an existing method's last line, in a hunk whose
//!   header and leading context belong to that method;
//! - a helper inserted between two methods the patch also edits (the run of added
//!   lines that holds the helper starts right after the replaced last line of the
//!   method before it).
//!
//! The rule covering both: when a run of added lines holds a line of a new direct
//! method of class `C`, `C` exists at the base commit, and the line just before the
//! run (context or deleted) is the last line of an existing direct method of `C`, then
//! `C` is edited. The new method itself stays added. LocAgent's script as published
//! (`gen_oracle_locations.py`) gives `added` in both shapes; which step of the pipeline
//! behind the published gold does otherwise is not in the repository, so this rule is
//! fitted to those shapes and no wider: a method appended after an unchanged blank line
//! is still only added.

use super::units::{GoldUnit, Structure};
use crate::data::patch::{Hunk, LineKind};

/// For each line of `hunk`: when it is an added line, the old line number (shifted by
/// the hunk's `offset`) of the context or deleted line just before its run of added
/// lines; `None` for other lines and for a run that opens the hunk.
pub(super) fn run_anchors(hunk: &Hunk, offset: isize) -> Vec<Option<usize>> {
    let mut anchors = Vec::with_capacity(hunk.lines.len());
    let mut anchor: Option<usize> = None;
    for line in &hunk.lines {
        match line.kind {
            LineKind::Add => anchors.push(anchor),
            LineKind::Context | LineKind::Delete => {
                anchors.push(None);
                anchor = line
                    .old_line
                    .and_then(|n| n.checked_add_signed(offset))
                    .filter(|&n| n > 0);
            }
        }
    }
    anchors
}

/// The class an added line's `unit` makes edited by the rule in the module docs: `unit`
/// is a method the base commit (`old`) does not have, and `anchor` (from
/// [`run_anchors`]) is the last line of an existing method of the same class.
pub(super) fn class_edited_by_insertion(
    unit: &GoldUnit,
    anchor: Option<usize>,
    old: &dyn Structure,
) -> Option<GoldUnit> {
    let GoldUnit::Method { class, .. } = unit else {
        return None;
    };
    let anchor = anchor?;
    if old.unit_exists(unit) || !old.method_ends_at(class, anchor) {
        return None;
    }
    Some(GoldUnit::Class {
        class: class.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::super::{GoldDerivation, derive_gold};

    fn derive(patch: &str, text: &str) -> GoldDerivation {
        derive_gold(patch, &|p: &str| {
            (p == "pkg/shop.py").then(|| text.to_string())
        })
        .expect("gold derives")
    }

    const SHOP: &str = "\
class Cart:
    def add(self, item):
        self.items.append(item)
        return self

    def total(self):
        return sum(self.items)

    def clear(self):
        self.items = []


def make():
    return Cart()
";

    #[test]
    fn gold_def_inserted_right_after_a_methods_last_line_edits_the_class() {
        // The hunk's header and context lines belong to `add`; the new method follows
        // its last line with no unchanged line in between.
        let patch = "\
--- a/pkg/shop.py
+++ b/pkg/shop.py
@@ -2,6 +2,9 @@ class Cart:
     def add(self, item):
         self.items.append(item)
         return self
+
+    def count(self):
+        return len(self.items)
 
     def total(self):
         return sum(self.items)
";
        let g = derive(patch, SHOP);
        assert_eq!(g.locations.functions, ["pkg/shop.py:Cart"]);
        assert_eq!(g.locations.modules, ["pkg/shop.py:Cart"]);
        assert_eq!(g.added_functions, ["pkg/shop.py:Cart.count"]);
    }

    #[test]
    fn gold_helper_between_two_edited_methods_edits_the_class() {
        let patch = "\
--- a/pkg/shop.py
+++ b/pkg/shop.py
@@ -4,10 +4,13 @@ def add(self, item):
         return self
 
     def total(self):
-        return sum(self.items)
+        return self._sum()
+
+    def _sum(self):
+        return sum(i.price for i in self.items)
 
     def clear(self):
-        self.items = []
+        self.items.clear()
 
 
 def make():
";
        let g = derive(patch, SHOP);
        assert_eq!(
            g.locations.functions,
            [
                "pkg/shop.py:Cart.total",
                "pkg/shop.py:Cart.clear",
                "pkg/shop.py:Cart"
            ]
        );
        assert_eq!(g.locations.modules, ["pkg/shop.py:Cart"]);
        assert_eq!(g.added_functions, ["pkg/shop.py:Cart._sum"]);
    }

    #[test]
    fn gold_method_after_an_unchanged_blank_line_stays_added() {
        // git's usual layout: the blank line after `add` is context, so the new method
        // is not attached to `add`'s lines; nothing existing is edited.
        let patch = "\
--- a/pkg/shop.py
+++ b/pkg/shop.py
@@ -3,6 +3,9 @@ def add(self, item):
         self.items.append(item)
         return self
 
+    def count(self):
+        return len(self.items)
+
     def total(self):
         return sum(self.items)
 
";
        let g = derive(patch, SHOP);
        assert!(g.locations.functions.is_empty(), "{:?}", g.locations);
        assert!(g.locations.modules.is_empty(), "{:?}", g.locations);
        assert_eq!(g.added_functions, ["pkg/shop.py:Cart.count"]);
        assert_eq!(g.added_modules, ["pkg/shop.py:Cart"]);
    }

    #[test]
    fn gold_new_function_after_a_methods_last_line_edits_nothing() {
        // A top-level function (not a method of `Cart`) appended after the class.
        let patch = "\
--- a/pkg/shop.py
+++ b/pkg/shop.py
@@ -8,6 +8,9 @@ def total(self):
 
     def clear(self):
         self.items = []
+
+def empty():
+    return Cart()
 
 
 def make():
";
        let g = derive(patch, SHOP);
        assert!(g.locations.functions.is_empty(), "{:?}", g.locations);
        assert_eq!(g.added_functions, ["pkg/shop.py:empty"]);
    }
}
