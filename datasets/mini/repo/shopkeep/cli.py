"""Command line interface: ``python -m shopkeep.cli <command> ...``."""

import argparse
import logging
import os
import sys
from dataclasses import replace
from datetime import date

from . import __version__
from .config import load_settings
from .errors import ShopkeepError
from .inventory.stock import Warehouse
from .models.order import Order
from .models.product import Product
from .pricing.coupons import parse_coupon_spec
from .services.reports import sales_by_month, top_products, write_monthly_csv
from .storage import csvio
from .storage.jsonfile import JsonFileRepository
from .utils.dates import parse_date

DEFAULT_CONFIG = "shopkeep.ini"


def _products(settings):
    return JsonFileRepository(os.path.join(settings.data_dir, "products.json"),
                              Product, kind="product")


def _orders(settings):
    return JsonFileRepository(os.path.join(settings.data_dir, "orders.json"),
                              Order, kind="order")


def cmd_import_products(args, settings):
    repo = _products(settings)
    repo.autosave = False
    with open(args.csv, newline="", encoding="utf-8") as handle:
        report = csvio.import_products(handle, default_currency=settings.currency,
                                       strict=args.strict)
    for product in report.imported:
        repo.save(product)
    repo.flush()
    for line_no, message in report.errors:
        print(f"line {line_no}: {message}", file=sys.stderr)
    print(report.summary())
    return 0 if report.ok else 2


def cmd_export_products(args, settings):
    products = sorted(_products(settings).all(), key=lambda p: p.sku)
    if args.csv == "-":
        count = csvio.export_products(products, sys.stdout)
    else:
        with open(args.csv, "w", newline="", encoding="utf-8") as handle:
            count = csvio.export_products(products, handle)
    print(f"exported {count} products", file=sys.stderr)
    return 0


def cmd_import_stock(args, settings):
    warehouse = Warehouse(args.warehouse)
    with open(args.csv, newline="", encoding="utf-8") as handle:
        received = csvio.import_stock(handle, warehouse)
    print(f"{warehouse.code}: received {received} units across {len(warehouse.levels)} SKUs")
    low = warehouse.low_stock()
    if low:
        print("low stock: " + ", ".join(low))
    return 0


def cmd_report(args, settings):
    orders = list(_orders(settings).all())
    rows = sales_by_month(orders, currency=args.currency or settings.currency)
    if args.csv:
        write_monthly_csv(rows, sys.stdout)
        return 0
    for row in rows:
        print(f"{row.month}  {row.orders:5d} orders  {row.units:6d} units  "
              f"{row.revenue.format():>14}")
    print("\nTop products:")
    for sku, units in top_products(orders, limit=args.top):
        print(f"  {sku:<20} {units:6d}")
    return 0


def cmd_check_coupon(args, settings):
    coupon = parse_coupon_spec(args.spec, currency=settings.currency)
    day = parse_date(args.on) if args.on else date.today()
    state = "valid" if coupon.is_valid_on(day) else "NOT valid"
    print(f"{coupon.code} ({type(coupon.rule).__name__}) is {state} on {day.isoformat()}")
    return 0 if coupon.is_valid_on(day) else 1


COMMANDS = {
    "import-products": cmd_import_products,
    "export-products": cmd_export_products,
    "import-stock": cmd_import_stock,
    "report": cmd_report,
    "check-coupon": cmd_check_coupon,
}


def build_parser():
    parser = argparse.ArgumentParser(prog="shopkeep", description=__doc__)
    parser.add_argument("--version", action="version", version=f"shopkeep {__version__}")
    parser.add_argument("--config", default=DEFAULT_CONFIG, help="INI file to read")
    parser.add_argument("--data-dir", help="override the data directory")
    sub = parser.add_subparsers(dest="command", required=True)

    imp = sub.add_parser("import-products", help="import products from CSV")
    imp.add_argument("csv")
    imp.add_argument("--strict", action="store_true", help="abort on the first bad row")

    exp = sub.add_parser("export-products", help="export products to CSV")
    exp.add_argument("csv", nargs="?", default="-")

    stock = sub.add_parser("import-stock", help="apply a stock count CSV")
    stock.add_argument("csv")
    stock.add_argument("--warehouse", default="MAIN")

    report = sub.add_parser("report", help="monthly sales report")
    report.add_argument("--currency")
    report.add_argument("--top", type=int, default=10)
    report.add_argument("--csv", action="store_true")

    coupon = sub.add_parser("check-coupon", help="parse a coupon spec and check it")
    coupon.add_argument("spec")
    coupon.add_argument("--on", help="date to check (default: today)")
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)
    settings = load_settings(args.config)
    if args.data_dir:
        settings = replace(settings, data_dir=args.data_dir)
    logging.basicConfig(level=logging.DEBUG if settings.debug else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")
    try:
        return COMMANDS[args.command](args, settings)
    except ShopkeepError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
