//! What the harness's integration tests share: the tiny shop application they put in
//! a git repository, the patch that is its gold, and the `navbench` binary under test.

#![allow(dead_code)] // each test file uses its own part of what is shared here

use std::process::Command;

pub mod cli_model;
pub mod endpoint;
pub mod providers;
pub mod replay;
pub mod repo;

/// `shop/store.py` as the test repositories hold it.
pub const APP: &str = "\
import json


class Store:
    def __init__(self, path):
        self.path = path
        self.items = {}

    def load(self):
        with open(self.path) as fh:
            self.items = json.load(fh)
        return self.items

    def total_price(self):
        total = 0
        for item in self.items.values():
            total += item['price']
        return total


def format_price(value):
    return '%.2f' % value
";

/// The fix of `Store.total_price` (gold: `shop/store.py:Store.total_price`).
pub const PATCH: &str = "\
diff --git a/shop/store.py b/shop/store.py
--- a/shop/store.py
+++ b/shop/store.py
@@ -15,7 +15,7 @@ def load(self):
     def total_price(self):
         total = 0
         for item in self.items.values():
-            total += item['price']
+            total += item['price'] * item.get('quantity', 1)
         return total
 
 
";

pub fn navbench() -> Command {
    Command::new(env!("CARGO_BIN_EXE_navbench"))
}
