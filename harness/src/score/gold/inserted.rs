//! A method added to an existing class edits the class, as in LocAgent's published
//! gold.
//!
//! LocAgent's rules (see [`super::units`]) map an added line against the patched file,
//! so every line of a new method maps to that method, which did not exist: the method
//! is *added*, and by the script (`gen_oracle_locations.py`) its class only an added
//! module. LocAgent's published gold (`czlll/SWE-bench_Lite` `edit_functions`) lists
//! the class itself among the edited functions in every one of its seven instances
//! (of 274) that add a method to an existing class, whatever lies around the method:
//! after an unchanged blank line, right after the previous method's last line, between
//! two methods the patch also edits, at the end of the class.
//!
//! The rule: when an added line's unit is a method `C.m` that the base commit does not
//! have, and the base commit's file declares the type `C` ([`Structure::declares_type`]),
//! then `C` is edited. The method itself stays added (not an edited function). A new
//! class with methods edits nothing (`C` is not in the base commit); a top-level
//! function is no method. It holds for every language with a front end: `C` is the
//! method's container as gold names it (`Outer.Inner` for a Java inner class, the
//! receiver type for Go, the `impl`'s type for Rust; see [`super::lang`] for what a
//! file declares). Python's nested classes need nothing more: a line anywhere in a
//! nested class already counts for the outermost class ([`super::units`]).

use super::units::{GoldUnit, Structure};

/// The class an added line's `unit` makes edited by the rule in the module docs:
/// `unit` is a method the base commit (`old`) does not have, of a type `old` declares.
pub(super) fn class_edited_by_new_method(unit: &GoldUnit, old: &dyn Structure) -> Option<GoldUnit> {
    let GoldUnit::Method { class, .. } = unit else {
        return None;
    };
    if old.unit_exists(unit) || !old.declares_type(class) {
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

    class Line:
        def cost(self):
            return 1


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
 
     class Line:
         def cost(self):
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
    fn gold_method_after_an_unchanged_blank_line_edits_the_class() {
        // git's usual layout: the blank line after `add` is context and the new method
        // is separated from both neighbours by blank lines; the published gold still
        // lists the class.
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
        assert_eq!(g.locations.functions, ["pkg/shop.py:Cart"]);
        assert_eq!(g.locations.modules, ["pkg/shop.py:Cart"]);
        assert_eq!(g.added_functions, ["pkg/shop.py:Cart.count"]);
        assert_eq!(g.added_modules, ["pkg/shop.py:Cart"]);
    }

    #[test]
    fn gold_method_at_the_end_of_the_class_edits_the_class() {
        let patch = "\
--- a/pkg/shop.py
+++ b/pkg/shop.py
@@ -13,6 +13,9 @@ def clear(self):
         def cost(self):
             return 1
 
+    def empty(self):
+        return not self.items
+
 
 def make():
     return Cart()
";
        let g = derive(patch, SHOP);
        assert_eq!(g.locations.functions, ["pkg/shop.py:Cart"]);
        assert_eq!(g.added_functions, ["pkg/shop.py:Cart.empty"]);
    }

    #[test]
    fn gold_method_added_to_a_nested_class_edits_the_outer_class() {
        // A line in a nested class counts for the outermost class (ast.walk order).
        let patch = "\
--- a/pkg/shop.py
+++ b/pkg/shop.py
@@ -12,6 +12,9 @@ def clear(self):
     class Line:
         def cost(self):
             return 1
+
+        def tax(self):
+            return 0
 
 
 def make():
";
        let g = derive(patch, SHOP);
        assert_eq!(g.locations.functions, ["pkg/shop.py:Cart"]);
        assert_eq!(g.locations.modules, ["pkg/shop.py:Cart"]);
        assert!(g.added_functions.is_empty(), "{:?}", g.added_functions);
    }

    #[test]
    fn gold_new_class_with_methods_and_new_function_edit_nothing() {
        let patch = "\
--- a/pkg/shop.py
+++ b/pkg/shop.py
@@ -16,3 +16,14 @@ def cost(self):
 
 def make():
     return Cart()
+
+
+class Basket:
+    def add(self, item):
+        return item
+
+    def total(self):
+        return 0
+
+def empty():
+    return Cart()
";
        let g = derive(patch, SHOP);
        assert!(g.locations.functions.is_empty(), "{:?}", g.locations);
        assert!(g.locations.modules.is_empty(), "{:?}", g.locations);
        assert_eq!(
            g.added_functions,
            [
                "pkg/shop.py:Basket",
                "pkg/shop.py:Basket.add",
                "pkg/shop.py:Basket.total",
                "pkg/shop.py:empty"
            ]
        );
    }
}
