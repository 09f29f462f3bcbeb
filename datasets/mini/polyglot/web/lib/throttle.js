// Rate helpers for UI events: throttle and debounce.

/**
 * Calls `fn` at most once every `wait` milliseconds. A call that arrives while
 * waiting is remembered, and the last one runs when the wait ends, so the final
 * state is never lost.
 */
export function throttle(fn, wait) {
  let last = 0;
  let timer = null;
  let pending = null;
  function run() {
    last = Date.now();
    timer = null;
    const args = pending;
    pending = null;
    fn(...args);
  }
  return function throttled(...args) {
    const now = Date.now();
    if (now - last >= wait && timer === null) {
      pending = args;
      run();
      return;
    }
    if (timer === null) {
      timer = setTimeout(run, wait - (now - last));
    }
  };
}

/** Calls `fn` once `wait` milliseconds have passed without another call. */
export function debounce(fn, wait) {
  let timer = null;
  return function debounced(...args) {
    if (timer !== null) {
      clearTimeout(timer);
    }
    timer = setTimeout(() => {
      timer = null;
      fn(...args);
    }, wait);
  };
}
