// A tiny request router for the storefront's API: patterns with `:params`,
// method dispatch and a fallback handler.

/**
 * Compiles a pattern such as `/orders/:id/lines` into a regular expression and
 * the names of its parameters.
 */
export function compile(pattern) {
  const names = [];
  const source = pattern
    .split("/")
    .map((part) => {
      if (part.startsWith(":")) {
        names.push(part.slice(1));
        return "([^/]+)";
      }
      return part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    })
    .join("/");
  return { regex: new RegExp(`^${source}/?$`), names };
}

/** The parameters of `path` if it matches the compiled route, else null. */
export function matchPath(route, path) {
  const m = route.regex.exec(path);
  if (!m) {
    return null;
  }
  const params = {};
  route.names.forEach((name, i) => {
    params[name] = decodeURIComponent(m[i + 1]);
  });
  return params;
}

export class Router {
  constructor() {
    this.routes = [];
    this.fallback = null;
  }

  add(method, pattern, handler) {
    this.routes.push({ method: method.toUpperCase(), route: compile(pattern), handler });
    return this;
  }

  get(pattern, handler) {
    return this.add("GET", pattern, handler);
  }

  post(pattern, handler) {
    return this.add("POST", pattern, handler);
  }

  otherwise(handler) {
    this.fallback = handler;
    return this;
  }

  /** Finds the route for a request and calls its handler with the params. */
  handle(req, res) {
    const path = req.url.split("?")[0];
    const found = this.routes.find(
      (r) => r.method === req.method && matchPath(r.route, path) !== null,
    );
    const params = found ? matchPath(found.route, path) : {};
    const target = found || { handler: this.fallback };
    return target.handler(req, res, params);
  }
}
