"""Retry helpers with exponential backoff for flaky collaborators.

Both decorators accept the same arguments; :func:`retry_async` is meant for
coroutine functions and sleeps with :func:`asyncio.sleep`.
"""

import asyncio
import functools
import logging
import random
import time

from ..errors import RetryExhausted

log = logging.getLogger(__name__)

DEFAULT_ATTEMPTS = 3
DEFAULT_BASE_DELAY = 0.1
DEFAULT_MAX_DELAY = 5.0


def backoff_delays(base=DEFAULT_BASE_DELAY, factor=2.0, max_delay=DEFAULT_MAX_DELAY,
                   jitter=0.0, rng=random.random):
    """Yield an endless sequence of delays: base, base*factor, ... capped.

    ``jitter`` is a fraction; each delay is scaled by a random factor in
    ``[1 - jitter, 1 + jitter]``.
    """
    delay = base
    while True:
        scale = 1.0 + jitter * (2 * rng() - 1) if jitter else 1.0
        yield min(delay * scale, max_delay)
        delay = min(delay * factor, max_delay)


def retry(max_attempts=DEFAULT_ATTEMPTS, *, retry_on=(Exception,),
          base_delay=DEFAULT_BASE_DELAY, factor=2.0, max_delay=DEFAULT_MAX_DELAY,
          jitter=0.0, sleep=time.sleep):
    """Retry the decorated function up to ``max_attempts`` times in total.

    Only exceptions matching ``retry_on`` trigger a retry; once the attempts
    are used up :class:`~shopkeep.errors.RetryExhausted` is raised, chained to
    the last error.
    """
    if max_attempts < 1:
        raise ValueError("max_attempts must be at least 1")

    def decorator(fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            delays = backoff_delays(base_delay, factor, max_delay, jitter)
            attempt = 0
            while True:
                attempt += 1
                try:
                    return fn(*args, **kwargs)
                except retry_on as exc:
                    if attempt > max_attempts:
                        raise RetryExhausted(attempt, exc) from exc
                    delay = next(delays)
                    log.warning("%s failed (%s); retry %d in %.2fs",
                                fn.__qualname__, exc, attempt, delay)
                    sleep(delay)
        return wrapper

    return decorator


def retry_async(max_attempts=DEFAULT_ATTEMPTS, *, retry_on=(Exception,),
                base_delay=DEFAULT_BASE_DELAY, factor=2.0, max_delay=DEFAULT_MAX_DELAY,
                jitter=0.0, sleep=asyncio.sleep):
    """Coroutine flavour of :func:`retry`."""
    if max_attempts < 1:
        raise ValueError("max_attempts must be at least 1")

    def decorator(fn):
        @functools.wraps(fn)
        async def wrapper(*args, **kwargs):
            delays = backoff_delays(base_delay, factor, max_delay, jitter)
            attempt = 0
            while True:
                attempt += 1
                try:
                    return await fn(*args, **kwargs)
                except retry_on as exc:
                    if attempt > max_attempts:
                        raise RetryExhausted(attempt, exc) from exc
                    delay = next(delays)
                    log.warning("%s failed (%s); retry %d in %.2fs",
                                fn.__qualname__, exc, attempt, delay)
                    await sleep(delay)
        return wrapper

    return decorator
