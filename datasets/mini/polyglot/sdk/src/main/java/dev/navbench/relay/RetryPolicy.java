package dev.navbench.relay;

/** Exponential backoff with a cap: how long to wait before each retry. */
public final class RetryPolicy {
    private final long baseMillis;
    private final long maxMillis;
    private final int maxAttempts;

    public RetryPolicy(long baseMillis, long maxMillis, int maxAttempts) {
        if (baseMillis <= 0 || maxMillis < baseMillis || maxAttempts < 1) {
            throw new IllegalArgumentException("need 0 < base <= max and at least one attempt");
        }
        this.baseMillis = baseMillis;
        this.maxMillis = maxMillis;
        this.maxAttempts = maxAttempts;
    }

    public static RetryPolicy defaults() {
        return new RetryPolicy(100, 30_000, 50);
    }

    public boolean shouldRetry(int attempt) {
        return attempt < maxAttempts;
    }

    /** The delay before retry number `attempt` (1-based): base * 2^(attempt-1), capped. */
    public long nextDelay(int attempt) {
        long delay = baseMillis * (1 << (attempt - 1));
        return Math.min(delay, maxMillis);
    }
}
