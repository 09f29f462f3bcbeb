// The shopping cart of relay credits: line items, totals and coupons.

import { Coupon, CouponBook } from "./coupon";

/** One product in the cart. Prices are integer cents to avoid float drift. */
export interface LineItem {
  sku: string;
  title: string;
  priceCents: number;
  quantity: number;
}

/** Formats cents as a price string: `1234` → `"$12.34"`. */
export function formatCents(cents: number, currency = "$"): string {
  const sign = cents < 0 ? "-" : "";
  const abs = Math.abs(cents);
  const whole = Math.floor(abs / 100);
  const frac = String(abs % 100).padStart(2, "0");
  return `${sign}${currency}${whole}.${frac}`;
}

export class Cart {
  private items: Map<string, LineItem> = new Map();
  private coupon: Coupon | null = null;

  constructor(private readonly book: CouponBook) {}

  /** Adds `quantity` of an item, merging with a line of the same SKU. */
  add(item: Omit<LineItem, "quantity">, quantity = 1): void {
    if (quantity <= 0 || !Number.isInteger(quantity)) {
      throw new RangeError(`quantity must be a positive integer, got ${quantity}`);
    }
    const line = this.items.get(item.sku);
    if (line) {
      line.quantity += quantity;
    } else {
      this.items.set(item.sku, { ...item, quantity });
    }
  }

  /** Removes a line entirely; returns whether it was there. */
  remove(sku: string): boolean {
    return this.items.delete(sku);
  }

  lines(): LineItem[] {
    return [...this.items.values()];
  }

  /** The sum of every line's price times its quantity, before coupons. */
  subtotalCents(): number {
    let total = 0;
    for (const line of this.items.values()) {
      total += line.priceCents;
    }
    return total;
  }

  /** Applies a coupon code; unknown or expired codes throw. */
  applyCoupon(code: string, now: Date = new Date()): void {
    const coupon = this.book.lookup(code, now);
    if (!coupon) {
      throw new Error(`unknown or expired coupon: ${code}`);
    }
    this.coupon = coupon;
  }

  /** The discount the applied coupon gives on the current subtotal. */
  discountCents(): number {
    if (!this.coupon) {
      return 0;
    }
    const subtotal = this.subtotalCents();
    if (this.coupon.kind === "percent") {
      return Math.round((subtotal * this.coupon.amount) / 100);
    }
    return Math.min(subtotal, this.coupon.amount);
  }

  totalCents(): number {
    return this.subtotalCents() - this.discountCents();
  }

  summary(): string {
    const rows = this.lines().map(
      (l) => `${l.quantity} x ${l.title} @ ${formatCents(l.priceCents)}`,
    );
    rows.push(`total ${formatCents(this.totalCents())}`);
    return rows.join("\n");
  }
}
