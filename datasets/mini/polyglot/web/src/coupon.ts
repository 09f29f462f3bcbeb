// Coupon codes: parsing the printed form and looking codes up.

/** A percentage off the subtotal, or a fixed amount in cents. */
export type Coupon = {
  code: string;
  kind: "percent" | "fixed";
  amount: number;
  expires?: Date;
};

const CODE = /^([A-Z][A-Z0-9]{2,15})-(\d+)(%|C)$/;

/**
 * Parses a printed coupon such as `SPRING-15%` (15 percent off) or `WELCOME-500C`
 * (500 cents off). Returns null for anything else.
 */
export function parseCoupon(text: string, expires?: Date): Coupon | null {
  const match = CODE.exec(text.trim().toUpperCase());
  if (!match) {
    return null;
  }
  const amount = Number(match[2]);
  const kind = match[3] === "%" ? "percent" : "fixed";
  if (amount <= 0) {
    return null;
  }
  return { code: match[1], kind, amount, expires };
}

/** The coupons a shop has issued, by code. */
export class CouponBook {
  private coupons = new Map<string, Coupon>();

  issue(printed: string, expires?: Date): Coupon {
    const coupon = parseCoupon(printed, expires);
    if (!coupon) {
      throw new Error(`not a coupon: ${printed}`);
    }
    this.coupons.set(coupon.code, coupon);
    return coupon;
  }

  /** The coupon for `code` if it exists and has not expired at `now`. */
  lookup(code: string, now: Date): Coupon | null {
    const key = code.trim().toUpperCase().split("-")[0];
    const coupon = this.coupons.get(key);
    if (!coupon) {
      return null;
    }
    if (coupon.expires && coupon.expires.getTime() < now.getTime()) {
      return null;
    }
    return coupon;
  }

  size(): number {
    return this.coupons.size;
  }
}
